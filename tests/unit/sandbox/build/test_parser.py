"""The Dockerfile parser against BuildKit's rules: lines, directives, heredocs, exec form, flags, words and variables.

Each case is a small Dockerfile (or word) whose reading by BuildKit's frontend was taken from
its source (moby/buildkit frontend/dockerfile: parser/parser.go, parser/directives.go,
parser/split_command.go, parser/line_parsers.go, instructions/parse.go, shell/lex.go).
"""

from __future__ import annotations

import pytest

from pytest_termrl.errors import TaskFormatError
from pytest_termrl.sandbox.build.parser import (
    DockerfileError,
    Heredoc,
    Instruction,
    expand,
    expand_heredoc,
    expand_words,
    from_parts,
    keyword_list,
    parse,
    split_words,
)


def _steps(text: str) -> list[tuple[int, int, str, str]]:
    """(line, last line, keyword, args) of each instruction."""
    return [(i.lineno, i.end_lineno, i.keyword, i.args) for i in parse(text).instructions]


def _second(text: str) -> Instruction:
    """The instruction after the FROM line that every case starts with."""
    return parse("FROM base\n" + text).instructions[1]


# -- lines ------------------------------------------------------------------------------------------


def test_a_continuation_joins_the_next_line_as_written():
    # The escape and what follows it are cut; the next line keeps its leading spaces.
    assert _steps("FROM a\nRUN echo a \\\n  && echo b\nUSER app\n") == [
        (1, 1, "FROM", "a"), (2, 3, "RUN", "echo a   && echo b"), (4, 4, "USER", "app"),
    ]


def test_spaces_and_tabs_after_the_escape_still_continue():
    assert _second("RUN echo a \\ \t\n  b\n").args == "echo a   b"


def test_comments_and_blank_lines_inside_a_continuation_are_dropped_without_ending_it():
    assert _steps("FROM a\nRUN echo a \\\n  # not part of it\n\n   \n  && echo b\n# a comment\nWORKDIR /app\n") == [
        (1, 1, "FROM", "a"), (2, 6, "RUN", "echo a   && echo b"), (8, 8, "WORKDIR", "/app"),
    ]


def test_the_backtick_escape_continues_lines_and_the_backslash_then_does_not():
    found = parse("# escape=`\nFROM a\nRUN dir c:\\\nRUN echo a `\n  b\n")
    assert found.escape == "`"
    assert [(i.lineno, i.args) for i in found.instructions] == [(2, "a"), (3, "dir c:\\"), (4, "echo a   b")]


def test_a_trailing_escape_on_the_last_line_ends_the_instruction_there():
    assert _steps("FROM a\nRUN echo hi \\") == [(1, 1, "FROM", "a"), (2, 2, "RUN", "echo hi")]


def test_an_escaped_escape_at_the_end_is_no_continuation():
    assert _steps("FROM a\nRUN echo \\\\\nUSER app\n") == [(1, 1, "FROM", "a"), (2, 2, "RUN", "echo \\\\"), (3, 3, "USER", "app")]


def test_an_escape_alone_on_a_line_inside_a_continuation_is_dropped():
    assert _second("RUN echo a \\\n\\\n b\n").args == "echo a  b"


def test_crlf_line_endings_read_as_lf():
    found = parse("FROM a\r\nRUN echo a \\\r\n  b\r\nCOPY <<EOF /x\r\nline\r\nEOF\r\n").instructions
    assert [(i.keyword, i.args) for i in found] == [("FROM", "a"), ("RUN", "echo a   b"), ("COPY", "<<EOF /x")]
    assert found[2].heredocs == (Heredoc("EOF", "line\r\n", True, False, None),)  # body lines kept as written


def test_a_bom_at_the_start_is_dropped():
    found = parse("\ufeff# escape=`\nFROM a\n")
    assert (found.escape, found.directives, _steps("\ufeffFROM a\n")) == ("`", {"escape": "`"}, [(1, 1, "FROM", "a")])


def test_leading_whitespace_before_keywords_and_comments_is_ignored():
    assert _steps("   FROM a\n\t# a comment\n  \tRUN   echo  hi  \n") == [(1, 1, "FROM", "a"), (3, 3, "RUN", "echo  hi")]


