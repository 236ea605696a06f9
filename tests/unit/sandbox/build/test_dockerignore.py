"""The .dockerignore matcher, as a build context applies it: patterns, exceptions, comments, bad lines.

Each case runs on real files under tmp_path (no mocks); the one that copies needs root (the
``layer`` fixture).
"""

from __future__ import annotations

import pytest

from context_fixtures import context, copy, layer  # noqa: F401  (layer: fixture)
from pytest_termrl.errors import TaskFormatError


def test_star_pyc_ignores_top_level_files_only(tmp_path):
    ctx = context(tmp_path, {"a.pyc": "", "sub/b.pyc": "", "a.py": ""}, "*.pyc\n")
    assert ctx.ignored("a.pyc")
    assert not ctx.ignored("sub/b.pyc")  # * never crosses a /, as in patternmatcher
    assert not ctx.ignored("a.py")


def test_double_star_pycache_at_any_depth_and_its_contents(tmp_path):
    ctx = context(tmp_path, {}, "**/__pycache__\n")
    assert ctx.ignored("__pycache__")
    assert ctx.ignored("pkg/__pycache__")
    assert ctx.ignored("pkg/deep/__pycache__/mod.cpython-311.pyc")
    assert not ctx.ignored("pkg/__pycache__x")
    assert not ctx.ignored("pkg/mod.py")


def test_exception_after_star_txt_keeps_the_named_file(tmp_path):
    ctx = context(tmp_path, {}, "*.txt\n!keep.txt\n")
    assert ctx.ignored("notes.txt")
    assert not ctx.ignored("keep.txt")


def test_last_matching_line_wins(tmp_path):
    first = context(tmp_path / "1", {}, "*.md\n!README*.md\nREADME-secret.md\n")
    assert first.ignored("README-secret.md") and not first.ignored("README.md") and first.ignored("CHANGES.md")
    second = context(tmp_path / "2", {}, "*.md\nREADME-secret.md\n!README*.md\n")
    assert not second.ignored("README-secret.md") and not second.ignored("README.md")


def test_leading_slash_is_the_context_root(tmp_path):
    ctx = context(tmp_path, {}, "/abs\n")
    assert ctx.ignored("abs") and ctx.ignored("abs/inner.txt")
    assert not ctx.ignored("sub/abs")


def test_trailing_slash_pattern_ignores_the_folder_and_its_contents(tmp_path):
    ctx = context(tmp_path, {}, "build/\n")
    assert ctx.ignored("build") and ctx.ignored("build/out/bin")
    assert not ctx.ignored("builder")


def test_comments_blank_lines_and_hash_not_at_start(tmp_path):
    ctx = context(tmp_path, {}, "# a comment\n\n   \n  #hashed\nfoo#bar\n")
    assert not ctx.ignored("# a comment") and not ctx.ignored("a comment")
    assert ctx.ignored("#hashed")  # only a '#' in the first column starts a comment
    assert ctx.ignored("foo#bar")
    assert not ctx.ignored("foo")


def test_double_star_at_end_matches_below_a_folder(tmp_path):
    ctx = context(tmp_path, {}, "logs/**\n")
    assert ctx.ignored("logs/a") and ctx.ignored("logs/a/b.log")
    assert not ctx.ignored("logs")


def test_file_reincluded_inside_an_ignored_folder(tmp_path, layer):
    ctx = context(tmp_path, {"build/keep.txt": "kept", "build/other.o": "x", "src/main.c": "int main;"},
                  "build\n!build/keep.txt\n")
    assert ctx.ignored("build") and ctx.ignored("build/other.o")
    assert not ctx.ignored("build/keep.txt")
    assert ctx.sources("build/keep.txt", "Dockerfile:3") == [ctx.root / "build" / "keep.txt"]
    written = copy(layer, ctx, ["."], "/app/")
    assert (layer / "app/build/keep.txt").read_text() == "kept"
    assert not (layer / "app/build/other.o").exists()
    assert "/app/build" in written and "/app/build/other.o" not in written
    assert (layer / "app/src/main.c").read_text() == "int main;"


def test_bad_ignore_patterns_are_refused(tmp_path):
    with pytest.raises(TaskFormatError, match="illegal exclusion"):
        context(tmp_path / "1", {}, "!\n")
    with pytest.raises(TaskFormatError, match="bad pattern"):
        context(tmp_path / "2", {}, "[abc\n")
