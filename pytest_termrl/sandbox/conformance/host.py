"""The host's view of a sandbox: its processes, found by a marker in their command line."""

from __future__ import annotations

import os
import secrets
import time

from ..proctree import proc_files


def unique_sleep() -> str:
    """A sleep duration no other process on the host uses, to find it in /proc."""
    return f"9{secrets.randbelow(10**8):08d}"


def host_pids_with(marker: str) -> list[int]:
    """Host pids whose command line holds ``marker`` (the test process itself excluded)."""
    me = os.getpid()
    needle = marker.encode()
    return [pid for pid, cmdline in proc_files("cmdline") if pid != me and needle in cmdline.replace(b"\0", b" ")]


def host_pids_appearing(marker: str, count: int = 1, timeout_s: float = 10.0) -> list[int]:
    """Host pids with ``marker``, waiting for at least ``count`` of them: a command that starts a
    background job returns before that job's ``exec`` has shown the marker in its command line."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = host_pids_with(marker)
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)