@pytest.mark.parametrize("written", ["from", "From", "fRoM", "FROM"])
def test_keywords_are_read_in_any_case(written):
    assert parse(f"{written} a\nrun echo\n").instructions[0].keyword == "FROM"
    assert parse(f"{written} a\nrUn echo\n").instructions[1].keyword == "RUN"


def test_a_hash_after_the_start_of_a_line_is_no_comment():
    assert _second("RUN echo hi # still the command\n").args == "echo hi # still the command"


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


# -- heredocs ---------------------------------------------------------------------------------------


def test_the_reported_heredoc_is_one_run_and_no_second_stage():
    found = parse(
        "FROM python:3.12\n"
        "RUN cat > /home/user/app/x.py << 'EOF'\n"
        "from datetime import datetime\n"
        "FROM ubuntu\n"
        "EOF\n"
    ).instructions
    assert [(i.keyword, i.lineno, i.end_lineno) for i in found] == [("FROM", 1, 1), ("RUN", 2, 5)]
    assert found[1].args == "cat > /home/user/app/x.py << 'EOF'"
    assert found[1].heredocs == (Heredoc("EOF", "from datetime import datetime\nFROM ubuntu\n", False, False, None),)


def test_a_heredoc_in_run_takes_the_lines_up_to_its_delimiter():
    step = _second("RUN <<EOF\necho one\necho two\nEOF\nUSER app\n")
    assert (step.args, step.end_lineno) == ("<<EOF", 5)
    assert step.heredocs == (Heredoc("EOF", "echo one\necho two\n", True, False, None),)


def test_a_chomped_heredoc_drops_leading_tabs_of_its_body_and_delimiter():
    step = _second("RUN cat <<-EOT > notes.txt\n\tindented\n\t\ttwice\tinner tab\n  spaces kept\n\t\tEOT\n")
    assert step.heredocs == (Heredoc("EOT", "indented\ntwice\tinner tab\n  spaces kept\n", True, True, None),)


@pytest.mark.parametrize("marker, name, expands", [
    ("<<EOF", "EOF", True),
    ("<<'EOF'", "EOF", False),
    ('<<"EOF"', "EOF", False),
    ('<<E"O"F', "EOF", False),  # any quoting in the word
    ("<<E\\'OF", "E'OF", True),  # an escaped quote is no quoting
    ("<<$EOF", "$EOF", True),  # variables are not expanded in the delimiter
    ("<< EOF", "EOF", True),  # a space after << (BuildKit 0.22, moby/buildkit#5817)
    ("<< 'EOF'", "EOF", False),
    ("<<\t\"EOF\"", "EOF", False),
])
def test_the_delimiter_word_gives_the_name_and_whether_the_body_expands(marker, name, expands):
    step = _second(f"COPY {marker} /x\nbody $A\n{name}\n")
    assert step.heredocs == (Heredoc(name, "body $A\n", expands, False, None),)


def test_a_space_after_the_chomp_dash_opens_no_heredoc():
    # `<<-` and `EOF` are two words, so the body lines are instructions.
    with pytest.raises(DockerfileError) as info:
        parse("FROM a\nRUN cat <<- EOF\nhello\nEOF\n")
    assert info.value.path == "Dockerfile:3" and "unknown instruction: hello" in info.value.expected


def test_several_heredocs_on_one_line_are_read_in_order():
    run = _second("RUN <<A cat && <<B cat\nfirst\nA\nsecond\nB\n")
    assert [(d.name, d.body) for d in run.heredocs] == [("A", "first\n"), ("B", "second\n")]
    copy = _second("COPY <<F1 <<F2 /dest/\none\nF1\ntwo\nF2\n")
    assert (copy.args, [(d.name, d.body) for d in copy.heredocs]) == ("<<F1 <<F2 /dest/", [("F1", "one\n"), ("F2", "two\n")])


def test_each_body_ends_only_at_its_own_delimiter():
    copy = _second("COPY <<X <<Y /dest\nY\nX\nX\nY\n")
    assert [(d.name, d.body) for d in copy.heredocs] == [("X", "Y\n"), ("Y", "X\n")]


