"""System prompts live as text files so they can be compared, versioned and picked by name.

A prompt is named by its file stem (``p6_env_aware``) and looked up in a list of
directories, or given directly as a path to a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from pytest_termrl.errors import TermrlError

REPO_PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts"
"""The repository's ``prompts/`` folder (present in a source checkout)."""

DEFAULT_PROMPT = "p0_default"
FALLBACK_PROMPT = "You are working in a Linux terminal. Use the bash tool to complete the user's task."
"""The text of the default prompt where no ``p0_default.txt`` is found (an installed package)."""


class PromptNotFoundError(TermrlError, LookupError):
    """No prompt file matches the requested name or path."""


def default_search_dirs() -> list[Path]:
    """Where prompts are looked up when no directories are given: ./prompts, then the repo's."""
    dirs = [Path.cwd() / "prompts", REPO_PROMPTS_DIR]
    unique: list[Path] = []
    for d in dirs:
        if d.resolve() not in [u.resolve() for u in unique]:
            unique.append(d)
    return unique


def available_prompts(search_dirs: Iterable[Path | str] | None = None) -> list[str]:
    """Sorted names of every ``*.txt`` prompt in the search directories."""
    dirs = default_search_dirs() if search_dirs is None else [Path(d) for d in search_dirs]
    names = {p.stem for d in dirs if d.is_dir() for p in d.glob("*.txt") if p.is_file()}
    return sorted(names)


def load_prompt(
    name_or_path: str | Path, search_dirs: Iterable[Path | str] | None = None
) -> tuple[str, str]:
    """Return ``(name, text)`` for a prompt given by name (file stem) or by path.

    A value that names an existing file, or that contains a path separator or ends in
    ``.txt``, is treated as a path; anything else is a name searched in ``search_dirs``
    in order (first match wins).
    """
    dirs = default_search_dirs() if search_dirs is None else [Path(d) for d in search_dirs]
    raw = str(name_or_path)
    as_path = Path(raw).expanduser()
    looks_like_path = isinstance(name_or_path, Path) or "/" in raw or raw.endswith(".txt")
    if as_path.is_file() and (looks_like_path or not _found_in(raw, dirs)):
        return as_path.stem, _prompt_text(as_path)
    if looks_like_path:
        raise PromptNotFoundError(f"prompt file not found: {raw}")
    for d in dirs:
        candidate = d / f"{raw}.txt"
        if candidate.is_file():
            return raw, _prompt_text(candidate)
    names = available_prompts(dirs)
    where = ", ".join(str(d) for d in dirs) or "(no directories)"
    listing = ", ".join(names) if names else "none"
    raise PromptNotFoundError(
        f"unknown prompt {raw!r}; available prompts: {listing} (searched {where})"
    )


class PromptFileError(TermrlError, ValueError):
    """A prompt file that cannot be a system prompt: unreadable, not UTF-8, or empty."""


def _prompt_text(path: Path) -> str:
    """The prompt file's text; an empty (or whitespace-only) or undecodable file is an error naming it."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PromptFileError(f"prompt file {path}: cannot be read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PromptFileError(f"prompt file {path}: not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise PromptFileError(f"prompt file {path}: empty; expected the system prompt's text")
    return text


def _found_in(name: str, dirs: list[Path]) -> bool:
    return any((d / f"{name}.txt").is_file() for d in dirs)


def resolve_prompt(name_or_path: str | Path, search_dirs: Iterable[Path | str] | None = None) -> tuple[str, str]:
    """Like :func:`load_prompt`, but the default prompt falls back to :data:`FALLBACK_PROMPT` when no file has it."""
    try:
        return load_prompt(name_or_path, search_dirs)
    except PromptNotFoundError:
        if name_or_path != DEFAULT_PROMPT:
            raise
        return DEFAULT_PROMPT, FALLBACK_PROMPT
