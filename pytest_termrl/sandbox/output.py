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
        tail_start = max(0, size - half * 4)
        return join_head_tail(os.pread(fd, half * 4, 0), os.pread(fd, size - tail_start, tail_start), size, cap_chars), True
    finally:
        os.close(fd)


def join_head_tail(head: bytes, tail: bytes, size: int, cap_chars: int) -> str:
    """A too-long output as the agent sees it: head, a line saying how much was cut, tail."""
    half = cap_chars // 2
    head_text = _clean(head)[:half]
    tail_text = _clean(tail)[-half:]
    cut = size - len(head_text.encode()) - len(tail_text.encode())
    return f"{head_text}\n[... {cut} bytes of output cut ...]\n{tail_text}"