@pytest.mark.parametrize("marker, fd", [("3<<EOF", 3), ("0<<EOF", 0), ("<<EOF", None), ("12<<-EOF", 12)])
def test_a_leading_number_is_the_heredocs_file_descriptor(marker, fd):
    step = _second(f"RUN cat {marker}\nx\nEOF\n")
    assert [(d.name, d.fd) for d in step.heredocs] == [("EOF", fd)]


def test_a_heredoc_after_a_line_continuation_starts_after_the_whole_instruction():
    step = _second("RUN cat <<EOF \\\n  > /x\nhello\nEOF\n")
    assert (step.args, step.lineno, step.end_lineno) == ("cat <<EOF   > /x", 2, 5)
    assert step.heredocs == (Heredoc("EOF", "hello\n", True, False, None),)


def test_instruction_words_in_a_body_stay_body_text():
    found = parse("FROM a\nRUN python3 - <<'PY'\nfrom datetime import datetime\nFROM ubuntu\nRUN rm -rf /\nENV X=1\n# not a comment here\n\nPY\nUSER app\n")
    assert [i.keyword for i in found.instructions] == ["FROM", "RUN", "USER"]
    assert found.instructions[1].heredocs[0].body == "from datetime import datetime\nFROM ubuntu\nRUN rm -rf /\nENV X=1\n# not a comment here\n\n"


def test_a_delimiter_line_with_trailing_spaces_is_a_body_line():
    step = _second("RUN cat <<EOF\nEOF  \nEOF\n")
    assert step.heredocs == (Heredoc("EOF", "EOF  \n", True, False, None),)


def test_an_unterminated_heredoc_is_an_error_naming_its_delimiter_and_line():
    with pytest.raises(DockerfileError) as info:
        parse("FROM a\nRUN cat <<END\nline\nEND \n")
    assert (info.value.path, info.value.field) == ("Dockerfile:2", "RUN")
    assert "'END'" in info.value.expected and "unterminated heredoc" in info.value.expected


@pytest.mark.parametrize("line", [
    "RUN echo '<<EOF'",  # quoted: the lexer's word starts with a quote
    'RUN echo "<<EOF"',
    "RUN cat<<EOF",  # attached to another word
    "RUN cat <<<EOF",  # a here-string
    "RUN cat <<''",  # an empty delimiter
    'RUN ["cat", "<<EOF"]',  # exec form
    "ENV A=<<EOF",  # instructions other than RUN, COPY and ADD
    "CMD cat <<EOF",
    "LABEL x=<<EOF",
])
def test_no_heredoc_where_buildkit_sees_none(line):
    found = parse(f"FROM a\n{line}\nUSER app\n").instructions
    assert [(i.keyword, i.heredocs) for i in found[1:]] == [(line.split()[0], ()), ("USER", ())]


def test_add_and_onbuild_run_open_heredocs():
    add = _second("ADD <<EOF /etc/x\nx\nEOF\n")
    onbuild = _second("ONBUILD RUN <<EOF\necho later\nEOF\n")
    assert (add.heredocs[0].body, onbuild.args, onbuild.heredocs[0].body) == ("x\n", "RUN <<EOF", "echo later\n")


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
    assert _second(line + "\n").json == words


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
    assert _second(line + "\n").json is None


@pytest.mark.parametrize("line", ['CMD ["a", 1]', "RUN [null]", 'ENTRYPOINT [["a"]]', 'COPY ["a", true]', 'ONBUILD RUN ["a", 2]'])
def test_a_json_array_with_a_non_string_is_an_error_as_in_buildkit(line):
    with pytest.raises(DockerfileError) as info:
        parse(f"FROM a\n{line}\n")
    assert info.value.path == "Dockerfile:2" and "strings only" in info.value.expected


# -- flags ------------------------------------------------------------------------------------------


def test_copy_flags_are_split_from_the_arguments():
    step = _second("COPY --from=build --chown=app:app --chmod=0755 a b /d/\n")
    assert (step.flags, step.args) == (("--from=build", "--chown=app:app", "--chmod=0755"), "a b /d/")
    assert (step.flag("from"), step.flag("chown"), step.flag("chmod"), step.flag("link")) == ("build", "app:app", "0755", None)


