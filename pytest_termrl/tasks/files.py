"""Reading a task's files: each failure is a TaskFormatError naming the file and what was expected.

Every loader reads through here, so a bad byte, a FIFO or a folder where a file belongs, an
unreadable or oversized file is named (with the byte offset and line of a bad byte) and
stops only the task it belongs to. Nothing here opens anything but a regular file, so a FIFO
never blocks collection.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import tokenize
import tomllib
from pathlib import Path

from ..errors import TaskFormatError

MAX_TEXT_BYTES = 4 << 20
"""The largest task.toml, task.yaml, script or contracts line read as text (4 MiB)."""
MAX_FILE_BYTES = 256 << 20
"""The largest file a task directory may hold (256 MiB): each episode copies it into a sandbox."""
MAX_INSTRUCTION_BYTES = 256 << 10
"""The largest instruction (256 KiB): far larger than any model's context already."""
IGNORED_PARTS = frozenset({"__pycache__", ".pytest_cache"})

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def size_text(size: int) -> str:
    """'300.0 KiB (307200 bytes)': a size a person reads, and the exact count."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit} ({size} bytes)"
    return f"{size} bytes"


def _limit_text(limit: int) -> str:
    return size_text(limit).split(" (")[0].replace(".0 ", " ")


def kind_of(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def _unreadable(path: Path, exc: OSError) -> TaskFormatError:
    return TaskFormatError(path, None, f"cannot be read ({exc.strerror or type(exc).__name__})")


def regular_file(path: Path, limit: int = MAX_FILE_BYTES, what: str = "a file") -> os.stat_result:
    """The stat of ``path`` (links followed); raise unless it is a readable regular file within ``limit``."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        broken = " (a symbolic link to nothing)" if os.path.islink(path) else ""
        raise TaskFormatError(path, None, f"missing{broken}: {what}") from None
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if not stat.S_ISREG(st.st_mode):
        raise TaskFormatError(path, None, f"expected {what} (a regular file), found {kind_of(st.st_mode)}")
    if st.st_size > limit:
        raise TaskFormatError(path, None, f"too large: {size_text(st.st_size)}; expected at most {_limit_text(limit)}")
    if not os.access(path, os.R_OK):
        raise TaskFormatError(path, None, "cannot be read (permission denied)")
    return st


def read_bytes(path: Path, limit: int = MAX_TEXT_BYTES, what: str = "a file") -> bytes:
    regular_file(path, limit, what)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if len(data) > limit:
        raise TaskFormatError(path, None, f"too large: more than {_limit_text(limit)}; expected at most {_limit_text(limit)}")
    return data


def decode_error(where: Path | str, data: bytes, exc: UnicodeDecodeError, encoding: str = "UTF-8", base: int = 0, first_line: int = 1) -> TaskFormatError:
    """'not valid UTF-8: byte 0xff at offset 17 (line 2, column 5)'. When ``data`` is a part of
    the file, ``base`` is the offset and ``first_line`` the line number it starts at."""
    line = first_line + data.count(b"\n", 0, exc.start)
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    return TaskFormatError(
        where, None, f"not valid {encoding}: byte 0x{data[exc.start]:02x} at offset {base + exc.start} (line {line}, column {column})"
    )


def decode(where: Path | str, data: bytes, base: int = 0, first_line: int = 1) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise decode_error(where, data, exc, base=base, first_line=first_line) from None


def read_text(path: Path, limit: int = MAX_TEXT_BYTES, what: str = "a text file") -> str:
    """The file as UTF-8 text; a bad byte is named by its offset, line and column."""
    return decode(path, read_bytes(path, limit, what))


def read_toml(path: Path, what: str = "a TOML file") -> dict:
    """A TOML file's tables; a TaskFormatError naming the file if it is unreadable or not valid TOML."""
    try:
        return tomllib.loads(read_text(path, what=what))
    except tomllib.TOMLDecodeError as exc:
        raise TaskFormatError(path, None, f"not valid TOML ({exc})") from None


def json_object(where: str, line: str) -> dict:
    """One JSONL line that must hold an object; a TaskFormatError naming ``where`` (file:line) if it does not."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise TaskFormatError(where, None, f"not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise TaskFormatError(where, None, "expected a JSON object")
    return data


def read_python(path: Path) -> str:
    """A Python source file decoded as Python would (its coding declaration, else UTF-8)."""
    data = read_bytes(path, what="a Python file")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        decode(path, data)  # a bad byte in the first lines: named by its offset
        raise TaskFormatError(path, None, f"expected Python source ({exc.msg})") from None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise decode_error(path, data, exc, encoding.upper()) from None


def read_lines(path: Path, limit: int = MAX_FILE_BYTES) -> list[tuple[int, str | TaskFormatError]]:
    """(line number, text) for each non-blank line of a JSONL file; a line that is not UTF-8 is
    (line number, the error naming ``file:line`` and the byte's offset in the file)."""
    data = read_bytes(path, limit, "a JSONL file")
    lines: list[tuple[int, str | TaskFormatError]] = []
    offset = 0
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if raw.strip():
            try:
                lines.append((lineno, decode(f"{path}:{lineno}", raw, base=offset, first_line=lineno)))
            except TaskFormatError as exc:
                lines.append((lineno, exc))
        offset += len(raw) + 1
    return lines


def check_instruction(where: Path | str, field: str | None, text: str) -> str:
    """The instruction, stripped; raise when it is empty or larger than any model context."""
    text = text.strip()
    if not text:
        raise TaskFormatError(where, field, "expected a non-empty instruction")
    size = len(text.encode())
    if size > MAX_INSTRUCTION_BYTES:
        raise TaskFormatError(
            where, field, f"the instruction is {size_text(size)}; expected at most {_limit_text(MAX_INSTRUCTION_BYTES)} (far larger than any model context)"
        )
    return text


def task_files(root: Path) -> list[Path]:
    """The regular files under ``root`` (links followed to files; caches skipped), sorted; raise
    TaskFormatError naming the first one that is unreadable or over the size limit."""
    found = []
    for path in sorted(root.rglob("*")):
        if IGNORED_PARTS.intersection(path.relative_to(root).parts):
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue  # a link to nothing is copied as a link; nothing to read
        if stat.S_ISREG(st.st_mode):
            regular_file(path)
            found.append(path)
    return found


def check_tree(root: Path, tests_dir: Path | None = None) -> None:
    """Raise TaskFormatError naming the first file of a task the episodes could not use: one
    unreadable or over the size limit, or a hidden test (``tests_dir/**.py``) that is not Python
    source. Other files are data: any bytes are fine."""
    task_files(root)
    if tests_dir is not None and tests_dir.is_dir():
        for path in sorted(tests_dir.rglob("*.py")):
            if not IGNORED_PARTS.intersection(path.parts):
                read_python(path)


def sha256_file(path: Path) -> str:
    """The file's sha256, read in chunks (it was checked by :func:`task_files`)."""
    try:
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as exc:
        raise _unreadable(path, exc) from None
