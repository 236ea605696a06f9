"""An instruction's line split BuildKit's way: exec form, flags, and ENV/LABEL/ARG words."""

from __future__ import annotations

import pytest

from dockerfile_fixtures import ENV, second
from pytest_termrl.sandbox.build.arguments import split_words
from pytest_termrl.sandbox.build.parser import DockerfileError, from_parts, parse
from pytest_termrl.sandbox.build.shell_words import expand


# -- exec form --------------------------------------------------------------------------------------


@pytest.mark.parametrize("line, words", [
    ('RUN ["echo", "a b"]', ("echo", "a b")),
    ("CMD []", ()),
    ('ENTRYPOINT ["/bin/sh", "-c"]', ("/bin/sh", "-c")),
    ('CMD ["run"] and this is ignored', ("run",)),  # Go's decoder stops after the first value
    ('SHELL ["bash", "-eu", "-c"]', ("bash", "-eu", "-c")),
    ('COPY --chown=app ["a b", "/d/"]', ("a b", "/d/")),
    ('VOLUME ["/data"]', ("/data",)),
    ('HEALTHCHECK --interval=5s CMD ["curl", "-f", "x"]', ("curl", "-f", "x")),
    ('RUN ["\\u00e9t\\u00e9"]', ("été",)),
])
def test_a_json_array_of_strings_is_exec_form(line, words):
    assert second(line + "\n").json == words


@pytest.mark.parametrize("line", [
    "RUN [ -e x ] && y",
    'CMD ["a", "b"',
    "RUN [NaN]",
    "CMD echo '[1]'",
    "SHELL bash -c",
    "HEALTHCHECK NONE",
    'LABEL x=["a"]',
    'WORKDIR ["x"]',
])
def test_anything_else_is_shell_form(line):
    assert second(line + "\n").json is None


@pytest.mark.parametrize("line", ['CMD ["a", 1]', "RUN [null]", 'ENTRYPOINT [["a"]]', 'COPY ["a", true]', 'ONBUILD RUN ["a", 2]'])
def test_a_json_array_with_a_non_string_is_an_error_as_in_buildkit(line):
    with pytest.raises(DockerfileError) as info:
        parse(f"FROM a\n{line}\n")
    assert info.value.path == "Dockerfile:2" and "strings only" in info.value.expected


# -- flags ------------------------------------------------------------------------------------------


def test_copy_flags_are_split_from_the_arguments():
    step = second("COPY --from=build --chown=app:app --chmod=0755 a b /d/\n")
    assert (step.flags, step.args) == (("--from=build", "--chown=app:app", "--chmod=0755"), "a b /d/")
    assert (step.flag("from"), step.flag("chown"), step.flag("chmod"), step.flag("link")) == ("build", "app:app", "0755", None)


def test_bare_flags_have_an_empty_value():
    step = second("COPY --link --parents --exclude=*.pyc src/ /app/\n")
    assert (step.flag("link"), step.flag("parents"), step.flag("exclude"), step.args) == ("", "", "*.pyc", "src/ /app/")


def test_run_mount_and_the_last_repeated_flag_wins():
    step = second("RUN --mount=type=cache,target=/root/.cache --network=none --security=insecure \\\n"
                   "    --mount=type=secret,id=tok pip install x\n")
    assert step.flags == ("--mount=type=cache,target=/root/.cache", "--network=none", "--security=insecure", "--mount=type=secret,id=tok")
    assert (step.flag("mount"), step.flag("network"), step.args) == ("type=secret,id=tok", "none", "pip install x")


def test_add_flags():
    step = second("ADD --keep-git-dir --checksum=sha256:abc https://example.org/x.git /src\n")
    assert (step.flag("keep-git-dir"), step.flag("checksum"), step.args) == ("", "sha256:abc", "https://example.org/x.git /src")


def test_from_platform_is_kept_unexpanded_and_as_name_is_in_args():
    step = parse("FROM --platform=$BUILDPLATFORM golang:1.22 AS Build\n").instructions[0]
    assert (step.flags, step.args, step.flag("platform")) == (("--platform=$BUILDPLATFORM",), "golang:1.22 AS Build", "$BUILDPLATFORM")
    assert from_parts(step) == ("golang:1.22", "build")


def test_quotes_and_escapes_in_flags_are_removed_as_buildkit_removes_them():
    assert second('COPY --chown="app user" --chmod=\'07\'55 a /d\n').flags == ("--chown=app user", "--chmod=0755")


@pytest.mark.parametrize("line, flags, args", [
    ("RUN -- --not-a-flag", (), "--not-a-flag"),  # a bare -- ends the flags
    ("RUN -x y", (), "-x y"),  # one dash is no flag
    ("RUN --network=none", ("--network=none",), ""),
    ("RUN echo --later", (), "echo --later"),
])
def test_only_leading_double_dash_words_are_flags(line, flags, args):
    step = second(line + "\n")
    assert (step.flags, step.args) == (flags, args)


# -- ENV, LABEL and ARG words ----------------------------------------------------------------------


def test_split_words_keeps_quotes_for_expand():
    words = split_words('A="a b" B=c\\ d   C=\'$A\'')
    assert words == ['A="a b"', "B=c\\ d", "C='$A'"]
    assert [expand(w, ENV) for w in words] == ["A=a b", "B=c d", "C=$A"]
