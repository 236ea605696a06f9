"""Dockerfiles read as BuildKit's Dockerfile frontend reads them (moby/buildkit ``frontend/dockerfile``).

The builder runs each step itself, so it must see the same instructions, heredocs, flags and
words that ``docker build`` sees. The rules below are BuildKit's (the file and function named
in brackets); where BuildKit has a quirk, the quirk is followed.

Lines [parser/parser.go: Parse, processLine, trimContinuationCharacter, scanLines]

- Lines end at ``\\n`` only; a UTF-8 BOM is dropped from the first line; every ``\\r`` and
  ``\\n`` at a line's end is trimmed before it is read (CRLF files read as LF files).
- The first line of an instruction loses its leading whitespace; a line whose first
  non-blank character is ``#`` is a comment; blank lines and comments between instructions
  are skipped. A ``#`` later in a line is no comment.
- A line continues when it ends in the escape character (``\\``, or `````` after
  ``# escape=```````), spaces and tabs after it allowed, unless the character before it is
  the escape character too; the escape and what follows it are cut, nothing else: the next
  line is joined as written (its leading whitespace kept), so ``a \\`` + ``  b`` is
  ``a   b``. Comment lines and blank lines inside a continuation are dropped without ending
  it; a continuation still open at the end of the file ends there.

Parser directives [parser/directives.go: DirectiveParser.ParseLine; parser.go]

- ``# syntax=``, ``# escape=`` and ``# check=`` (key case-insensitive, spaces around ``#``,
  the key and ``=`` allowed) are read only at the top: the first line that is not one
  (an instruction, a blank line, any other comment, an unknown ``# key=value``) ends them,
  and later ones are plain comments. A directive given twice is an error, and so is an
  escape other than ``\\`` or `````.

Instructions [parser/split_command.go: splitCommand, extractBuilderFlags;
parser/line_parsers.go: parseJSON, parseMaybeJSON, parseHealthConfig; instructions/parse.go]

- The keyword is the first word (split on spaces, tabs, ``\\v``, ``\\f``, ``\\r``), any
  case; an unknown keyword is an error.
- Flags are the leading words starting with ``--`` (quotes and backslash escapes in them
  removed, variables left alone); a bare ``--`` ends them; the first other word starts the
  arguments, kept as written (trimmed), heredoc markers included.
- RUN, CMD, ENTRYPOINT, SHELL, COPY, ADD and VOLUME (and HEALTHCHECK after its type word)
  are in exec (JSON) form when the arguments, leading spaces skipped, start with ``[`` and
  the first JSON value there decodes as an array: text after the array is ignored, as Go's
  decoder ignores it. Anything that does not decode (``RUN [ -e x ] && y``) is shell form.
  An array that decodes with a non-string element (``CMD ["a", 1]``) is an error: BuildKit
  refuses it ("arrays must be comprised of strings only") rather than reading shell form.
- Only ARG may come before the first FROM; a file with no instruction, or no FROM, is an
  error; FROM with no image and a bare keyword of an instruction that needs arguments
  (all but RUN, CMD and ENTRYPOINT) are errors; ONBUILD may not carry ONBUILD, FROM or
  MAINTAINER. Other argument shapes are the builder's to check.

Heredocs [parser/parser.go: heredocsFromLine, ParseHeredoc, heredocFromMatch,
ChompHeredocContent, canContainHeredoc; shell/lex.go: processPossibleHeredoc]

- Only RUN, COPY and ADD in shell form (and ONBUILD of one of them) open heredocs; elsewhere
  ``<<`` is text.
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
  delimiter is an error.

Words and variables [shell/lex.go: ProcessWord, ProcessWords, processStopOn,
processSingleQuote, processDoubleQuote, processDollar, processName, trimPrefix, trimSuffix,
convertShellPatternToRegex]

- Outside quotes the escape character takes the next character literally (and is dropped at
  the end); inside single quotes everything is literal; inside double quotes the escape
  only escapes ``"``, ``$`` and itself, and ``$`` still expands.
- ``$NAME`` and ``${NAME}`` expand (an unset name to nothing); ``$`` before anything that is
  not a name stays ``$``; ``$1``, ``$@``, ``$*``, ``$#``, ``$?``, ``$-``, ``$$``, ``$!``
  and ``$0`` are looked up as names (unset: nothing). ``${NAME-w}`` / ``${NAME:-w}`` (unset
  / unset or empty gives w), ``${NAME+w}`` / ``${NAME:+w}``, ``${NAME?msg}`` /
  ``${NAME:?msg}`` (an error), ``${NAME#pat}`` ``##`` ``%`` ``%%`` (shortest/longest prefix
  or suffix, ``*`` and ``?`` wildcards) and ``${NAME/pat/repl}``, ``${NAME//pat/repl}``;
  the words nest (``${A:-${B}}``); anything else in ``${}`` is an error.
- ProcessWords splits on unquoted whitespace after expansion, so an unquoted variable whose
  value holds spaces gives several words; ``""`` alone gives no word.
- COPY/ADD heredoc bodies with an unquoted delimiter expand with quotes left as text but
  the backslash still an escape (``\\$`` is ``$``, ``\\n`` is ``n``), as dispatch's
  ExpandRaw does (moby/buildkit#2442).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from json import JSONDecoder

from ...errors import TaskFormatError

KEYWORDS = frozenset({
    "ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK", "LABEL", "MAINTAINER", "ONBUILD",
    "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR",
})
HEREDOC_KEYWORDS = frozenset({"RUN", "COPY", "ADD"})
JSON_KEYWORDS = frozenset({"RUN", "CMD", "ENTRYPOINT", "SHELL", "COPY", "ADD", "VOLUME"})
"""The instructions whose arguments BuildKit tries as a JSON array (HEALTHCHECK too, after its type)."""
EMPTY_ALLOWED = frozenset({"RUN", "CMD", "ENTRYPOINT"})
"""The instructions BuildKit reads with no argument at all."""

_GO_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                      "\u2028\u2029\u202f\u205f\u3000")
"""Go's unicode.IsSpace, which Python's str.isspace does not match exactly."""
_TOKEN_WHITESPACE = re.compile(r"[\t\v\f\r ]+")
_DIRECTIVE = re.compile(r"#[\t\n\f\r ]*([a-zA-Z][a-zA-Z0-9]*)[\t\n\f\r ]*=[\t\n\f\r ]*(.+?)[\t\n\f\r ]*")
_DIRECTIVE_KEYS = frozenset({"syntax", "escape", "check"})
_HEREDOC = re.compile(r"([0-9]*)<<(-?)[\t\n\f\r ]*([^<]*)")
_LEADING_TABS = re.compile(r"^\t+", re.M)
_STAGE_NAME = re.compile(r"[a-z][a-z0-9_.-]*")
_EOF = ""


class DockerfileError(TaskFormatError):
    """A Dockerfile BuildKit would refuse: names the file and line, the instruction and what was expected."""


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


# -- characters and lines ---------------------------------------------------------------------------


def _is_space(ch: str) -> bool:
    return ch in _GO_SPACE


def _lstrip(text: str) -> str:
    i = 0
    while i < len(text) and _is_space(text[i]):
        i += 1
    return text[i:]


def _strip(text: str) -> str:
    text = _lstrip(text)
    end = len(text)
    while end and _is_space(text[end - 1]):
        end -= 1
    return text[:end]


def _trim_newline(line: str) -> str:
    return line.rstrip("\r\n")


def _is_comment(line: str) -> bool:
    return _lstrip(line).startswith("#")


def _physical_lines(text: str) -> list[str]:
    """The lines with their ``\\n`` kept (scanLines), the BOM dropped from the first."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    return lines


