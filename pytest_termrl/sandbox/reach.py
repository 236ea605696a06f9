"""The agent's workdir as the harness reaches it from the host, to break it on purpose and check it.

A native sandbox's home is a host folder. A whole-machine sandbox's workdir lives in its overlays,
mounted in the sandbox's own mount namespace (bwrap, reached through ``/proc/PID/root``) or under
the engine's merged folder (docker). An absolute link on the way there would resolve against the
host's root, not the machine's, so the way in is walked one component at a time without following
a link (:class:`Anchored`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


@dataclass(frozen=True)
class Anchored:
    """A folder below ``root`` (another machine's root as the host sees it), reached without following links."""

    root: str
    parts: tuple[str, ...]

    @classmethod
    def at(cls, root: str | Path, inside: str) -> Anchored:
        """``inside`` (an absolute path of the machine) below ``root``."""
        parts = tuple(p for p in inside.split("/") if p not in ("", "."))
        if ".." in parts:
            raise ValueError(f"not a plain path of the machine: {inside!r}")
        return cls(os.fspath(root), parts)

    def __fspath__(self) -> str:
        return "/".join((self.root.rstrip("/"), *self.parts))

    def open(self) -> int:
        """A directory descriptor on the folder; OSError when a component is a link, absent or not a folder."""
        fd = os.open(self.root, _DIR_FLAGS)  # the root itself may be a magic link (/proc/PID/root): followed on purpose
        try:
            for part in self.parts:
                nfd = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = nfd
        except BaseException:
            os.close(fd)
            raise
        return fd


HostHome = Path | Anchored
"""Where the harness finds the agent's workdir: a host folder, or one inside a machine's root."""


@dataclass(frozen=True)
class ReachedHome:
    """The agent's workdir, for the harness's file operations while the sandbox lives."""

    path: HostHome
    uid: int
    """The host id that owns what the agent's user owns (its own id, or the id it maps to outside)."""
    gid: int
    workdir: str
    """The folder as the agent sees it, for the commands that name its files."""
    root: bool = False
    """Whether the agent is root inside, whose privileges a mode change does not stop."""
