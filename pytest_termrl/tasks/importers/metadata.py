"""Task metadata read the same way from every format: ids, categories, difficulty, lists, numbers, inputs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import overload

from ...errors import TaskFormatError

DIFFICULTIES = ("easy", "medium", "hard")


def task_id_from(name: str) -> str:
    """A task id our test ids accept: letters, digits, '_' and '.', so 'hello-world' -> 'hello_world'."""
    return re.sub(r"[^A-Za-z0-9_.]+", "_", name).strip("_.") or "task"


def marker_word(value: str) -> str:
    """A category usable in a marker name ('data extraction' -> 'data_extraction')."""
    return re.sub(r"\W+", "_", value.strip().lower()).strip("_") or "general"


def difficulty_of(where: Path | str, value, notes: list[str]) -> str:
    if value is None:
        return "medium"
    if not isinstance(value, str):
        raise TaskFormatError(where, "difficulty", "expected a string (easy, medium or hard)")
    if value.strip().lower() in DIFFICULTIES:
        return value.strip().lower()
    notes.append(f"difficulty {value!r} is not easy/medium/hard; recorded as medium")
    return "medium"


def string_list(where: Path | str, key: str, value) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise TaskFormatError(where, key, "expected a list of non-empty strings")
    return tuple(value)


@overload
def number(where: Path | str, key: str, value: object, default: float) -> float: ...
@overload
def number(where: Path | str, key: str, value: object, default: None = None) -> float | None: ...
def number(where: Path | str, key: str, value, default: float | None = None) -> float | None:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise TaskFormatError(where, key, "expected a positive number")
    return float(value)


def requires_from(*texts: str) -> tuple[str, ...]:
    """What the task's scripts call, of the tools a bwrap sandbox shares with the host."""
    joined = "\n".join(texts)
    found = ["bash"]
    for tool, pattern in (("python", r"\bpython3?\b"), ("git", r"\bgit\b")):
        if re.search(pattern, joined):
            found.append(tool)
    return tuple(found)


def inputs_named(instruction: str, env_dir: Path | None, workdir: str, limit: int = 8) -> tuple[str, ...]:
    """Files of the environment the instruction names (by workdir-relative or absolute path)."""
    if env_dir is None or not env_dir.is_dir():
        return ()
    found = []
    for path in sorted(env_dir.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        rel = path.relative_to(env_dir).as_posix()
        absolute = f"{workdir.rstrip('/')}/{rel}"
        if re.search(r"(?<![\w./-])" + re.escape(rel) + r"(?![\w/-])", instruction) or absolute in instruction:
            found.append(rel)
        if len(found) >= limit:
            break
    return tuple(found)