def _continuation(escape: str) -> re.Pattern[str]:
    """The escape as the last character but spaces and tabs, not itself escaped, or alone on the line."""
    e = re.escape(escape)
    return re.compile(rf"([^{e}]){e}[ \t]*\Z|^{e}[ \t]*\Z")


_CONTINUATION = {escape: _continuation(escape) for escape in ("\\", "`")}


def _trim_continuation(line: str, pattern: re.Pattern[str]) -> tuple[str, bool]:
    """(the line without its continuation escape, whether the instruction ends here)."""
    if not pattern.search(line):
        return line, True
    return pattern.sub(lambda m: m.group(1) or "", line), False


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


# -- the shell lexer --------------------------------------------------------------------------------


class _Words:
    """Words split on unquoted whitespace as the lexer builds them (wordsStruct): an empty word is never kept."""

    def __init__(self) -> None:
        self.words: list[str] = []
        self.buf = ""

    def add_char(self, ch: str) -> None:
        """An unquoted character: whitespace ends the word."""
        if not _is_space(ch):
            self.buf += ch
        elif self.buf:
            self.words.append(self.buf)
            self.buf = ""

    def add_raw(self, text: str) -> None:
        """Quoted or escaped text: part of the word whatever it holds."""
        self.buf += text

    def add_string(self, text: str) -> None:
        for ch in text:
            self.add_char(ch)

    def done(self) -> list[str]:
        if self.buf:
            self.words.append(self.buf)
            self.buf = ""
        return self.words


