"""An instruction's line split as BuildKit's parser splits it, before any shell lexing.

[parser/split_command.go: splitCommand, extractBuilderFlags; parser/line_parsers.go:
parseWords, parseJSON, parseMaybeJSON, parseHealthConfig]

- The keyword is the first word (split on spaces, tabs, ``\\v``, ``\\f``, ``\\r``).
- Flags are the leading words starting with ``--`` (quotes and backslash escapes in them
  removed, variables left alone); a bare ``--`` ends them; the first other word starts the
  arguments, kept as written (trimmed), heredoc markers included.
- ENV, LABEL and ARG split their arguments into words on unquoted whitespace, quotes and
  escapes kept for the shell lexer (parseWords). Both splits are one scanner here.
- RUN, CMD, ENTRYPOINT, SHELL, COPY, ADD and VOLUME (and HEALTHCHECK after its type word)
  are in exec (JSON) form when the arguments, leading spaces skipped, start with ``[`` and
  the first JSON value there decodes as an array: text after the array is ignored, as Go's
  decoder ignores it. Anything that does not decode (``RUN [ -e x ] && y``) is shell form.
  An array that decodes with a non-string element (``CMD ["a", 1]``) is an error: BuildKit
  refuses it ("arrays must be comprised of strings only") rather than reading shell form;
  it is a ValueError here, which the parser names with the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from json import JSONDecoder

from .go_text import is_space, lstrip, strip

__all__ = ["JSON_KEYWORDS", "TOKEN_WHITESPACE", "exec_form", "split_command", "split_words"]

JSON_KEYWORDS = frozenset({"RUN", "CMD", "ENTRYPOINT", "SHELL", "COPY", "ADD", "VOLUME"})
"""The instructions whose arguments BuildKit tries as a JSON array (HEALTHCHECK too, after its type)."""
TOKEN_WHITESPACE = re.compile(r"[\t\v\f\r ]+")
"""What separates the keyword from the rest, and FROM's words."""


def _words(text: str, escape: str, *, raw: bool) -> Iterator[tuple[int, int, str]]:
    """(start, end, word) of each word of ``text`` split on whitespace outside quotes.

    ``raw`` (parseWords) keeps quotes and escapes in the word, and an escape inside single
    quotes is text; otherwise (extractBuilderFlags) both are removed and the escape works inside
    single quotes too. An escape at the very end is dropped; an unclosed quote runs to the end.
    """
    i, end = 0, len(text)
    while True:
        while i < end and is_space(text[i]):
            i += 1
        if i == end:
            return
        start, word, quote = i, "", ""
        while i < end and (quote or not is_space(text[i])):
            ch = text[i]
            i += 1
            if ch == quote or (not quote and ch in ("'", '"')):
                quote = "" if quote else ch
                word += ch if raw else ""
            elif ch == escape and not (raw and quote == "'"):
                if i < end:
                    word += (ch if raw else "") + text[i]
                    i += 1
            else:
                word += ch
        yield start, i, word


def split_words(text: str, escape: str = "\\") -> list[str]:
    """BuildKit's parseWords (ENV, LABEL, ARG): split on unquoted whitespace, quotes and escapes kept for :func:`.shell_words.expand`."""
    return [word for _, _, word in _words(text, escape, raw=True) if word]


def _extract_flags(line: str) -> tuple[str, list[str]]:
    """(the arguments after the leading ``--`` words, those words with quotes and backslashes removed)."""
    flags: list[str] = []
    for start, end, word in _words(line, "\\", raw=False):
        if not line.startswith("--", start):
            return line[start:], flags
        if word == "--":
            return line[end:], flags
        flags.append(word)
    return "", flags


def split_command(line: str) -> tuple[str, tuple[str, ...], str]:
    """(keyword as written, flags, arguments) of a logical line (splitCommand)."""
    parts = TOKEN_WHITESPACE.split(strip(line), maxsplit=1)
    if len(parts) < 2:
        return parts[0], (), ""
    args, flags = _extract_flags(parts[1])
    return parts[0], tuple(flags), strip(args)


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _go_number(text: str) -> float:
    """A JSON number as Go decodes it into an interface: a float64, out of range an error."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is out of range")
    return value


_JSON = JSONDecoder(parse_constant=_reject_constant, parse_float=_go_number, parse_int=_go_number)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _maybe_json(args: str) -> tuple[str, ...] | None:
    """The exec form of ``args``: the JSON array of strings it starts with, else None (shell form)."""
    text = lstrip(args)
    if not text.startswith("["):
        return None
    try:
        value, _ = _JSON.raw_decode(text)
    except ValueError:
        return None
    if not isinstance(value, list):
        return None
    if not all(isinstance(item, str) for item in value):
        raise ValueError("a JSON array of strings only (BuildKit refuses other elements)")
    return tuple(_LONE_SURROGATE.sub("\ufffd", item) for item in value)  # Go decodes a lone surrogate as U+FFFD


def exec_form(keyword: str, args: str) -> tuple[str, ...] | None:
    """The exec form of an instruction's arguments, else None; ValueError for an array BuildKit refuses."""
    if keyword == "HEALTHCHECK":  # the JSON follows the type word (parseHealthConfig)
        end = next((i for i, ch in enumerate(args) if is_space(ch)), len(args))
        return _maybe_json(args[end:]) if end else None
    if keyword in JSON_KEYWORDS and args:
        return _maybe_json(args)
    return None

