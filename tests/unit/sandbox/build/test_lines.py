"""The Dockerfile's lines against BuildKit's rules: continuations, comments, CRLF, the BOM."""

from __future__ import annotations

from dockerfile_fixtures import second, steps
from pytest_termrl.sandbox.build.heredocs import Heredoc
from pytest_termrl.sandbox.build.parser import parse


# -- lines ------------------------------------------------------------------------------------------


def test_a_continuation_joins_the_next_line_as_written():
    # The escape and what follows it are cut; the next line keeps its leading spaces.
    assert steps("FROM a\nRUN echo a \\\n  && echo b\nUSER app\n") == [
        (1, 1, "FROM", "a"), (2, 3, "RUN", "echo a   && echo b"), (4, 4, "USER", "app"),
    ]


def test_spaces_and_tabs_after_the_escape_still_continue():
    assert second("RUN echo a \\ \t\n  b\n").args == "echo a   b"


def test_comments_and_blank_lines_inside_a_continuation_are_dropped_without_ending_it():
    assert steps("FROM a\nRUN echo a \\\n  # not part of it\n\n   \n  && echo b\n# a comment\nWORKDIR /app\n") == [
        (1, 1, "FROM", "a"), (2, 6, "RUN", "echo a   && echo b"), (8, 8, "WORKDIR", "/app"),
    ]


def test_the_backtick_escape_continues_lines_and_the_backslash_then_does_not():
    found = parse("# escape=`\nFROM a\nRUN dir c:\\\nRUN echo a `\n  b\n")
    assert found.escape == "`"
    assert [(i.lineno, i.args) for i in found.instructions] == [(2, "a"), (3, "dir c:\\"), (4, "echo a   b")]


def test_a_trailing_escape_on_the_last_line_ends_the_instruction_there():
    assert steps("FROM a\nRUN echo hi \\") == [(1, 1, "FROM", "a"), (2, 2, "RUN", "echo hi")]


def test_an_escaped_escape_at_the_end_is_no_continuation():
    assert steps("FROM a\nRUN echo \\\\\nUSER app\n") == [(1, 1, "FROM", "a"), (2, 2, "RUN", "echo \\\\"), (3, 3, "USER", "app")]


def test_an_escape_alone_on_a_line_inside_a_continuation_is_dropped():
    assert second("RUN echo a \\\n\\\n b\n").args == "echo a  b"


def test_crlf_line_endings_read_as_lf():
    found = parse("FROM a\r\nRUN echo a \\\r\n  b\r\nCOPY <<EOF /x\r\nline\r\nEOF\r\n").instructions
    assert [(i.keyword, i.args) for i in found] == [("FROM", "a"), ("RUN", "echo a   b"), ("COPY", "<<EOF /x")]
    assert found[2].heredocs == (Heredoc("EOF", "line\r\n", True, False, None),)  # body lines kept as written


def test_a_bom_at_the_start_is_dropped():
    found = parse("\ufeff# escape=`\nFROM a\n")
    assert (found.escape, found.directives, steps("\ufeffFROM a\n")) == ("`", {"escape": "`"}, [(1, 1, "FROM", "a")])


def test_leading_whitespace_before_keywords_and_comments_is_ignored():
    assert steps("   FROM a\n\t# a comment\n  \tRUN   echo  hi  \n") == [(1, 1, "FROM", "a"), (3, 3, "RUN", "echo  hi")]


def test_a_hash_after_the_start_of_a_line_is_no_comment():
    assert second("RUN echo hi # still the command\n").args == "echo hi # still the command"
