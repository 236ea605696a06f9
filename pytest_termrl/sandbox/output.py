"""Cap a command's output the way a terminal agent should see it: head and tail, cut marked."""

from __future__ import annotations

import os
import stat

_CONTROL = {c: "?" for c in range(32) if chr(c) not in "\n\t"}


def _clean(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").translate(_CONTROL)


def read_capped(path: str, cap_chars: int) -> tuple[str, bool]:
    """Read at most about cap_chars of a file: its head and tail, with the cut marked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return "", False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "[no output: the command replaced its output file]", False
        size = info.st_size
        if size <= cap_chars:
            return _clean(os.pread(fd, size, 0)), False
        half = cap_chars // 2
        # Four bytes per character at most, so the decoded halves still hold `half` characters.
        head = _clean(os.pread(fd, half * 4, 0))[:half]
        tail_start = max(0, size - half * 4)
        tail = _clean(os.pread(fd, size - tail_start, tail_start))[-half:]
        cut = size - len(head.encode()) - len(tail.encode())
        return f"{head}\n[... {cut} bytes of output cut ...]\n{tail}", True
    finally:
        os.close(fd)
