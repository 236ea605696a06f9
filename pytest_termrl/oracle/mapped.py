"""Which files the agent's processes hold mapped shared and writable (from /proc/PID/maps).

A store through such a mapping changes the file's bytes with no write call: no inotify
event, and no new mtime or ctime once the page is dirty. The oracle re-reads these
files after every command, and once more after the mapping is gone.
"""

from __future__ import annotations

from collections.abc import Iterable


def writable_shared_inodes(pids: Iterable[int]) -> set[int]:
    """Inode numbers of files mapped with write and share rights by any of ``pids``.

    Only inode numbers (the device is left out on purpose: a false match costs one
    re-read, a miss would cost exactness). A process gone meanwhile is skipped.
    """
    inodes: set[int] = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps", "rb") as handle:
                text = handle.read()
        except OSError:
            continue
        for line in text.splitlines():
            # address perms offset dev inode [path]; perms like "rw-s".
            fields = line.split(None, 5)
            if len(fields) < 5:
                continue
            perms = fields[1]
            if len(perms) >= 4 and perms[1:2] == b"w" and perms[3:4] == b"s":
                inode = int(fields[4])
                if inode:
                    inodes.add(inode)
    return inodes
