"""Shell scripts written in tests: indented triple-quoted text made flush."""

from __future__ import annotations

import textwrap


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")
