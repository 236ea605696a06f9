"""A file's digest whose cost follows the bytes the file holds, not the length it claims.

An agent can make a file of any length in a moment (``truncate -s 255M``, many times over)
without writing a byte: a plain sha256 would read every hole as zeros, for hours, after the
command. A file past :data:`BLOCKED_ABOVE` is digested by 1 MiB blocks instead: each block
that holds data is hashed, a run of all-zero blocks (a hole, or zeros written out) counts as
its length, and holes are skipped with ``SEEK_DATA``. The digest depends on the bytes alone,
never on how they are stored, so a copy with its holes filled reads the same. Smaller files
keep the plain sha256 of their bytes.
"""

from __future__ import annotations

import errno
import hashlib
import os

BLOCK = 1 << 20
BLOCKED_ABOVE = 16 << 20
"""Files longer than this are digested by blocks (their digest starts ``blocks:``)."""
_ZERO = bytes(BLOCK)


def digest_fd(fd: int, size: int) -> tuple[str, int]:
    """(digest, bytes covered) of the first ``size`` bytes of the open regular file ``fd``; stops early at its end."""
    if size <= BLOCKED_ABOVE:
        digest = hashlib.sha256()
        left = size
        while left > 0:
            chunk = os.read(fd, min(left, BLOCK))
            if not chunk:
                break
            digest.update(chunk)
            left -= len(chunk)
        return digest.hexdigest(), size - left
    return _blocked(fd, size)


def _blocked(fd: int, size: int) -> tuple[str, int]:
    outer = hashlib.sha256(b"termrl-blocks\0%d\0" % size)
    zeros = 0  # all-zero blocks not yet written into the digest
    offset = 0
    while offset < size:
        data = _next_data(fd, offset, size)
        if data >= size:
            zeros += (size - offset + BLOCK - 1) // BLOCK
            break
        hole_blocks = (data - offset) // BLOCK
        zeros += hole_blocks
        offset += hole_blocks * BLOCK
        chunk = os.pread(fd, min(BLOCK, size - offset), offset)
        if not chunk:  # the file shrank under the read: what it held is covered up to here
            size = offset
            break
        if chunk == _ZERO[:len(chunk)]:
            zeros += 1
        else:
            if zeros:
                outer.update(b"Z%d\0" % zeros)
                zeros = 0
            outer.update(b"D" + hashlib.sha256(chunk).digest())
        offset += len(chunk)
    if zeros:
        outer.update(b"Z%d\0" % zeros)
    return "blocks:" + outer.hexdigest(), size


def _next_data(fd: int, offset: int, size: int) -> int:
    """Where the next bytes of data begin at or after ``offset`` (``size`` when only a hole is left)."""
    try:
        return os.lseek(fd, offset, os.SEEK_DATA)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            return size
        return offset  # a file system without SEEK_DATA: read on
