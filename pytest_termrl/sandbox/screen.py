"""The terminal session's screen: a pseudo-terminal's bytes rendered to text, what scrolled away kept until looked at.

A :mod:`pyte` screen is fed every byte the session prints. :meth:`Screen.look` is what the
agent sees after a keystroke batch: the lines that scrolled off the top since the last look,
then the visible screen, as plain text (pyte interprets every escape sequence, so none
reaches the text). A full-screen program (less, vim) draws on the alternate screen, as in
xterm: what it draws never scrolls into the history, and leaving it shows the shell's screen
as it was.
"""

from __future__ import annotations

import copy
from collections import defaultdict, deque
from typing import Any

import pyte
from pyte.screens import Char, StaticDefaultDict

KEEP_SCROLLED_LINES = 2000
"""Lines kept of what scrolled away between two looks, at the head and again at the tail; the middle is counted."""

_ALTERNATE_MODES = frozenset(mode << 5 for mode in (47, 1047, 1049))
"""xterm's private modes that switch to the alternate screen (pyte shifts private modes by 5 bits)."""


def _render(line: StaticDefaultDict[int, Char], columns: int) -> str:
    """One line of cells as text, trailing spaces dropped (a wide character's second cell holds "")."""
    return "".join(line[x].data for x in range(columns)).rstrip()


class _Guarded:
    """The screen as pyte's parser calls it: a sequence the screen cannot take is dropped, never raised.

    pyte passes ``private=True`` to handlers that do not take it (``CSI ? ... m``, which vim
    sends; ``CSI ? ... r``, ``s``), and an exception would cut the rest of the bytes fed with it.
    """

    def __init__(self, screen: "Screen") -> None:
        self._screen = screen

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._screen, name)
        if not callable(attr):
            return attr

        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return attr(*args, **kwargs)
            except Exception:  # noqa: BLE001 - a program's odd sequence is never the harness's failure
                return None

        return guarded


class Screen(pyte.Screen):
    """A pyte screen that keeps the lines scrolling off its top and has xterm's alternate screen."""

    def __init__(self, columns: int, lines: int) -> None:
        self._head: list[str] = []
        self._tail: deque[str] = deque(maxlen=KEEP_SCROLLED_LINES)
        self._dropped = 0
        self._saved: tuple[Any, pyte.screens.Cursor] | None = None
        super().__init__(columns, lines)
        self._stream = pyte.ByteStream(_Guarded(self))

    def feed(self, data: bytes) -> None:
        """Interpret bytes the terminal printed (a sequence or character cut between two calls is joined)."""
        self._stream.feed(data)

    # -- what the agent sees -------------------------------------------------------------
    def look(self) -> str:
        """The lines that scrolled off since the last look, then the screen; trailing blanks dropped."""
        lines = self._head[:]
        if self._dropped:
            lines.append(f"[... {self._dropped} more lines scrolled past ...]")
        lines += self._tail
        lines += [_render(self.buffer[y], self.columns) for y in range(self.lines)]
        self._head, self._dropped = [], 0
        self._tail.clear()
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)

    def _scrolled(self, text: str) -> None:
        if len(self._head) < KEEP_SCROLLED_LINES:
            self._head.append(text)
            return
        if len(self._tail) == KEEP_SCROLLED_LINES:
            self._dropped += 1
        self._tail.append(text)

    # -- pyte's events -------------------------------------------------------------------
    def index(self) -> None:
        """A line feed on the bottom line: the top line scrolls away (kept unless a full-screen program drew it)."""
        top, bottom = self.margins or pyte.screens.Margins(0, self.lines - 1)
        if self.cursor.y == bottom and top == 0 and self._saved is None:
            self._scrolled(_render(self.buffer[top], self.columns))
        super().index()

    def set_mode(self, *modes: int, **kwargs: Any) -> None:
        super().set_mode(*modes, **kwargs)
        if kwargs.get("private") and self._saved is None and _ALTERNATE_MODES.intersection(m << 5 for m in modes):
            self._saved = (self.buffer, copy.copy(self.cursor))
            self.buffer = defaultdict(lambda: StaticDefaultDict[int, Char](self.default_char))
            self.dirty.update(range(self.lines))

    def reset_mode(self, *modes: int, **kwargs: Any) -> None:
        super().reset_mode(*modes, **kwargs)
        if kwargs.get("private") and self._saved is not None and _ALTERNATE_MODES.intersection(m << 5 for m in modes):
            self.buffer, self.cursor = self._saved
            self._saved = None
            self.dirty.update(range(self.lines))

    def reset(self) -> None:
        self._saved = None
        super().reset()
