"""Dockerfiles read as BuildKit's Dockerfile frontend reads them (moby/buildkit ``frontend/dockerfile``).

The builder runs each step itself, so it must see the same instructions, heredocs, flags and
words that ``docker build`` sees. The rules are BuildKit's (the file and function named in
brackets); where BuildKit has a quirk, the quirk is followed. This module reads the file into
typed instructions; the pieces it reads with have their own modules: lines.py (lines, comments,
continuations), arguments.py (keyword, flags, exec form, ENV/LABEL/ARG words), heredocs.py,
and shell_words.py (BuildKit's shell lexer, which the builder expands words with).

Lines [parser/parser.go: Parse, processLine]

- The first line of an instruction loses its leading whitespace; blank lines and comments
  between instructions are skipped. Comment lines and blank lines inside a continuation are
  dropped without ending it; a continuation still open at the end of the file ends there.

Parser directives [parser/directives.go: DirectiveParser.ParseLine; parser.go]

- ``# syntax=``, ``# escape=`` and ``# check=`` (key case-insensitive, spaces around ``#``,
  the key and ``=`` allowed) are read only at the top: the first line that is not one
  (an instruction, a blank line, any other comment, an unknown ``# key=value``) ends them,
  and later ones are plain comments. A directive given twice is an error, and so is an
  escape other than ``\\`` or `````.

Instructions [instructions/parse.go; parser/line_parsers.go: parseSubCommand]

- The keyword is read in any case; an unknown keyword is an error.
- Only ARG may come before the first FROM; a file with no instruction, or no FROM, is an
  error; FROM with no image and a bare keyword of an instruction that needs arguments
  (all but RUN, CMD and ENTRYPOINT) are errors; ONBUILD may not carry ONBUILD, FROM or
  MAINTAINER. Other argument shapes are the builder's to check.
- What the pieces refuse (a non-string in an exec-form array, an unreadable or unterminated
  heredoc) comes back as a :class:`DockerfileError` naming the file, the line and the
  instruction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...errors import TaskFormatError
from .arguments import TOKEN_WHITESPACE, exec_form, split_command
from .go_text import lstrip
from .heredocs import HEREDOC_KEYWORDS, Heredoc, read_heredocs
from .lines import continuation, is_comment, physical_lines, trim_continuation, trim_newline

__all__ = ["Dockerfile", "DockerfileError", "Instruction", "from_parts", "keyword_list", "parse"]

KEYWORDS = frozenset({
    "ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK", "LABEL", "MAINTAINER", "ONBUILD",
    "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR",
})
EMPTY_ALLOWED = frozenset({"RUN", "CMD", "ENTRYPOINT"})
"""The instructions BuildKit reads with no argument at all."""

_DIRECTIVE = re.compile(r"#[\t\n\f\r ]*([a-zA-Z][a-zA-Z0-9]*)[\t\n\f\r ]*=[\t\n\f\r ]*(.+?)[\t\n\f\r ]*")
_DIRECTIVE_KEYS = frozenset({"syntax", "escape", "check"})
_STAGE_NAME = re.compile(r"[a-z][a-z0-9_.-]*")


class DockerfileError(TaskFormatError):
    """A Dockerfile BuildKit would refuse: names the file and line, the instruction and what was expected."""



@dataclass(frozen=True)
class Instruction:
    lineno: int
    """1-based line of the keyword."""
    end_lineno: int
    """The last line, continuations and heredoc bodies included."""
    keyword: str
    """Upper-cased: FROM, RUN, COPY, ..."""
    flags: tuple[str, ...]
    """The leading ``--name[=value]`` words, quotes removed as BuildKit removes them, variables not expanded."""
    args: str
    """The rest after the flags, continuations joined BuildKit's way, heredoc markers kept, not expanded."""
    json: tuple[str, ...] | None
    """The exec (JSON array of strings) form of ``args``, else None."""
    heredocs: tuple[Heredoc, ...]
    source: str
    """The file name given to :func:`parse`, for messages."""

    def where(self) -> str:
        return f"{self.source}:{self.lineno}"

    def flag(self, name: str) -> str | None:
        """The value of ``--name=value`` ("" for a bare ``--name``), the last one winning; None when absent."""
        value = None
        for word in self.flags:
            key, eq, found = word[2:].partition("=")
            if key == name:
                value = found if eq else ""
        return value


@dataclass(frozen=True)
class Dockerfile:
    source: str
    escape: str
    """``\\`` or `````."""
    directives: dict[str, str]
    """The parser directives at the top, keys lower-cased."""
    instructions: tuple[Instruction, ...]


def keyword_list() -> frozenset[str]:
    """The instruction keywords BuildKit knows."""
    return KEYWORDS


# -- parser directives ------------------------------------------------------------------------------