def test_bare_flags_have_an_empty_value():
    step = _second("COPY --link --parents --exclude=*.pyc src/ /app/\n")
    assert (step.flag("link"), step.flag("parents"), step.flag("exclude"), step.args) == ("", "", "*.pyc", "src/ /app/")


def test_run_mount_and_the_last_repeated_flag_wins():
    step = _second("RUN --mount=type=cache,target=/root/.cache --network=none --security=insecure \\\n"
                   "    --mount=type=secret,id=tok pip install x\n")
    assert step.flags == ("--mount=type=cache,target=/root/.cache", "--network=none", "--security=insecure", "--mount=type=secret,id=tok")
    assert (step.flag("mount"), step.flag("network"), step.args) == ("type=secret,id=tok", "none", "pip install x")


def test_add_flags():
    step = _second("ADD --keep-git-dir --checksum=sha256:abc https://example.org/x.git /src\n")
    assert (step.flag("keep-git-dir"), step.flag("checksum"), step.args) == ("", "sha256:abc", "https://example.org/x.git /src")


def test_from_platform_is_kept_unexpanded_and_as_name_is_in_args():
    step = parse("FROM --platform=$BUILDPLATFORM golang:1.22 AS Build\n").instructions[0]
    assert (step.flags, step.args, step.flag("platform")) == (("--platform=$BUILDPLATFORM",), "golang:1.22 AS Build", "$BUILDPLATFORM")
    assert from_parts(step) == ("golang:1.22", "build")


def test_quotes_and_escapes_in_flags_are_removed_as_buildkit_removes_them():
    assert _second('COPY --chown="app user" --chmod=\'07\'55 a /d\n').flags == ("--chown=app user", "--chmod=0755")


@pytest.mark.parametrize("line, flags, args", [
    ("RUN -- --not-a-flag", (), "--not-a-flag"),  # a bare -- ends the flags
    ("RUN -x y", (), "-x y"),  # one dash is no flag
    ("RUN --network=none", ("--network=none",), ""),
    ("RUN echo --later", (), "echo --later"),
])
def test_only_leading_double_dash_words_are_flags(line, flags, args):
    step = _second(line + "\n")
    assert (step.flags, step.args) == (flags, args)


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
    assert _steps("FROM a\nRUN\nCMD\nENTRYPOINT\nRUN --network=none\n")[1:] == [
        (2, 2, "RUN", ""), (3, 3, "CMD", ""), (4, 4, "ENTRYPOINT", ""), (5, 5, "RUN", ""),
    ]


@pytest.mark.parametrize("trigger", ["ONBUILD echo", "FROM b", "MAINTAINER me"])
def test_onbuild_refuses_the_triggers_buildkit_refuses(trigger):
    with pytest.raises(DockerfileError) as info:
        parse(f"FROM a\nONBUILD {trigger}\n")
    assert (info.value.path, info.value.field) == ("Dockerfile:2", "ONBUILD")


def test_the_source_and_keywords():
    step = parse("FROM a\n", "x/Dockerfile.dev").instructions[0]
    assert (step.where(), step.source) == ("x/Dockerfile.dev:1", "x/Dockerfile.dev")
    assert keyword_list() == {
        "ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK", "LABEL", "MAINTAINER", "ONBUILD",
        "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR",
    }


# -- words and variables ----------------------------------------------------------------------------

ENV = {"A": "x y", "EMPTY": "", "P": "/usr/local/bin", "F": "pkg.tar.gz", "S": "banana", "T": "<$0|$$>", "1": "one"}


