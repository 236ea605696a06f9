"""Where a task puts its agent on the machine: its user and its workdir, checked once for every task format.

A bad value is a :class:`TaskFormatError` naming the file and the field when the task is
loaded, not a sandbox that fails in every episode: an id the sandboxes cannot map, a path
that climbs with ``..``, a workdir inside the folders every sandbox owns (``/proc``, ``/sys``,
``/dev``) or one that is a system folder itself.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from ..errors import TaskFormatError

INSIDE_IDS = 65536
"""How many ids a sandbox's user namespace maps (0 .. 65535 inside), as an image's own users and groups use them."""

_PART = r"(?:[A-Za-z_][A-Za-z0-9_.-]{0,31}|\d+)"
_USER = re.compile(f"{_PART}(?::{_PART})?")
"""An account name or a UID, and optionally a group name or GID after a colon, as an engine's ``--user`` takes it."""
_OWN = ("/proc", "/sys", "/dev")
"""The sandbox's own folders: never the machine's files, never a workdir."""
_SYSTEM = ("/", "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/run", "/var")
"""Folders that are the system itself: a task's files copied there would land on top of it."""


def numeric_id_problem(value: str) -> str | None:
    """Why a UID[:GID] cannot be mapped in a sandbox (None: it can)."""
    for part in value.split(":"):
        if part.isdigit() and int(part) >= INSIDE_IDS:
            return f"id {part} is past the {INSIDE_IDS} ids a sandbox maps (0-{INSIDE_IDS - 1})"
    return None


def checked_user(where: Path | str, field: str, value: object) -> str:
    """A user as a task names it: an account name, or UID[:GID] within the mapped ids (an int is a UID)."""
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not _USER.fullmatch(text):
        raise TaskFormatError(where, field, f"expected an account name (root, user, a system account) or UID[:GID], got {value!r}")
    problem = numeric_id_problem(text)
    if problem is not None:
        raise TaskFormatError(where, field, f"expected a UID[:GID] below {INSIDE_IDS}: {problem}")
    return text


def checked_workdir(where: Path | str, field: str, value: object) -> str:
    """A workdir as a task names it, normalised (no trailing slash): absolute, no ``..``, not a system or sandbox folder."""
    expected = "expected an absolute path outside the system folders (say /app or /workspace)"
    if not isinstance(value, str) or not value.startswith("/") or "\0" in value:
        raise TaskFormatError(where, field, f"{expected}, got {value!r}")
    parts = PurePosixPath(value).parts
    if ".." in parts:
        raise TaskFormatError(where, field, f"{expected}, without '..', got {value!r}")
    path = str(PurePosixPath(*parts))
    if path in _SYSTEM or any(path == own or path.startswith(own + "/") for own in _OWN):
        raise TaskFormatError(where, field, f"{expected}, got {value!r}")
    return path
