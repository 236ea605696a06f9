"""Key names as tmux spells them, turned into the bytes a terminal sends for them.

tmux's ``send-keys`` reads each argument as a key name when the whole argument is one
(``Enter``, ``C-c``, ``M-x``, ``Up``, ``F5``...) and as text otherwise; recorded Terminus
trajectories use both (``"ls -la\\n"``, ``"C-c"``). A newline typed as text is Enter, as a
terminal's keyboard sends it (carriage return).
"""

from __future__ import annotations

import re

CSI = "\x1b["

NAMED: dict[str, str] = {
    "Enter": "\r",
    "KPEnter": "\r",
    "Escape": "\x1b",
    "Tab": "\t",
    "BTab": CSI + "Z",
    "BSpace": "\x7f",
    "Space": " ",
    "Up": CSI + "A",
    "Down": CSI + "B",
    "Right": CSI + "C",
    "Left": CSI + "D",
    "Home": CSI + "H",
    "End": CSI + "F",
    "IC": CSI + "2~",
    "Insert": CSI + "2~",
    "DC": CSI + "3~",
    "Delete": CSI + "3~",
    "PPage": CSI + "5~",
    "PageUp": CSI + "5~",
    "PgUp": CSI + "5~",
    "NPage": CSI + "6~",
    "PageDown": CSI + "6~",
    "PgDn": CSI + "6~",
    "F1": "\x1bOP",
    "F2": "\x1bOQ",
    "F3": "\x1bOR",
    "F4": "\x1bOS",
    "F5": CSI + "15~",
    "F6": CSI + "17~",
    "F7": CSI + "18~",
    "F8": CSI + "19~",
    "F9": CSI + "20~",
    "F10": CSI + "21~",
    "F11": CSI + "23~",
    "F12": CSI + "24~",
}
"""tmux's names of the keys that are not text, with xterm's sequences for them."""

_CONTROL = re.compile(r"^(?:C-|\^)(.)$")
_META = re.compile(r"^M-(.+)$")


def _control(char: str) -> str | None:
    """The byte Ctrl+char sends (C-a is 0x01, C-[ is Escape, C-? is DEL); None for a char that has none."""
    if char == "?":
        return "\x7f"
    if char == " " or char == "@":
        return "\x00"
    code = ord(char.upper())
    if 0x40 <= code <= 0x5F:
        return chr(code - 0x40)
    return None


def key_bytes(key: str) -> bytes | None:
    """The bytes for one whole argument if it is a key name (``C-c``, ``Enter``, ``M-b``); None when it is text."""
    if key in NAMED:
        return NAMED[key].encode()
    if key == "C-Space":
        return b"\x00"
    match = _CONTROL.match(key)
    if match:
        control = _control(match.group(1))
        return control.encode() if control is not None else None
    match = _META.match(key)
    if match:
        inner = match.group(1)
        rest = key_bytes(inner)
        if rest is not None:
            return b"\x1b" + rest
        return ("\x1b" + inner).encode() if len(inner) == 1 else None
    return None


def to_bytes(key: str) -> bytes:
    """What typing one ``send-keys`` argument sends: the key it names, else its text with newlines as Enter."""
    named = key_bytes(key)
    if named is not None:
        return named
    return key.replace("\r\n", "\r").replace("\n", "\r").encode("utf-8", errors="surrogateescape")


def describe(keys: tuple[str, ...] | list[str]) -> str:
    """One readable line for a batch: text as typed (newlines as ⏎), key names in angle brackets."""
    parts = []
    for key in keys:
        if key_bytes(key) is not None:
            parts.append(f"<{key}>")
        else:
            parts.append(key.replace("\n", "⏎"))
    return "".join(parts)
