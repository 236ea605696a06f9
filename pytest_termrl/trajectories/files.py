"""Reading a recorded file as JSON: its data, or one Skipped line naming the file and what was expected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .model import Skipped, one_line


def load_json(path: Path, expected: str) -> Any | Skipped:
    """The JSON in ``path``; a missing, unreadable, truncated or invalid file is a :class:`Skipped` saying ``expected``."""
    if not path.is_file():
        return Skipped(str(path), f"{path}: missing; expected {expected}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Skipped(str(path), f"{path}: unreadable ({one_line(str(exc))}); expected {expected}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        what = "truncated JSON" if cut else "invalid JSON"
        return Skipped(str(path), f"{path}: {what} ({exc.msg}: line {exc.lineno} column {exc.colno}); expected {expected}")


def load_object(path: Path, expected: str) -> dict | Skipped:
    """Like :func:`load_json`, and the JSON must be an object."""
    data = load_json(path, expected)
    if isinstance(data, Skipped):
        return data
    if not isinstance(data, dict):
        return Skipped(str(path), f"{path}: a JSON {type(data).__name__}, not an object; expected {expected}")
    return data