class _Lexer:
    """One pass of BuildKit's shell lexer over a string (shell/lex.go's shellWord); errors are ValueError."""

    def __init__(
        self, text: str, env: Mapping[str, str], *, escape: str = "\\", raw_quotes: bool = False, raw_escapes: bool = False,
        skip_quotes: bool = False, skip_unset: bool = False,
    ) -> None:
        self.text, self.env, self.escape = text, env, escape
        self.raw_quotes, self.raw_escapes = raw_quotes, raw_escapes
        self.skip_quotes, self.skip_unset = skip_quotes, skip_unset
        self.pos = 1 if text.startswith("\ufeff") else 0  # Go's text/scanner skips a leading BOM

    def run(self) -> tuple[str, list[str]]:
        """(the word, the words)."""
        try:
            return self.stop_on(_EOF, self.raw_escapes)
        except ValueError as exc:
            shown = f"{self.text!r}: " if len(self.text) <= 200 else ""
            raise ValueError(f"failed to process {shown}{exc}") from None

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else _EOF

    def next(self) -> str:
        ch = self.peek()
        self.pos += 1 if ch else 0
        return ch

    def stop_on(self, stop: str, raw_escapes: bool) -> tuple[str, list[str]]:
        """Read up to ``stop`` (consumed; _EOF: the end), with escapes kept or not."""
        saved, self.raw_escapes = self.raw_escapes, raw_escapes
        try:
            return self._stop_on(stop)
        finally:
            self.raw_escapes = saved

    def _stop_on(self, stop: str) -> tuple[str, list[str]]:
        result: list[str] = []
        words = _Words()
        while (ch := self.peek()) != _EOF:
            if stop and ch == stop:
                self.next()
                return "".join(result), words.done()
            if ch == "$":
                value = self._dollar()
                result.append(value)
                words.add_string(value)
            elif ch == "<":
                marker = self._possible_heredoc()
                result.append(marker)
                words.add_raw(marker)
            elif ch in ("'", '"') and not self.skip_quotes:
                quoted = self._single_quote() if ch == "'" else self._double_quote()
                result.append(quoted)
                words.add_raw(quoted)
            else:
                self.next()
                if ch == self.escape:
                    if self.raw_escapes:
                        words.add_raw(ch)
                        result.append(ch)
                    ch = self.next()
                    if ch == _EOF:
                        break
                    words.add_raw(ch)
                else:
                    words.add_char(ch)
                result.append(ch)
        if stop:
            raise ValueError(f"unexpected end of statement while looking for matching {stop}")
        return "".join(result), words.done()

    def _until(self, stop: str, raw_escapes: bool, missing: str = "syntax error: missing '}'") -> str:
        try:
            return self.stop_on(stop, raw_escapes)[0]
        except ValueError:
            if self.peek() == _EOF:
                raise ValueError(missing) from None
            raise

    def _single_quote(self) -> str:
        opening = self.next()
        out = [opening] if self.raw_quotes else []
        while True:
            ch = self.next()
            if ch == _EOF:
                raise ValueError("unexpected end of statement while looking for matching single-quote")
            if ch == "'":
                return "".join(out + ([ch] if self.raw_quotes else []))
            out.append(ch)

    def _double_quote(self) -> str:
        opening = self.next()
        out = [opening] if self.raw_quotes else []
        while True:
            ch = self.peek()
            if ch == _EOF:
                raise ValueError("unexpected end of statement while looking for matching double-quote")
            if ch == '"':
                self.next()
                return "".join(out + ([ch] if self.raw_quotes else []))
            if ch == "$":
                out.append(self._dollar())
                continue
            self.next()
            if ch == self.escape:
                if self.raw_escapes:
                    out.append(ch)
                following = self.peek()
                if following == _EOF:
                    continue
                if following in ('"', "$", self.escape):
                    ch = self.next()
            out.append(ch)

    def _possible_heredoc(self) -> str:
        """``<`` alone, or ``<<`` with the spaces, tabs and CRs after it (part of the heredoc's word)."""
        self.next()
        if self.peek() != "<":
            return "<"
        self.next()
        spaces = ""
        while self.peek() in (" ", "\t", "\r"):
            spaces += self.next()
        return "<<" + spaces

    def _name(self) -> str:
        name = ""
        while (ch := self.peek()) != _EOF:
            if not name and _is_digit(ch):
                while _is_digit(self.peek()):
                    name += self.next()
                return name
            if not name and ch in "@*#?-$!0":
                return self.next()
            if not (ch.isalpha() or _is_digit(ch) or ch == "_"):
                break
            name += self.next()
        return name

    def _dollar(self) -> str:
        self.next()
        if self.peek() != "{":
            name = self._name()
            if not name:
                return "$"
            value = self.env.get(name)
            if value is None and self.skip_unset:
                return "$" + name
            return value or ""
        self.next()
        first = self.peek()
        if first == _EOF:
            raise ValueError("syntax error: missing '}'")
        if first in ("{", "}", ":"):
            raise ValueError("syntax error: bad substitution")
        name = self._name()
        ch = self.next()
        if ch == _EOF:
            raise ValueError("syntax error: missing '}'")
        if ch == "}":
            value = self.env.get(name)
            if value is None and self.skip_unset:
                return "${" + name + "}"
            return value or ""
        if ch == "/":
            return self._replace(name)
        return self._modifier(name, ch)

    def _modifier(self, name: str, ch: str) -> str:
        """``${name<op>word}`` after its first operator character ``ch``."""
        modifier, null_is_unset = ch, ch == ":"
        if null_is_unset:
            ch = self.next()
            modifier += ch
        elif ch not in ("+", "-", "?", "#", "%"):
            raise ValueError(f"unsupported modifier ({modifier}) in substitution")
        pattern = ch in ("#", "%")
        if null_is_unset and pattern:
            raise ValueError(f"unsupported modifier ({modifier}) in substitution")
        word = self._until("}", pattern)
        value = self.env.get(name)
        if value is None and self.skip_unset:
            return "${" + name + modifier + word + "}"
        missing = value is None or (null_is_unset and value == "")
        if ch == "-":
            return word if missing else value or ""
        if ch == "+":
            return "" if missing else word
        if ch == "?":
            if value is None:
                raise ValueError(f"{name}: {word or 'is not allowed to be unset'}")
            if missing:
                raise ValueError(f"{name}: {word or 'is not allowed to be empty'}")
            return value
        if ch in ("#", "%"):
            greedy = word.startswith(ch)
            word = word[1:] if greedy else word
            return _trim_suffix(word, value or "", greedy) if ch == "%" else _trim_prefix(word, value or "", greedy)
        raise ValueError(f"unsupported modifier ({modifier}) in substitution")

    def _replace(self, name: str) -> str:
        """``${name/pattern/replacement}`` and ``${name//pattern/replacement}``."""
        every = self.peek() == "/"
        if every:
            self.next()
        pattern = self._until("/", True, "syntax error: missing '/' in ${}")
        replacement = self._until("}", True)
        value = self.env.get(name)
        if value is None and self.skip_unset:
            return "${" + name + "/" + pattern + "/" + replacement + "}"
        regex = _shell_pattern(pattern, greedy=True, anchored=False)
        if every:
            return _replace_all(value or "", regex, replacement)
        match = regex.search(value or "")
        if match is None:
            return value or ""
        return (value or "")[:match.start()] + replacement + (value or "")[match.end():]


