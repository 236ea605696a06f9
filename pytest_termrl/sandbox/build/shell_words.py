"""BuildKit's shell lexer: how a word's quotes, escapes and ``$`` variables read (shell/lex.go).

The builder expands ARG and ENV values, WORKDIR, USER, COPY sources and the like with it, so
they must come out as ``docker build`` makes them. [ProcessWord, ProcessWords, processStopOn,
processSingleQuote, processDoubleQuote, processDollar, processName, processPossibleHeredoc]

- Outside quotes the escape character takes the next character literally (and is dropped at
  the end); inside single quotes everything is literal; inside double quotes the escape
  only escapes ``"``, ``$`` and itself, and ``$`` still expands.
- ``$NAME`` and ``${NAME}`` expand (an unset name to nothing); ``$`` before anything that is
  not a name stays ``$``; ``$1``, ``$@``, ``$*``, ``$#``, ``$?``, ``$-``, ``$$``, ``$!``
  and ``$0`` are looked up as names (unset: nothing). ``${NAME-w}`` / ``${NAME:-w}`` (unset
  / unset or empty gives w), ``${NAME+w}`` / ``${NAME:+w}``, ``${NAME?msg}`` /
  ``${NAME:?msg}`` (an error), ``${NAME#pat}`` ``##`` ``%`` ``%%`` and ``${NAME/pat/repl}``,
  ``${NAME//pat/repl}`` (their patterns: shell_patterns.py); the words nest
  (``${A:-${B}}``); anything else in ``${}`` is an error.
- ProcessWords splits on unquoted whitespace after expansion, so an unquoted variable whose
  value holds spaces gives several words; ``""`` alone gives no word. An unquoted ``<<``
  keeps the spaces, tabs and ``\\r`` after it in its word (BuildKit 0.22, moby/buildkit#5817).
- COPY/ADD heredoc bodies with an unquoted delimiter expand with quotes left as text but
  the backslash still an escape (``\\$`` is ``$``, ``\\n`` is ``n``), as dispatch's
  ExpandRaw does (moby/buildkit#2442).

BuildKit's errors are ValueError here; the callers add the file and line.
"""

from __future__ import annotations

from collections.abc import Mapping

from .go_text import is_digit, is_space
from .shell_patterns import replace, trim_prefix, trim_suffix

__all__ = ["expand", "expand_heredoc", "expand_words", "literal_words"]

_EOF = ""


class _Words:
    """Words split on unquoted whitespace as the lexer builds them (wordsStruct): an empty word is never kept."""

    def __init__(self) -> None:
        self.words: list[str] = []
        self.buf = ""

    def add_char(self, ch: str) -> None:
        """An unquoted character: whitespace ends the word."""
        if not is_space(ch):
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
            if not name and is_digit(ch):
                while is_digit(self.peek()):
                    name += self.next()
                return name
            if not name and ch in "@*#?-$!0":
                return self.next()
            if not (ch.isalpha() or is_digit(ch) or ch == "_"):
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
            return trim_suffix(word, value or "", greedy) if ch == "%" else trim_prefix(word, value or "", greedy)
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
        return replace(value or "", pattern, replacement, every=every)


def expand(word: str, env: Mapping[str, str], *, escape: str = "\\") -> str:
    """BuildKit's ProcessWord: quotes removed, escapes applied, variables substituted; ValueError when BuildKit errs."""
    return _Lexer(word, env, escape=escape).run()[0]


def expand_words(text: str, env: Mapping[str, str], *, escape: str = "\\") -> list[str]:
    """BuildKit's ProcessWords: ``text`` expanded as :func:`expand` does, split on unquoted whitespace."""
    return _Lexer(text, env, escape=escape).run()[1]


def expand_heredoc(body: str, env: Mapping[str, str]) -> str:
    """A COPY/ADD heredoc body with an unquoted delimiter, as BuildKit's ExpandRaw writes it: quotes kept as text."""
    return _Lexer(body, env, skip_quotes=True).run()[0]


def literal_words(text: str, *, raw_quotes: bool = False, raw_escapes: bool = False) -> list[str]:
    """ProcessWords with every variable left as written, quotes and escapes kept when asked: how heredoc markers are found."""
    return _Lexer(text, {}, raw_quotes=raw_quotes, raw_escapes=raw_escapes, skip_unset=True).run()[1]
