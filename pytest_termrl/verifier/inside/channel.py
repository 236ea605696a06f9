"""The signed result channel: the trusted runners' sending end and the harness's check of it.

The runners (runner.py, script_runner.py) key, sign and send with it; the harness checks
what came back with :func:`authenticated_body`, so the envelope is defined in one place.
Standard library only: it runs inside the verifier sandbox with ``python -I``, next to the
runners, and imports nothing from pytest_termrl or the workspace.
"""

from __future__ import annotations

import ctypes
import hashlib
import hmac
import json
import os
from typing import Any

PR_SET_DUMPABLE = 4


def non_dumpable() -> bool:
    """Make /proc/<pid>/fd and /proc/<pid>/mem of this process root's alone; True if it worked.

    Code the graders run as the same uid (an agent's script, a git hook in the agent's
    repository) could otherwise read the key from memory or write to the result pipe.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def read_key() -> bytes:
    """The MAC key, read once from its pipe, which is then closed."""
    key_fd = int(os.environ.pop("TERMRL_SECRET_FD"))
    key = b""
    while True:
        chunk = os.read(key_fd, 4096)
        if not chunk:
            break
        key += chunk
    os.close(key_fd)
    return key


def result_fd() -> int:
    """The result pipe, kept from every child process."""
    fd = int(os.environ.pop("TERMRL_RESULT_FD"))
    os.set_inheritable(fd, False)
    return fd


def send_signed(fd: int, key: bytes, body: dict[str, Any]) -> None:
    """Write {body, mac} as one JSON line and close the pipe."""
    text = json.dumps(body, sort_keys=True)
    mac = hmac.new(key, text.encode(), hashlib.sha256).hexdigest()
    view = memoryview(json.dumps({"body": text, "mac": mac}).encode() + b"\n")
    while view:
        view = view[os.write(fd, view):]
    os.close(fd)


def authenticated_body(payload: bytes, key: bytes) -> Any:
    """The body ``send_signed`` wrote under ``key``, or None for anything else (forged, torn, empty)."""
    try:
        envelope = json.loads(payload.decode().strip().splitlines()[0])
        body, mac = envelope["body"], envelope["mac"]
    except (ValueError, KeyError, IndexError, TypeError, UnicodeDecodeError):
        return None
    expected = hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
    if not isinstance(mac, str) or not hmac.compare_digest(mac, expected):
        return None
    return json.loads(body)