def _is_digit(ch: str) -> bool:
    return bool(ch) and unicodedata.category(ch) == "Nd"


def _shell_pattern(pattern: str, *, greedy: bool, anchored: bool) -> re.Pattern[str]:
    """``*`` and ``?`` wildcards as a regular expression, ``\\`` escaping ``*``, ``?``, ``\\``, ``}`` and ``/``."""
    out = ["^"] if anchored else []
    i = 0
    while i < len(pattern):
        tok = pattern[i]
        i += 1
        if tok == "*":
            out.append(".*" if greedy else ".*?")
        elif tok == "?":
            out.append(".")
        elif tok == "\\":
            following = pattern[i] if i < len(pattern) else ""
            if following in ("}", "/"):
                continue
            if following not in ("*", "?", "\\"):
                raise ValueError(f"invalid pattern ({pattern}) in substitution: invalid escape '\\{following}'")
            out.append("\\" + following)
            i += 1
        elif tok in "[]{}.+()|^$":
            out.append("\\" + tok)
        else:
            out.append(tok)
    return re.compile("".join(out))


def _trim_prefix(pattern: str, value: str, greedy: bool) -> str:
    match = _shell_pattern(pattern, greedy=greedy, anchored=True).match(value)
    return value[match.end():] if match else value


def _reverse_pattern(pattern: str) -> str:
    """The pattern reversed with each ``\\x`` pair kept in order, so a suffix can be trimmed as a prefix."""
    out = [""] * len(pattern)
    last, i = len(pattern) - 1, 0
    while i <= last:
        at = last - i
        if pattern[i] == "\\" and i != last:
            out[at - 1], out[at] = "\\", pattern[i + 1]
            i += 2
        else:
            out[at] = pattern[i]
            i += 1
    return "".join(out)


