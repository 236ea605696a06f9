"""Kernel file events on folders, through inotify (libc via ctypes, no extra package).

Only what the collateral oracle needs: watch a folder given as an open descriptor (so the
watch lands on the very inode that was checked, whatever the agent renames meanwhile),
and drain the queued events without blocking. An overflowed queue is reported as such,
never dropped silently: the caller then walks the whole home instead.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
from dataclasses import dataclass

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

CHANGES = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
           | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)
"""Every event that can follow a change to a name, its bytes or its inode's properties."""
STRUCTURE = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO
"""Events that add or remove a name (with IN_ISDIR: a whole subtree)."""

_HEADER = struct.Struct("iIII")
_BUFFER = 1 << 20

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_libc.inotify_init1.argtypes = [ctypes.c_int]
_libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]


class WatchError(OSError):
    """A watch could not be placed (limits reached, inotify missing): the caller walks instead."""


@dataclass(frozen=True, slots=True)
class Event:
    wd: int
    mask: int
    cookie: int
    name: str
    """Decoded with os.fsdecode, "" for an event about the watched folder itself."""


class Inotify:
    """One inotify instance: a non-blocking descriptor, closed by :meth:`close`."""

    def __init__(self) -> None:
        self.fd = -1
        fd = _libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            code = ctypes.get_errno()
            raise WatchError(code, f"inotify_init1: {os.strerror(code)}")
        self.fd = fd

    def watch_fd(self, dir_fd: int, mask: int = CHANGES) -> int:
        """Watch the folder open at ``dir_fd``; returns its watch descriptor (the same one again
        for a folder already watched)."""
        path = f"/proc/self/fd/{dir_fd}".encode()
        wd = _libc.inotify_add_watch(self.fd, path, mask | IN_ONLYDIR)
        if wd < 0:
            code = ctypes.get_errno()
            raise WatchError(code, f"inotify_add_watch: {os.strerror(code)}")
        return wd

    def read(self) -> list[Event]:
        """Every event queued now (an empty list when none)."""
        events: list[Event] = []
        unpack, size = _HEADER.unpack_from, _HEADER.size
        while True:
            try:
                data = os.read(self.fd, _BUFFER)
            except BlockingIOError:
                return events
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                raise
            if not data:
                return events
            offset, end = 0, len(data)
            while offset < end:
                wd, mask, cookie, length = unpack(data, offset)
                start = offset + size
                raw = data[start:start + length].split(b"\0", 1)[0]
                events.append(Event(wd, mask, cookie, os.fsdecode(raw) if raw else ""))
                offset = start + length

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        # Instances are few per user (fs.inotify.max_user_instances): never leak one.
        self.close()
