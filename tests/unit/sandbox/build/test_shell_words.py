"""BuildKit's shell lexer: quotes, escapes, variables and their modifiers, words, heredoc bodies."""

from __future__ import annotations

import pytest

from dockerfile_fixtures import ENV
from pytest_termrl.sandbox.build.parser import DockerfileError
from pytest_termrl.sandbox.build.shell_words import expand, expand_heredoc, expand_words


# -- words and variables ----------------------------------------------------------------------------


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
