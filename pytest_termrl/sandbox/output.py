"""Cap a command's output the way a terminal agent should see it: head and tail, cut marked."""

from __future__ import annotations

import errno
import os
import stat

_CONTROL = {c: "?" for c in range(32) if chr(c) not in "\n\t"}


def clean_text(data: bytes) -> str:
    """Bytes as the agent sees them: UTF-8 (bad bytes replaced), control characters but newline and tab as ?."""
    return data.decode("utf-8", errors="replace").translate(_CONTROL)


REPLACED_OUTPUT = "[no output: the command replaced its output file]"
"""What the agent sees when its command left a link, FIFO or folder where its output was going."""


def read_capped(path: str, cap_chars: int) -> tuple[str, bool]:
    """Read at most about cap_chars of a file: its head and tail, with the cut marked.

    A link is never followed and a FIFO never waited on: both read as :data:`REPLACED_OUTPUT`.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return (REPLACED_OUTPUT if exc.errno == errno.ELOOP else ""), False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return REPLACED_OUTPUT, False
        size = info.st_size
        if size <= cap_chars:
            return clean_text(os.pread(fd, size, 0)), False
        half = cap_chars // 2
        # Four bytes per character at most, so the decoded halves still hold `half` characters.
        tail_start = max(0, size - half * 4)
        return join_head_tail(os.pread(fd, half * 4, 0), os.pread(fd, size - tail_start, tail_start), size, cap_chars), True
    finally:
        os.close(fd)


def join_head_tail(head: bytes, tail: bytes, size: int, cap_chars: int) -> str:
    """A too-long output as the agent sees it: head, a line saying how much was cut, tail."""
    half = cap_chars // 2
    head_text = clean_text(head)[:half]
    tail_text = clean_text(tail)[-half:]
    cut = size - len(head_text.encode()) - len(tail_text.encode())
    return f"{head_text}\n[... {cut} bytes of output cut ...]\n{tail_text}"
