"""The Dockerfile parser against BuildKit's rules: directives, FROM, the instructions it refuses, keywords."""

from __future__ import annotations

import pytest

from dockerfile_fixtures import steps
from pytest_termrl.errors import TaskFormatError
from pytest_termrl.sandbox.build.parser import DockerfileError, from_parts, keyword_list, parse


# -- parser directives ------------------------------------------------------------------------------


def test_the_three_directives_are_read_with_their_keys_lower_cased():
    found = parse("# SYNTAX=docker/dockerfile:1\n#Escape = `\n  # check = skip=JSONArgsRecommended;error=true  \nFROM a\n")
    assert found.directives == {"syntax": "docker/dockerfile:1", "escape": "`", "check": "skip=JSONArgsRecommended;error=true"}
    assert found.escape == "`"


@pytest.mark.parametrize("text", [
    "FROM a\n# escape=`\nRUN echo a `\n",  # after an instruction
    "\n# escape=`\nFROM a\nRUN echo a `\n",  # after a blank line
    "# a comment\n# escape=`\nFROM a\nRUN echo a `\n",  # after another comment
    "# unknown=1\n# escape=`\nFROM a\nRUN echo a `\n",  # an unknown directive is a comment and ends them
])
def test_a_directive_after_the_top_is_a_comment(text):
    found = parse(text)
    assert (found.escape, found.directives, found.instructions[-1].args) == ("\\", {}, "echo a `")


def test_a_repeated_directive_is_an_error_naming_its_line():
    with pytest.raises(DockerfileError) as info:
        parse("# syntax=docker/dockerfile:1\n# ESCAPE=`\n# escape=\\\nFROM a\n")
    assert info.value.path == "Dockerfile:3" and "one 'escape' parser directive only" in info.value.expected


def test_an_escape_directive_other_than_backslash_or_backtick_is_an_error():
    with pytest.raises(DockerfileError) as info:
        parse("# escape=x\nFROM a\n")
    assert (info.value.path, info.value.field) == ("Dockerfile:1", None) and "not 'x'" in info.value.expected

# -- FROM -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("line, parts", [
    ("FROM debian:12", ("debian:12", None)),
    ("FROM debian:12 AS Builder", ("debian:12", "builder")),
    ("FROM ${BASE} as base-1.x_y", ("${BASE}", "base-1.x_y")),
    ("FROM scratch\tAS\tout", ("scratch", "out")),
])
def test_from_parts(line, parts):
    assert from_parts(parse(line + "\n").instructions[0]) == parts


@pytest.mark.parametrize("line, expected", [
    ("FROM a AS", "a stage name after AS"),
    ("FROM a b", "FROM requires either one or three arguments"),
    ("FROM a AS b c", "FROM requires either one or three arguments"),
    ("FROM a FOR b", "FROM requires either one or three arguments"),
    ("FROM a AS 1st", "not '1st'"),
])
def test_from_parts_refuses_what_buildkit_refuses(line, expected):
    with pytest.raises(DockerfileError) as info:
        from_parts(parse(f"ARG X=1\n{line}\n").instructions[1])
    assert (info.value.path, info.value.field) == ("Dockerfile:2", "FROM") and expected in info.value.expected


# -- errors -----------------------------------------------------------------------------------------


def test_an_unknown_instruction_is_an_error_naming_its_line():
    with pytest.raises(DockerfileError) as info:
        parse("FROM a\nRUN ok\nCOPPY a b\n", "tasks/t/Dockerfile")
    assert (info.value.path, info.value.field) == ("tasks/t/Dockerfile:3", None) and "unknown instruction: COPPY" in info.value.expected
    assert isinstance(info.value, TaskFormatError)


@pytest.mark.parametrize("text", ["", "\n\n", "# syntax=docker/dockerfile:1\n# just a comment\n"])
def test_a_file_without_instructions_is_an_error(text):
    with pytest.raises(DockerfileError, match="file with no instructions"):
        parse(text)


def test_only_arg_may_come_before_the_first_from():
    assert [i.keyword for i in parse("ARG BASE=debian\narg TAG=12\nFROM $BASE:$TAG\n").instructions] == ["ARG", "ARG", "FROM"]
    with pytest.raises(DockerfileError) as info:
        parse("ARG X=1\nRUN echo\nFROM a\n")
    assert (info.value.path, info.value.field) == ("Dockerfile:2", "RUN") and "FROM line before RUN" in info.value.expected
    with pytest.raises(DockerfileError, match="no build stage"):
        parse("ARG X=1\n")


def test_from_without_an_image_names_its_line():
    with pytest.raises(DockerfileError) as info:
        parse("FROM a\nRUN x\nFROM   \n")
    assert (str(info.value), info.value.path) == ("Dockerfile:3: field 'FROM': an image after FROM", "Dockerfile:3")


@pytest.mark.parametrize("keyword", [
    "WORKDIR", "COPY", "ADD", "ENV", "ARG", "USER", "EXPOSE", "LABEL", "VOLUME", "SHELL", "HEALTHCHECK", "ONBUILD",
    "MAINTAINER", "STOPSIGNAL",
])
def test_a_bare_keyword_that_needs_arguments_names_its_line(keyword):
    with pytest.raises(DockerfileError) as info:
        parse(f"FROM a\n{keyword.lower()}\n")
    assert (info.value.path, info.value.field) == ("Dockerfile:2", keyword) and "requires at least one argument" in info.value.expected


def test_run_cmd_and_entrypoint_may_be_bare():
    assert steps("FROM a\nRUN\nCMD\nENTRYPOINT\nRUN --network=none\n")[1:] == [
        (2, 2, "RUN", ""), (3, 3, "CMD", ""), (4, 4, "ENTRYPOINT", ""), (5, 5, "RUN", ""),
    ]


@pytest.mark.parametrize("trigger", ["ONBUILD echo", "FROM b", "MAINTAINER me"])
def test_onbuild_refuses_the_triggers_buildkit_refuses(trigger):
    with pytest.raises(DockerfileError) as info:
        parse(f"FROM a\nONBUILD {trigger}\n")
    assert (info.value.path, info.value.field) == ("Dockerfile:2", "ONBUILD")


@pytest.mark.parametrize("written", ["from", "From", "fRoM", "FROM"])
def test_keywords_are_read_in_any_case(written):
    assert parse(f"{written} a\nrun echo\n").instructions[0].keyword == "FROM"
    assert parse(f"{written} a\nrUn echo\n").instructions[1].keyword == "RUN"


def test_the_source_and_keywords():
    step = parse("FROM a\n", "x/Dockerfile.dev").instructions[0]
    assert (step.where(), step.source) == ("x/Dockerfile.dev:1", "x/Dockerfile.dev")
    assert keyword_list() == {
        "ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK", "LABEL", "MAINTAINER", "ONBUILD",
        "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR",
    }
