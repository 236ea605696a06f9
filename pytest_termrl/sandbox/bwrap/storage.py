"""The upper layers' own file system: a tmpfs of the task's storage size, so a sandbox that fills it fills nothing else.

A whole-machine sandbox writes only into its upper layers (and their overlays' work
folders, which must share their file system). They live on one tmpfs per sandbox whose
size is the task's ``storage_mb`` (else the settings' ``storage_bytes``): past it a write
fails with "No space left on device" inside, the host's disk and memory never fill, and
the episode ends with its own end reason (``storage_limit``).
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from ...errors import SandboxError
from .idmap import unmount

_MS_REMOUNT = 32
FULL_BELOW_BYTES = 1 << 20
"""Free space under which the upper layers count as full (a write of any size may fail there)."""


def _mount(target: Path, flags: int, size_bytes: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    data = f"size={size_bytes},mode=0711,nr_inodes={max(size_bytes // 4096, 1024)}".encode()
    if libc.mount(b"termrl-upper", os.fsencode(str(target)), b"tmpfs", ctypes.c_ulong(flags), data) != 0:
        errno = ctypes.get_errno()
        raise SandboxError(f"could not mount the upper layers' tmpfs at {target}: {os.strerror(errno)}")


class UpperStorage:
    """A tmpfs at ``path`` holding a sandbox's upper layers, ``size_bytes`` big."""

    def __init__(self, path: Path, size_bytes: int) -> None:
        path.mkdir(mode=0o711)
        _mount(path, 0, size_bytes)
        self.path = path
        self.size_bytes = size_bytes

    def resize(self, size_bytes: int) -> None:
        """Give the task its own size (before anything is written)."""
        _mount(self.path, _MS_REMOUNT, size_bytes)
        self.size_bytes = size_bytes

    def exhausted(self) -> bool:
        st = os.statvfs(self.path)
        return st.f_bavail * st.f_frsize < FULL_BELOW_BYTES or st.f_favail == 0

    def used_bytes(self) -> int:
        st = os.statvfs(self.path)
        return (st.f_blocks - st.f_bfree) * st.f_frsize

    def release(self) -> None:
        unmount(self.path)
