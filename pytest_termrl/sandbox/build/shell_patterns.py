"""The ``${NAME#pat}``, ``%``, ``/`` substitutions' patterns, as BuildKit's shell lexer reads them.

[shell/lex.go: trimPrefix, trimSuffix, convertShellPatternToRegex, and Go's
Regexp.ReplaceAllString] ``*`` and ``?`` are the wildcards; ``#`` and ``%`` take the shortest
prefix or suffix, ``##`` and ``%%`` the longest; ``/`` replaces the first match, ``//`` every
one, the replacement read as Go's template (``$0`` the match, ``$$`` a dollar). Kept apart from
the lexer because the lexer only needs the three answers.
"""

from __future__ import annotations

import re

__all__ = ["replace", "trim_prefix", "trim_suffix"]


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


def trim_prefix(pattern: str, value: str, greedy: bool) -> str:
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


def trim_suffix(pattern: str, value: str, greedy: bool) -> str:
    return trim_prefix(_reverse_pattern(pattern), value[::-1], greedy)[::-1]


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



def replace(value: str, pattern: str, replacement: str, *, every: bool) -> str:
    """``${NAME/pattern/replacement}`` (the first match) or, ``every``, ``${NAME//pattern/replacement}``."""
    regex = _shell_pattern(pattern, greedy=True, anchored=False)
    if every:
        return _replace_all(value, regex, replacement)
    match = regex.search(value)
    if match is None:
        return value
    return value[:match.start()] + replacement + value[match.end():]
