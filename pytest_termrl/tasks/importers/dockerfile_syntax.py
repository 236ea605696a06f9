"""Docker's own rules for reading a Dockerfile: instructions, continuations, heredocs, words and variables.

What Docker does, and so what the planner must do before it judges a step:

- A line ending in the escape character (``\\``, or the one a ``# escape=`` directive at
  the top names) continues on the next; comment lines and empty lines inside a continued
  instruction are dropped, not ending it.
- ``RUN``, ``COPY`` and ``ADD`` may carry heredocs (``<<EOF``, ``<<-EOF``, ``<<'EOF'``):
  the lines after the instruction up to the delimiter are its bodies.
- ``RUN ["a", "b"]`` is exec form only when it is a valid JSON array of strings; anything
  else, ``RUN [ -e x ] && y`` included, is shell form.
- ``$NAME``, ``${NAME}``, ``${NAME:-word}``, ``${NAME-word}``, ``${NAME:+word}`` and
  ``${NAME+word}`` are replaced by ARG and ENV values in FROM, COPY, ADD, ENV, ARG, WORKDIR
  and USER (never inside single quotes; ``\\$`` is a literal dollar). ``RUN`` is left to
  its shell, which sees the ARG and ENV values as variables.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_DIRECTIVE = re.compile(r"^#\s*(\w+)\s*=\s*(\S+)\s*$")
_HEREDOC = re.compile(r"<<(-?)([\"']?)([A-Za-z_][\w.-]*)\2")
HEREDOC_KEYWORDS = {"RUN", "COPY", "ADD"}


@dataclass(frozen=True)
class Heredoc:
    word: str
    body: str
    """The lines up to the delimiter, each ending in a newline (tabs stripped for ``<<-``)."""
    quoted: bool
    """A quoted delimiter (``<<'EOF'``): the body is taken as written, never expanded."""


@dataclass(frozen=True)
class Instruction:
    lineno: int
    keyword: str
    """Upper-cased: RUN, COPY, FROM, ..."""
    rest: str
    """Everything after the keyword, continuations joined (heredoc markers kept)."""
    heredocs: tuple[Heredoc, ...] = field(default=())


def instructions(text: str) -> list[Instruction]:
    """The instructions of a Dockerfile, in order, as Docker's parser reads them."""
    lines = text.splitlines()
    escape = "\\"
    start = 0
    for index, raw in enumerate(lines):  # parser directives: only at the very top
        match = _DIRECTIVE.match(raw.strip())
        if not match:
            break
        if match.group(1).lower() == "escape" and match.group(2) in ("\\", "`"):
            escape = match.group(2)
        start = index + 1
    out: list[Instruction] = []
    i = start
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        lineno, parts = i + 1, []
        while True:
            line = lines[i].rstrip()
            i += 1
            if line.endswith(escape):
                parts.append(line[: -len(escape)])
                while i < len(lines) and (not lines[i].strip() or lines[i].strip().startswith("#")):
                    i += 1  # dropped inside a continuation, as Docker does
                if i < len(lines):
                    continue
            else:
                parts.append(line)
            break
        logical = " ".join(p.strip() for p in parts if p.strip())
        keyword, _, rest = logical.partition(" ")
        keyword, rest = keyword.upper(), rest.strip()
        heredocs: list[Heredoc] = []
        if keyword in HEREDOC_KEYWORDS and not rest.startswith("["):
            for match in _HEREDOC.finditer(rest):
                strip_tabs, quote, word = match.group(1) == "-", match.group(2), match.group(3)
                body = []
                while i < len(lines):
                    line = lines[i]
                    i += 1
                    if (line.lstrip("\t") if strip_tabs else line).rstrip("\r") == word:
                        break
                    body.append((line.lstrip("\t") if strip_tabs else line) + "\n")
                heredocs.append(Heredoc(word, "".join(body), bool(quote)))
        out.append(Instruction(lineno, keyword, rest, tuple(heredocs)))
    return out


def exec_form(rest: str) -> list[str] | None:
    """The words of an exec-form (JSON array of strings) argument; None when it is shell form."""
    if not rest.startswith("["):
        return None
    try:
        value = json.loads(rest)
    except ValueError:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _variable(text: str, i: int, env: dict[str, str]) -> tuple[str, int]:
    """(the value of the variable reference at text[i] == '$', the index after it)."""
    if i + 1 < len(text) and text[i + 1] == "{":
        close = text.find("}", i + 2)
        if close < 0:
            return text[i:], len(text)
        inner = text[i + 2:close]
        match = _NAME.match(inner)
        if not match:
            return text[i:close + 1], close + 1
        name, op = match.group(0), inner[match.end():]
        value = env.get(name)
        if op.startswith(":-"):
            return (value if value else substitute(op[2:], env)), close + 1
        if op.startswith("-"):
            return (value if value is not None else substitute(op[1:], env)), close + 1
        if op.startswith(":+"):
            return (substitute(op[2:], env) if value else ""), close + 1
        if op.startswith("+"):
            return (substitute(op[1:], env) if value is not None else ""), close + 1
        return value or "", close + 1
    match = _NAME.match(text, i + 1)
    if not match:
        return "$", i + 1
    return env.get(match.group(0), ""), match.end()


def substitute(text: str, env: dict[str, str]) -> str:
    """``text`` with ARG/ENV references replaced; quotes kept, single-quoted spans left alone."""
    out, i, quote = [], 0, None
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and quote != "'":
            out.append(text[i + 1] if text[i + 1] == "$" else text[i:i + 2])
            i += 2
        elif ch in "'\"" and quote in (None, ch):
            quote = None if quote else ch
            out.append(ch)
            i += 1
        elif ch == "$" and quote != "'":
            value, i = _variable(text, i, env)
            out.append(value)
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def words(text: str, env: dict[str, str]) -> list[str]:
    """Split on unquoted whitespace, remove quotes and escapes, substitute variables (as Docker's lexer)."""
    result: list[str] = []
    current: list[str] = []
    has_word, i, quote = False, 0, None
    while i < len(text):
        ch = text[i]
        if quote is None and ch.isspace():
            if has_word:
                result.append("".join(current))
            current, has_word = [], False
            i += 1
            continue
        has_word = True
        if ch == "\\" and i + 1 < len(text) and quote != "'":
            current.append(text[i + 1])
            i += 2
        elif ch in "'\"" and quote in (None, ch):
            quote = None if quote else ch
            i += 1
        elif ch == "$" and quote != "'":
            value, i = _variable(text, i, env)
            current.append(value)
        else:
            current.append(ch)
            i += 1
    if has_word:
        result.append("".join(current))
    return result