class _Directives:
    """The directives read so far, and whether lines may still be directives."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.values: dict[str, str] = {}
        self.done = False
        self.escape = "\\"

    def feed(self, token: str, lineno: int) -> None:
        """Read one line (its leading whitespace and line end trimmed) as a possible directive."""
        if self.done:
            return
        match = _DIRECTIVE.fullmatch(token)
        if match is None or match.group(1).lower() not in _DIRECTIVE_KEYS:
            self.done = True
            return
        key = match.group(1).lower()
        if key in self.values:
            raise DockerfileError(f"{self.source}:{lineno}", None, f"one '{key}' parser directive only (it appears twice)")
        value = match.group(2)
        if key == "escape" and value not in ("\\", "`"):
            raise DockerfileError(f"{self.source}:{lineno}", None, f"an escape directive of \\ or ` (not {value!r})")
        self.values[key] = value
        if key == "escape":
            self.escape = value


# -- instructions -----------------------------------------------------------------------------------


def _exec_form(keyword: str, args: str, where: str) -> tuple[str, ...] | None:
    """:func:`.arguments.exec_form`, an array BuildKit refuses named with the file, the line and ``keyword``."""
    try:
        return exec_form(keyword, args)
    except ValueError as exc:
        raise DockerfileError(where, keyword, str(exc)) from None


def _onbuild_trigger(args: str, where: str) -> tuple[str, tuple[str, ...] | None]:
    """(keyword, exec form) of the instruction an ONBUILD carries (parseSubCommand, parseOnBuild)."""
    written, _, inner_args = split_command(args)
    inner = written.upper()
    if inner in ("ONBUILD", "FROM", "MAINTAINER"):
        raise DockerfileError(where, "ONBUILD", f"a trigger other than {inner} (BuildKit refuses ONBUILD {inner})")
    return inner, _exec_form(inner, inner_args, where)


def _instruction(line: str, lines: list[str], i: int, lineno: int, source: str) -> tuple[Instruction, int]:
    """The instruction of one logical line, with the heredoc bodies that follow it; the index after them."""
    written, flags, args = split_command(line)
    keyword = written.upper()
    where = f"{source}:{lineno}"
    if keyword not in KEYWORDS:
        raise DockerfileError(where, None, f"a Dockerfile instruction (unknown instruction: {written})")
    if not args and keyword not in EMPTY_ALLOWED:
        expected = "an image after FROM" if keyword == "FROM" else f"an argument after {keyword} ({keyword} requires at least one argument)"
        raise DockerfileError(where, keyword, expected)
    json_form = _exec_form(keyword, args, where)
    carrier, carrier_json = _onbuild_trigger(args, where) if keyword == "ONBUILD" else (keyword, json_form)
    heredocs: tuple[Heredoc, ...] = ()
    if "<<" in line and carrier in HEREDOC_KEYWORDS and carrier_json is None:  # canContainHeredoc
        try:
            heredocs, i = read_heredocs(line, lines, i)
        except ValueError as exc:
            raise DockerfileError(where, keyword, str(exc)) from None
    return Instruction(lineno, i, keyword, flags, args, json_form, heredocs, source), i


def _check_stages(found: list[Instruction], source: str, line_count: int) -> None:
    """A file with instructions, only ARG before the first FROM, and a FROM."""
    if not found:
        raise DockerfileError(f"{source}:{max(line_count, 1)}", None, "at least one instruction (file with no instructions)")
    for instruction in found:
        if instruction.keyword == "FROM":
            return
        if instruction.keyword != "ARG":
            raise DockerfileError(instruction.where(), instruction.keyword, f"a FROM line before {instruction.keyword} (only ARG may come before the first FROM)")
    raise DockerfileError(f"{source}:{found[-1].lineno}", "FROM", "a FROM line (the file has no build stage)")


def parse(text: str, source: str = "Dockerfile") -> Dockerfile:
    """The Dockerfile as BuildKit reads it; DockerfileError naming ``source`` and the line when BuildKit would refuse it."""
    lines = physical_lines(text)
    directives = _Directives(source)
    found: list[Instruction] = []
    i = 0
    while i < len(lines):
        lineno = i + 1
        token = lstrip(trim_newline(lines[i]))
        i += 1
        directives.feed(token, lineno)
        pattern = continuation(directives.escape)
        line, ended = trim_continuation("" if is_comment(token) else token, pattern)
        if ended and not line:
            continue
        parts = [line]
        while not ended and i < len(lines):
            raw = trim_newline(lines[i])
            i += 1
            if is_comment(raw) or not lstrip(raw):
                continue  # dropped inside a continuation, which goes on
            raw, ended = trim_continuation(raw, pattern)
            parts.append(raw)
        instruction, i = _instruction("".join(parts), lines, i, lineno, source)
        found.append(instruction)
    _check_stages(found, source, len(lines))
    return Dockerfile(source, directives.escape, dict(directives.values), tuple(found))


def from_parts(instruction: Instruction) -> tuple[str, str | None]:
    """(the image as written, the stage name lower-cased or None) of a FROM; DockerfileError when BuildKit refuses its shape."""
    words = TOKEN_WHITESPACE.split(instruction.args) if instruction.args else []
    if len(words) == 1:
        return words[0], None
    if len(words) == 2 and words[1].lower() == "as":
        raise DockerfileError(instruction.where(), "FROM", "a stage name after AS")
    if len(words) != 3 or words[1].lower() != "as":
        raise DockerfileError(instruction.where(), "FROM", "an image, optionally followed by AS and a stage name (FROM requires either one or three arguments)")
    name = words[2].lower()
    if not _STAGE_NAME.fullmatch(name):
        raise DockerfileError(instruction.where(), "FROM", f"a stage name of a letter then letters, digits, '-', '_' or '.' (not {words[2]!r})")
    return words[0], name
