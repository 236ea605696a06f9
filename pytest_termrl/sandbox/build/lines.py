"""A Dockerfile's physical lines, comments and continuations, as BuildKit scans them.

[parser/parser.go: Parse, scanLines, trimContinuationCharacter, isComment]

- Lines end at ``\\n`` only; a UTF-8 BOM is dropped from the first line; every ``\\r`` and
  ``\\n`` at a line's end is trimmed before it is read (CRLF files read as LF files).
- A line whose first non-blank character is ``#`` is a comment. A ``#`` later in a line is
  no comment.
- A line continues when it ends in the escape character (``\\``, or `````` after
  ``# escape=```````), spaces and tabs after it allowed, unless the character before it is
  the escape character too; the escape and what follows it are cut, nothing else: the next
  line is joined as written (its leading whitespace kept), so ``a \\`` + ``  b`` is
  ``a   b``.

Heredoc bodies read the same lines, so these are shared by the parser and heredocs.py.
"""

from __future__ import annotations

import re

from .go_text import lstrip

__all__ = ["continuation", "is_comment", "physical_lines", "trim_continuation", "trim_newline"]


def trim_newline(line: str) -> str:
    return line.rstrip("\r\n")


def is_comment(line: str) -> bool:
    return lstrip(line).startswith("#")


def physical_lines(text: str) -> list[str]:
    """The lines with their ``\\n`` kept (scanLines), the BOM dropped from the first."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    return lines


def _continuation(escape: str) -> re.Pattern[str]:
    """The escape as the last character but spaces and tabs, not itself escaped, or alone on the line."""
    e = re.escape(escape)
    return re.compile(rf"([^{e}]){e}[ \t]*\Z|^{e}[ \t]*\Z")


_CONTINUATION = {escape: _continuation(escape) for escape in ("\\", "`")}


def continuation(escape: str) -> re.Pattern[str]:
    """The pattern of a line continued with ``escape`` (``\\`` or `````)."""
    return _CONTINUATION[escape]


def trim_continuation(line: str, pattern: re.Pattern[str]) -> tuple[str, bool]:
    """(the line without its continuation escape, whether the instruction ends here)."""
    if not pattern.search(line):
        return line, True
    return pattern.sub(lambda m: m.group(1) or "", line), False
