"""Heredocs against BuildKit's rules: which words open one, the delimiter, the bodies, chomping."""

from __future__ import annotations

import pytest

from dockerfile_fixtures import second
from pytest_termrl.sandbox.build.heredocs import Heredoc
from pytest_termrl.sandbox.build.parser import DockerfileError, parse


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
    step = second("RUN <<EOF\necho one\necho two\nEOF\nUSER app\n")
    assert (step.args, step.end_lineno) == ("<<EOF", 5)
    assert step.heredocs == (Heredoc("EOF", "echo one\necho two\n", True, False, None),)


def test_a_chomped_heredoc_drops_leading_tabs_of_its_body_and_delimiter():
    step = second("RUN cat <<-EOT > notes.txt\n\tindented\n\t\ttwice\tinner tab\n  spaces kept\n\t\tEOT\n")
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
    step = second(f"COPY {marker} /x\nbody $A\n{name}\n")
    assert step.heredocs == (Heredoc(name, "body $A\n", expands, False, None),)


def test_a_space_after_the_chomp_dash_opens_no_heredoc():
    # `<<-` and `EOF` are two words, so the body lines are instructions.
    with pytest.raises(DockerfileError) as info:
        parse("FROM a\nRUN cat <<- EOF\nhello\nEOF\n")
    assert info.value.path == "Dockerfile:3" and "unknown instruction: hello" in info.value.expected


def test_several_heredocs_on_one_line_are_read_in_order():
    run = second("RUN <<A cat && <<B cat\nfirst\nA\nsecond\nB\n")
    assert [(d.name, d.body) for d in run.heredocs] == [("A", "first\n"), ("B", "second\n")]
    copy = second("COPY <<F1 <<F2 /dest/\none\nF1\ntwo\nF2\n")
    assert (copy.args, [(d.name, d.body) for d in copy.heredocs]) == ("<<F1 <<F2 /dest/", [("F1", "one\n"), ("F2", "two\n")])


def test_each_body_ends_only_at_its_own_delimiter():
    copy = second("COPY <<X <<Y /dest\nY\nX\nX\nY\n")
    assert [(d.name, d.body) for d in copy.heredocs] == [("X", "Y\n"), ("Y", "X\n")]


@pytest.mark.parametrize("marker, fd", [("3<<EOF", 3), ("0<<EOF", 0), ("<<EOF", None), ("12<<-EOF", 12)])
def test_a_leading_number_is_the_heredocs_file_descriptor(marker, fd):
    step = second(f"RUN cat {marker}\nx\nEOF\n")
    assert [(d.name, d.fd) for d in step.heredocs] == [("EOF", fd)]


def test_a_heredoc_after_a_line_continuation_starts_after_the_whole_instruction():
    step = second("RUN cat <<EOF \\\n  > /x\nhello\nEOF\n")
    assert (step.args, step.lineno, step.end_lineno) == ("cat <<EOF   > /x", 2, 5)
    assert step.heredocs == (Heredoc("EOF", "hello\n", True, False, None),)


def test_instruction_words_in_a_body_stay_body_text():
    found = parse("FROM a\nRUN python3 - <<'PY'\nfrom datetime import datetime\nFROM ubuntu\nRUN rm -rf /\nENV X=1\n# not a comment here\n\nPY\nUSER app\n")
    assert [i.keyword for i in found.instructions] == ["FROM", "RUN", "USER"]
    assert found.instructions[1].heredocs[0].body == "from datetime import datetime\nFROM ubuntu\nRUN rm -rf /\nENV X=1\n# not a comment here\n\n"


def test_a_delimiter_line_with_trailing_spaces_is_a_body_line():
    step = second("RUN cat <<EOF\nEOF  \nEOF\n")
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
    add = second("ADD <<EOF /etc/x\nx\nEOF\n")
    onbuild = second("ONBUILD RUN <<EOF\necho later\nEOF\n")
    assert (add.heredocs[0].body, onbuild.args, onbuild.heredocs[0].body) == ("x\n", "RUN <<EOF", "echo later\n")