@pytest.mark.parametrize("word, result", [
    ("$A", "x y"),
    ("${A}", "x y"),
    ("pre${A}post", "prex ypost"),
    ("'$A'", "$A"),  # single quotes are literal
    ('"$A"', "x y"),
    ("'a'\"b\"c", "abc"),
    ('"a\\"b"', 'a"b'),  # in double quotes the escape escapes " $ and itself only
    ('"a\\$A"', "a$A"),
    ('"a\\\\b"', "a\\b"),
    ('"a\\nb"', "a\\nb"),
    ("a\\ b\\n", "a bn"),  # outside quotes it takes any next character
    ("\\$A", "$A"),
    ("$", "$"),
    ("a$ b", "a$ b"),
    ("$-x", "x"),
    ("$1x", "onex"),  # positional and special names are looked up as names
    ("$@|$*|$#|$?", "|||"),
    ("$UNSET.", "."),
    ("${UNSET:-w}|${EMPTY:-w}|${A:-w}", "w|w|x y"),
    ("${UNSET-w}|${EMPTY-w}|${A-w}", "w||x y"),
    ("${UNSET:+w}|${EMPTY:+w}|${A:+w}", "||w"),
    ("${UNSET+w}|${EMPTY+w}|${A+w}", "|w|w"),
    ("${UNSET:-${A}}", "x y"),
    ("${UNSET:-${NONE:-deep}}", "deep"),
    ("${A?}|${A:?no}", "x y|x y"),
    ("${P#*/}|${P##*/}", "usr/local/bin|bin"),
    ("${P%/*}|${P%%/*}", "/usr/local|"),
    ("${F%.tar.gz}|${F#pkg?}", "pkg|tar.gz"),
    ("${S/an/AN}|${S//an/AN}|${S/a/}|${S//x/y}", "bANana|bANANa|bnana|banana"),
    ("${S//a/[$0]}", "b[]n[]n[]"),  # $0 is a name, expanded (unset) before the replacement
    ("${S//a/$T}", "b<a|$>n<a|$>n<a|$>"),  # a value's $0 and $$ are Go's replacement template
    ("${UNSET/a/b}", ""),
])
def test_expand_follows_process_word(word, result):
    assert expand(word, ENV) == result


@pytest.mark.parametrize("word, message", [
    ("${UNSET:?must be set}", "UNSET: must be set"),
    ("${UNSET?}", "UNSET: is not allowed to be unset"),
    ("${EMPTY:?}", "EMPTY: is not allowed to be empty"),
    ("${}", "bad substitution"),
    ("${:a}", "bad substitution"),
    ("${A", "missing '}'"),
    ("${A:-x", "missing '}'"),
    ("${A/x", "missing '/'"),
    ("${A:#x}", "unsupported modifier (:#)"),
    ("${A!x}", "unsupported modifier (!)"),
    ("'abc", "matching single-quote"),
    ('"abc', "matching double-quote"),
])
def test_expand_raises_value_error_where_buildkit_errs(word, message):
    with pytest.raises(ValueError) as info:
        expand(word, ENV)
    assert not isinstance(info.value, DockerfileError) and message in str(info.value)


def test_the_backtick_escape_in_words():
    assert (expand("a`$A`", ENV, escape="`"), expand("C:\\dir\\$A", ENV, escape="`")) == ("a$A", "C:\\dir\\x y")


@pytest.mark.parametrize("text, words", [
    ("a  b\tc", ["a", "b", "c"]),
    ("$A", ["x", "y"]),  # an unquoted value is split after expansion
    ('"$A" z', ["x y", "z"]),
    ('a "" b', ["a", "b"]),  # an empty quoted word is no word
    ("a\\ b c", ["a b", "c"]),
    ("cat << EOF > x", ["cat", "<< EOF", ">", "x"]),  # the lexer keeps << with the word after it
    ("", []),
])
def test_expand_words_follows_process_words(text, words):
    assert expand_words(text, ENV) == words


def test_an_expanded_heredoc_keeps_quotes_and_applies_escapes():
    body = "name=$A\nraw='$A' \"${A}\"\nprice=\\$5\nnewline=\\n\n"
    assert expand_heredoc(body, ENV) == "name=x y\nraw='x y' \"x y\"\nprice=$5\nnewline=n\n"


def test_split_words_keeps_quotes_for_expand():
    words = split_words('A="a b" B=c\\ d   C=\'$A\'')
    assert words == ['A="a b"', "B=c\\ d", "C='$A'"]
    assert [expand(w, ENV) for w in words] == ["A=a b", "B=c d", "C=$A"]