def _trim_suffix(pattern: str, value: str, greedy: bool) -> str:
    return _trim_prefix(_reverse_pattern(pattern), value[::-1], greedy)[::-1]


def _replace_all(value: str, regex: re.Pattern[str], template: str) -> str:
    """Go's Regexp.ReplaceAllString: an empty match right after a match is skipped, ``$0``/``$$`` expanded."""
    out: list[str] = []
    last_end, pos = 0, 0
    while pos <= len(value):
        match = regex.search(value, pos)
        if match is None:
            break
        start, end = match.span()
        out.append(value[last_end:start])
        if end > last_end or start == 0:
            out.append(_go_expand(template, match.group(0)))
        last_end = end
        width = 1 if pos < len(value) else 0  # always move on by one character at least
        if pos + width > end:
            pos += width
        elif pos + 1 > end:
            pos += 1
        else:
            pos = end
    out.append(value[last_end:])
    return "".join(out)


_TEMPLATE_NAME = re.compile(r"\{(\w+)\}|(\w+)")


def _go_expand(template: str, whole: str) -> str:
    """A Go replacement template with only group 0: ``$0``/``${0}`` the match, ``$$`` a dollar, other names nothing."""
    out, i = [], 0
    while (j := template.find("$", i)) >= 0:
        out.append(template[i:j])
        if template.startswith("$", j + 1):
            out.append("$")
            i = j + 2
            continue
        match = _TEMPLATE_NAME.match(template, j + 1)
        if match is None:
            out.append("$")
            i = j + 1
            continue
        if (match.group(1) or match.group(2)) == "0":
            out.append(whole)
        i = match.end()
    out.append(template[i:])
    return "".join(out)


def expand(word: str, env: Mapping[str, str], *, escape: str = "\\") -> str:
    """BuildKit's ProcessWord: quotes removed, escapes applied, variables substituted; ValueError when BuildKit errs."""
    return _Lexer(word, env, escape=escape).run()[0]


def expand_words(text: str, env: Mapping[str, str], *, escape: str = "\\") -> list[str]:
    """BuildKit's ProcessWords: ``text`` expanded as :func:`expand` does, split on unquoted whitespace."""
    return _Lexer(text, env, escape=escape).run()[1]


def expand_heredoc(body: str, env: Mapping[str, str]) -> str:
    """A COPY/ADD heredoc body with an unquoted delimiter, as BuildKit's ExpandRaw writes it: quotes kept as text."""
    return _Lexer(body, env, skip_quotes=True).run()[0]


def split_words(text: str, escape: str = "\\") -> list[str]:
    """BuildKit's parseWords (ENV, LABEL, ARG): split on unquoted whitespace, quotes and escapes kept for :func:`expand`."""
    words: list[str] = []
    word, quote, phase, blank_ok, i = "", "", "space", False, 0
    while i <= len(text):
        ch = text[i] if i < len(text) else _EOF
        if phase == "space":
            if ch == _EOF:
                break
            if _is_space(ch):
                i += 1
                continue
            phase = "word"
        if ch == _EOF:
            if blank_ok or word:
                words.append(word)
            break
        if phase == "word":
            if _is_space(ch):
                if blank_ok or word:
                    words.append(word)
                word, blank_ok, phase = "", False, "space"
                i += 1
                continue
            if ch in ("'", '"'):
                quote, blank_ok, phase = ch, True, "quote"
            if ch == escape:
                if i + 1 == len(text):
                    i += 1
                    continue
                word += ch
                i += 1
                ch = text[i]
            word += ch
            i += 1
            continue
        if ch == quote:
            phase = "word"
        if ch == escape and quote != "'":
            if i + 1 == len(text):
                phase = "word"
                i += 1
                continue
            word += ch
            i += 1
            ch = text[i]
        word += ch
        i += 1
    return words


