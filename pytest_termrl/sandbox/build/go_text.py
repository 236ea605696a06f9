"""Go's whitespace and digits (``unicode.IsSpace``, ``unicode.IsDigit``), by which BuildKit splits and trims.

Python's ``str.isspace`` and ``str.isdigit`` do not match them exactly, so the parser, the
argument splitters and the shell lexer all ask here.
"""

from __future__ import annotations

import unicodedata

__all__ = ["is_digit", "is_space", "lstrip", "strip"]

_GO_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                      "\u2028\u2029\u202f\u205f\u3000")


def is_space(ch: str) -> bool:
    return ch in _GO_SPACE


def is_digit(ch: str) -> bool:
    return bool(ch) and unicodedata.category(ch) == "Nd"


def lstrip(text: str) -> str:
    """``text`` without its leading Go whitespace."""
    i = 0
    while i < len(text) and is_space(text[i]):
        i += 1
    return text[i:]


def strip(text: str) -> str:
    """``text`` without its leading and trailing Go whitespace."""
    text = lstrip(text)
    end = len(text)
    while end and is_space(text[end - 1]):
        end -= 1
    return text[:end]
