"""The build context: which ignore file it reads, the sources a pattern names, the digest, remote sources.

Each case runs on real files under tmp_path (no mocks).
"""

from __future__ import annotations

import os

import pytest

from context_fixtures import context, tree
from pytest_termrl.errors import TaskFormatError
from pytest_termrl.sandbox.build.context import BuildContext, is_remote


def test_dockerfile_specific_ignore_file_wins(tmp_path):
    root = tree(tmp_path / "ctx", {"a.txt": "", "b.txt": ""})
    (root / ".dockerignore").write_text("a.txt\n")
    dockerfile = root / "app.Dockerfile"
    dockerfile.write_text("FROM scratch\n")
    assert BuildContext.for_dockerfile(root, dockerfile).ignored("a.txt")
    (root / "app.Dockerfile.dockerignore").write_text("b.txt\n")
    specific = BuildContext.for_dockerfile(root, dockerfile)
    assert specific.ignored("b.txt") and not specific.ignored("a.txt")
    assert specific.dockerignore == root / "app.Dockerfile.dockerignore"


def test_wildcards_match_per_element_in_name_order(tmp_path):
    ctx = context(tmp_path, {"index.js": "", "index.ts": "", "index.css": "", "arr[0].txt": "", "d/x.txt": ""})
    assert [p.name for p in ctx.sources("index.?s", "w")] == ["index.js", "index.ts"]
    assert [p.name for p in ctx.sources("index.[jc]*", "w")] == ["index.css", "index.js"]
    assert ctx.sources("arr[[]0].txt", "w") == [ctx.root / "arr[0].txt"]
    assert ctx.sources("*/x.txt", "w") == [ctx.root / "d" / "x.txt"]
    assert ctx.sources("/d/", "w") == [ctx.root / "d"]  # a leading / is the root; trailing slashes do not matter


def test_missing_source_names_the_pattern_and_the_context(tmp_path):
    ctx = context(tmp_path, {"a.txt": ""})
    with pytest.raises(TaskFormatError) as err:
        ctx.sources("nothere*.txt", "Dockerfile:7")
    assert "nothere*.txt" in str(err.value) and str(ctx.root) in str(err.value)
    assert err.value.path == "Dockerfile:7" and err.value.field == "COPY"


def test_parent_sources_are_refused(tmp_path):
    ctx = context(tmp_path, {"a.txt": ""})
    (tmp_path / "secret").write_text("s")
    for pattern in ("../secret", "a/../../secret", "/../secret"):
        with pytest.raises(TaskFormatError, match="leaves the build context"):
            ctx.sources(pattern, "w")
    assert ctx.sources("sub/../a.txt", "w") == [ctx.root / "a.txt"]  # cleaned like the engine does


def test_symlinks_leaving_the_context_are_refused(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s")
    ctx = context(tmp_path, {"a.txt": ""})
    (ctx.root / "up").symlink_to("../outside")
    (ctx.root / "abs").symlink_to(tmp_path / "outside" / "secret.txt")
    (ctx.root / "inner").symlink_to("a.txt")
    for pattern in ("up/secret.txt", "up", "abs", "*"):
        with pytest.raises(TaskFormatError, match="leaves the build context"):
            ctx.sources(pattern, "w")
    assert ctx.sources("inner", "w") == [ctx.root / "inner"]


def test_a_source_only_dockerignore_hides_is_not_found(tmp_path):
    ctx = context(tmp_path, {"secret.env": "k", "a.txt": ""}, "*.env\n.dockerignore\n")
    with pytest.raises(TaskFormatError, match="excluded by .dockerignore"):
        ctx.sources("secret.env", "w")
    with pytest.raises(TaskFormatError, match="excluded by .dockerignore"):
        ctx.sources("*.env", "w")
    assert ctx.sources("*", "w") == [ctx.root / "a.txt"]


# ---------------------------------------------------------------------------------------------
# Remote sources


def test_remote_sources_are_recognised():
    for remote in ("http://example.com/a.tar.gz", "https://example.com/x", "git@github.com:moby/buildkit.git",
                   "git://host/repo.git", "ssh://git@host/repo.git"):
        assert is_remote(remote), remote
    for local in ("a.txt", "dir/file", "./x", "/abs/path", "weird:name", "name@home"):
        assert not is_remote(local), local


# ---------------------------------------------------------------------------------------------
# The digest the builder's cache key uses


def test_digest_follows_bytes_modes_and_ignore_status(tmp_path):
    ctx = context(tmp_path, {"d/a.txt": "a", "d/b.log": "b"}, "")
    paths = ctx.sources("d", "w")
    first = ctx.digest(paths)
    assert first == ctx.digest(paths) and first.startswith("sha256:")
    (ctx.root / "d/a.txt").write_text("A")
    changed_byte = ctx.digest(paths)
    assert changed_byte != first
    os.chmod(ctx.root / "d/a.txt", 0o600)
    changed_mode = ctx.digest(paths)
    assert changed_mode != changed_byte
    (ctx.root / ".dockerignore").write_text("d/*.log\n")
    ignoring = BuildContext(ctx.root)
    now_ignored = ignoring.digest(paths)
    assert now_ignored != changed_mode
    (ctx.root / "d/b.log").write_text("a different log")
    assert ignoring.digest(paths) == now_ignored  # an ignored file's bytes do not matter


def test_digest_sees_symlink_targets_not_their_files(tmp_path):
    ctx = context(tmp_path, {"d/one": "1", "d/two": "2"})
    (ctx.root / "d/ln").symlink_to("one")
    paths = ctx.sources("d", "w")
    first = ctx.digest(paths)
    (ctx.root / "d/ln").unlink()
    (ctx.root / "d/ln").symlink_to("two")
    assert ctx.digest(paths) != first
