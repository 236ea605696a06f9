"""Heredocs: which words of a RUN, COPY or ADD line open one, and the body lines that follow it.

[parser/parser.go: heredocsFromLine, ParseHeredoc, heredocFromMatch, ChompHeredocContent,
canContainHeredoc; shell/lex.go: processPossibleHeredoc]

- Only RUN, COPY and ADD in shell form (and ONBUILD of one of them) open heredocs; elsewhere
  ``<<`` is text (the parser decides, with :data:`HEREDOC_KEYWORDS`).
- The whole logical line is split into words by the shell lexer (quotes and escapes kept,
  backslash as escape whatever ``# escape=`` says); a word that is, in full, optional
  digits (a file descriptor), ``<<``, an optional ``-`` (chomp), optional whitespace and a
  delimiter without ``<`` opens a heredoc. So ``'<<EOF'`` (quoted) and ``cat<<EOF`` are no
  heredocs, ``3<<EOF`` is one with fd 3. An unquoted ``<<`` keeps the spaces, tabs and
  ``\\r`` after it in its word, so ``<< EOF`` and ``<< 'EOF'`` open heredocs
  (BuildKit 0.22, moby/buildkit#5817); ``<<- EOF`` does not (``<<-`` and ``EOF`` are two words).
- The delimiter's name is the word with quotes removed; its body is not expanded when any
  part of the word was quoted (``<<'EOF'``, ``<<"EOF"``, ``<<E"O"F``); an escaped quote does
  not count.
- The bodies follow the line, one after another, in order; a body ends at the first line
  equal to its name once its line end is trimmed (after leading tabs are cut, for ``<<-``):
  trailing spaces make it a body line. Body lines are kept as written, line ends included;
  ``<<-`` then drops the leading tabs of every body line. A file ending before the
  delimiter is an error (a ValueError here, which the parser names with the file and line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .lines import trim_newline
from .shell_words import literal_words

__all__ = ["HEREDOC_KEYWORDS", "Heredoc", "read_heredocs"]

HEREDOC_KEYWORDS = frozenset({"RUN", "COPY", "ADD"})
_HEREDOC = re.compile(r"([0-9]*)<<(-?)[\t\n\f\r ]*([^<]*)")
_LEADING_TABS = re.compile(r"^\t+", re.M)


@dataclass(frozen=True)
class Heredoc:
    name: str
    """The delimiter word, quotes removed."""
    body: str
    """The lines up to the delimiter, each with its line end (leading tabs removed when ``chomp``)."""
    expand: bool
    """False when any part of the delimiter was quoted: the body is taken as written."""
    chomp: bool
    """``<<-``."""
    fd: int | None
    """A leading file descriptor number (``3<<EOF``), else None."""


@dataclass(frozen=True)
class _Marker:
    """A heredoc's opening word on the instruction's line, read: all of :class:`Heredoc` but the body."""

    name: str
    expand: bool
    chomp: bool
    fd: int | None


def _marker(word: str) -> _Marker | None:
    """The heredoc one word of the line opens (ParseHeredoc), else None."""
    match = _HEREDOC.fullmatch(word)
    if match is None or not match.group(3):
        return None
    rest = match.group(3)
    plain = literal_words(rest)
    if len(plain) != 1:
        return None
    raw = literal_words(rest, raw_quotes=True)
    quotes = plain[0].count("'") + plain[0].count('"')
    raw_quotes = raw[0].count("'") + raw[0].count('"')
    fd = int(match.group(1)) if match.group(1) else None
    return _Marker(plain[0], quotes == raw_quotes, match.group(2) == "-", fd)


def _markers(line: str) -> list[_Marker]:
    """The heredocs a logical line opens, in order (heredocsFromLine)."""
    try:
        words = literal_words(line, raw_quotes=True, raw_escapes=True)
    except ValueError:
        return []  # BuildKit reads no heredoc from a line its lexer cannot split
    found = []
    for word in words:
        try:
            marker = _marker(word)
        except ValueError as exc:
            raise ValueError(f"a heredoc delimiter it can read ({exc})") from None
        if marker is not None:
            found.append(marker)
    return found


def _read_body(lines: list[str], i: int, marker: _Marker) -> tuple[Heredoc, int]:
    """The heredoc whose body starts at ``lines[i]``, and the index after its delimiter line."""
    body: list[str] = []
    while i < len(lines):
        raw = lines[i]
        i += 1
        candidate = trim_newline(raw)
        if (candidate.lstrip("\t") if marker.chomp else candidate) == marker.name:
            text = "".join(body)
            return Heredoc(marker.name, _LEADING_TABS.sub("", text) if marker.chomp else text, marker.expand, marker.chomp, marker.fd), i
        body.append(raw)
    dash = "-" if marker.chomp else ""
    raise ValueError(f"a line {marker.name!r} ending the heredoc <<{dash}{marker.name} before the end of the file (unterminated heredoc)")


def read_heredocs(line: str, lines: list[str], i: int) -> tuple[tuple[Heredoc, ...], int]:
    """The heredocs ``line`` opens, their bodies read from ``lines[i]`` on, and the index after the last;
    ValueError for a delimiter the lexer cannot read or a body the file ends in."""
    heredocs = []
    for marker in _markers(line):
        heredoc, i = _read_body(lines, i, marker)
        heredocs.append(heredoc)
    return tuple(heredocs), i
