"""What the Dockerfile parser's tests share: a file's instructions in short, the one after FROM, an environment.

Each case is a small Dockerfile (or word) whose reading by BuildKit's frontend was taken from
its source (moby/buildkit frontend/dockerfile: parser/parser.go, parser/directives.go,
parser/split_command.go, parser/line_parsers.go, instructions/parse.go, shell/lex.go).
"""

from __future__ import annotations

from pytest_termrl.sandbox.build.parser import Instruction, parse


def steps(text: str) -> list[tuple[int, int, str, str]]:
    """(line, last line, keyword, args) of each instruction."""
    return [(i.lineno, i.end_lineno, i.keyword, i.args) for i in parse(text).instructions]


def second(text: str) -> Instruction:
    """The instruction after the FROM line that every case starts with."""
    return parse("FROM base\n" + text).instructions[1]


ENV = {"A": "x y", "EMPTY": "", "P": "/usr/local/bin", "F": "pkg.tar.gz", "S": "banana", "T": "<$0|$$>", "1": "one"}