# -- instructions -----------------------------------------------------------------------------------


def _extract_flags(line: str) -> tuple[str, list[str]]:
    """(the arguments after the leading ``--`` words, those words with quotes and backslashes removed)."""
    flags: list[str] = []
    word, quote, phase, blank_ok, pos = "", "", "space", False, 0
    while pos <= len(line):
        ch = line[pos] if pos < len(line) else _EOF
        if phase == "space":
            if ch == _EOF:
                break
            if _is_space(ch):
                pos += 1
                continue
            if ch != "-" or not line.startswith("-", pos + 1):
                return line[pos:], flags
            phase = "word"
        if ch == _EOF:
            if word != "--" and (blank_ok or word):
                flags.append(word)
            break
        if phase == "word":
            if _is_space(ch):
                if word == "--":
                    return line[pos:], flags
                if blank_ok or word:
                    flags.append(word)
                word, blank_ok, phase = "", False, "space"
            elif ch in ("'", '"'):
                quote, blank_ok, phase = ch, True, "quote"
            elif ch == "\\" and pos + 1 < len(line):
                pos += 1
                word += line[pos]
            elif ch != "\\":
                word += ch
            pos += 1
            continue
        if ch == quote:
            phase = "word"
        elif ch == "\\":
            if pos + 1 == len(line):
                phase = "word"
            else:
                pos += 1
                word += line[pos]
        else:
            word += ch
        pos += 1
    return "", flags


def _split_command(line: str) -> tuple[str, tuple[str, ...], str]:
    """(keyword as written, flags, arguments) of a logical line (splitCommand)."""
    parts = _TOKEN_WHITESPACE.split(_strip(line), maxsplit=1)
    if len(parts) < 2:
        return parts[0], (), ""
    args, flags = _extract_flags(parts[1])
    return parts[0], tuple(flags), _strip(args)


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


def _maybe_json(args: str, where: str, keyword: str) -> tuple[str, ...] | None:
    """The exec form of ``args``: the JSON array of strings it starts with, else None (shell form)."""
    text = _lstrip(args)
    if not text.startswith("["):
        return None
    try:
        value, _ = _JSON.raw_decode(text)
    except ValueError:
        return None
    if not isinstance(value, list):
        return None
    if not all(isinstance(item, str) for item in value):
        raise DockerfileError(where, keyword, "a JSON array of strings only (BuildKit refuses other elements)")
    return tuple(_LONE_SURROGATE.sub("\ufffd", item) for item in value)  # Go decodes a lone surrogate as U+FFFD


def _json_form(keyword: str, args: str, where: str) -> tuple[str, ...] | None:
    if keyword == "HEALTHCHECK":  # the JSON follows the type word (parseHealthConfig)
        end = next((i for i, ch in enumerate(args) if _is_space(ch)), len(args))
        return _maybe_json(args[end:], where, keyword) if end else None
    if keyword in JSON_KEYWORDS and args:
        return _maybe_json(args, where, keyword)
    return None


def _onbuild_trigger(args: str, where: str) -> tuple[str, tuple[str, ...] | None]:
    """(keyword, exec form) of the instruction an ONBUILD carries (parseSubCommand, parseOnBuild)."""
    written, _, inner_args = _split_command(args)
    inner = written.upper()
    if inner in ("ONBUILD", "FROM", "MAINTAINER"):
        raise DockerfileError(where, "ONBUILD", f"a trigger other than {inner} (BuildKit refuses ONBUILD {inner})")
    return inner, _json_form(inner, inner_args, where)


def _heredoc_word(word: str) -> tuple[str, bool, bool, int | None] | None:
    """(name, expand, chomp, fd) when one word of the line opens a heredoc (ParseHeredoc), else None."""
    match = _HEREDOC.fullmatch(word)
    if match is None or not match.group(3):
        return None
    rest = match.group(3)
    plain = _Lexer(rest, {}, skip_unset=True).run()[1]
    if len(plain) != 1:
        return None
    raw = _Lexer(rest, {}, skip_unset=True, raw_quotes=True).run()[1]
    quotes = plain[0].count("'") + plain[0].count('"')
    raw_quotes = raw[0].count("'") + raw[0].count('"')
    fd = int(match.group(1)) if match.group(1) else None
    return plain[0], quotes == raw_quotes, match.group(2) == "-", fd


def _heredoc_markers(line: str, where: str, keyword: str) -> list[tuple[str, bool, bool, int | None]]:
    """The heredocs a logical line opens, in order (heredocsFromLine)."""
    try:
        words = _Lexer(line, {}, raw_quotes=True, raw_escapes=True, skip_unset=True).run()[1]
    except ValueError:
        return []  # BuildKit reads no heredoc from a line its lexer cannot split
    found = []
    for word in words:
        try:
            marker = _heredoc_word(word)
        except ValueError as exc:
            raise DockerfileError(where, keyword, f"a heredoc delimiter it can read ({exc})") from None
        if marker is not None:
            found.append(marker)
    return found


def _read_heredoc(lines: list[str], i: int, marker: tuple[str, bool, bool, int | None], where: str, keyword: str) -> tuple[Heredoc, int]:
    """The heredoc whose body starts at ``lines[i]``, and the index after its delimiter line."""
    name, expand_body, chomp, fd = marker
    body: list[str] = []
    while i < len(lines):
        raw = lines[i]
        i += 1
        candidate = _trim_newline(raw)
        if (candidate.lstrip("\t") if chomp else candidate) == name:
            text = "".join(body)
            return Heredoc(name, _LEADING_TABS.sub("", text) if chomp else text, expand_body, chomp, fd), i
        body.append(raw)
    raise DockerfileError(where, keyword, f"a line {name!r} ending the heredoc <<{'-' if chomp else ''}{name} before the end of the file (unterminated heredoc)")


def _instruction(line: str, lines: list[str], i: int, lineno: int, source: str) -> tuple[Instruction, int]:
    """The instruction of one logical line, with the heredoc bodies that follow it; the index after them."""
    written, flags, args = _split_command(line)
    keyword = written.upper()
    where = f"{source}:{lineno}"
    if keyword not in KEYWORDS:
        raise DockerfileError(where, None, f"a Dockerfile instruction (unknown instruction: {written})")
    if not args and keyword not in EMPTY_ALLOWED:
        expected = "an image after FROM" if keyword == "FROM" else f"an argument after {keyword} ({keyword} requires at least one argument)"
        raise DockerfileError(where, keyword, expected)
    json_form = _json_form(keyword, args, where)
    carrier, carrier_json = _onbuild_trigger(args, where) if keyword == "ONBUILD" else (keyword, json_form)
    heredocs = []
    if "<<" in line and carrier in HEREDOC_KEYWORDS and carrier_json is None:  # canContainHeredoc
        for marker in _heredoc_markers(line, where, keyword):
            heredoc, i = _read_heredoc(lines, i, marker, where, keyword)
            heredocs.append(heredoc)
    return Instruction(lineno, i, keyword, flags, args, json_form, tuple(heredocs), source), i


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
    lines = _physical_lines(text)
    directives = _Directives(source)
    found: list[Instruction] = []
    i = 0
    while i < len(lines):
        lineno = i + 1
        token = _lstrip(_trim_newline(lines[i]))
        i += 1
        directives.feed(token, lineno)
        continuation = _CONTINUATION[directives.escape]
        line, ended = _trim_continuation("" if _is_comment(token) else token, continuation)
        if ended and not line:
            continue
        parts = [line]
        while not ended and i < len(lines):
            raw = _trim_newline(lines[i])
            i += 1
            if _is_comment(raw) or not _lstrip(raw):
                continue  # dropped inside a continuation, which goes on
            raw, ended = _trim_continuation(raw, continuation)
            parts.append(raw)
        instruction, i = _instruction("".join(parts), lines, i, lineno, source)
        found.append(instruction)
    _check_stages(found, source, len(lines))
    return Dockerfile(source, directives.escape, dict(directives.values), tuple(found))


def from_parts(instruction: Instruction) -> tuple[str, str | None]:
    """(the image as written, the stage name lower-cased or None) of a FROM; DockerfileError when BuildKit refuses its shape."""
    words = _TOKEN_WHITESPACE.split(instruction.args) if instruction.args else []
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
