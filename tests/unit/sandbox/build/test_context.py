"""What COPY and ADD put into an image layer: the build context's .dockerignore, the sources a
pattern names, the destination rules, owners shifted into the layer's user namespace, and the
archives ADD unpacks, each checked on real files under tmp_path (no mocks).

Writing a layer chowns to shifted ids (host_id = id + 1000000), so those tests need root; the
machine the suite runs on in CI is root.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import tarfile
from pathlib import Path

import pytest

from conftest import require_root
from pytest_termrl.errors import TaskFormatError
from pytest_termrl.sandbox.build.context import (
    BuildContext,
    Owner,
    SymbolicMode,
    add_archive,
    copy_into,
    is_archive,
    is_remote,
    parse_chmod,
    parse_chown,
)

SHIFT = 1000000


def host_id(i: int) -> int:
    return i + SHIFT


def nothing_below(path: str) -> str | None:
    return None


def lower_with(table: dict[str, str]):
    """An `existing` callback for a lower image holding the given folders ("dir") and files ("file")."""
    return table.get


def tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Files under root (a name ending in / is a folder)."""
    root.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = root / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def context(tmp_path: Path, files: dict[str, str | bytes], ignore: str | None = None) -> BuildContext:
    root = tree(tmp_path / "ctx", files)
    if ignore is not None:
        (root / ".dockerignore").write_text(ignore)
    return BuildContext(root)


@pytest.fixture
def layer(tmp_path: Path) -> Path:
    require_root("chown to shifted ids in a layer")
    path = tmp_path / "layer"
    path.mkdir()
    return path


def copy(layer: Path, ctx: BuildContext, patterns: list[str], dest: str, *, owner: Owner | None = None,
         chmod=None, workdir: str = "/", existing=nothing_below) -> list[str]:
    sources = [p for pattern in patterns for p in ctx.sources(pattern, "Dockerfile:3")]
    return copy_into(layer, ctx, sources, dest, where="Dockerfile:3", owner=owner, chmod=chmod,
                     host_id=host_id, workdir=workdir, existing=existing)


def owner_of(path: Path) -> tuple[int, int]:
    st = os.lstat(path)
    return st.st_uid, st.st_gid


def everything_under(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


def beside_the_layer(tmp_path: Path) -> set[str]:
    return {p for p in everything_under(tmp_path) if p != "layer" and not p.startswith("layer/")}


# ---------------------------------------------------------------------------------------------
# .dockerignore


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


# ---------------------------------------------------------------------------------------------
# Sources


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
# COPY destinations


def test_file_to_a_file_path(tmp_path, layer):
    ctx = context(tmp_path, {"conf.ini": "x=1"})
    os.chmod(ctx.root / "conf.ini", 0o640)
    written = copy(layer, ctx, ["conf.ini"], "/etc/app.ini", existing=lower_with({"/etc": "dir"}))
    assert (layer / "etc/app.ini").read_text() == "x=1"
    assert stat.S_IMODE(os.lstat(layer / "etc/app.ini").st_mode) == 0o640
    assert written == ["/etc/app.ini"]  # /etc is the lower image's: made to hold the file, not claimed


def test_file_into_a_folder_makes_parents(tmp_path, layer):
    ctx = context(tmp_path, {"a.txt": "A"})
    written = copy(layer, ctx, ["a.txt"], "/opt/app/")
    assert (layer / "opt/app/a.txt").read_text() == "A"
    assert written == ["/opt", "/opt/app", "/opt/app/a.txt"]
    for folder in ("opt", "opt/app"):
        assert stat.S_IMODE(os.lstat(layer / folder).st_mode) == 0o755
        assert owner_of(layer / folder) == (SHIFT, SHIFT)


def test_folder_copies_its_contents_not_itself(tmp_path, layer):
    ctx = context(tmp_path, {"src/x.py": "x", "src/pkg/y.py": "y"})
    copy(layer, ctx, ["src"], "/app")
    assert (layer / "app/x.py").read_text() == "x"
    assert (layer / "app/pkg/y.py").read_text() == "y"
    assert not (layer / "app/src").exists()


def test_wildcard_into_a_folder(tmp_path, layer):
    ctx = context(tmp_path, {"a.txt": "1", "b.txt": "2", "c.md": "3"})
    written = copy(layer, ctx, ["*.txt"], "/data/")
    assert sorted(os.listdir(layer / "data")) == ["a.txt", "b.txt"]
    assert written[-2:] == ["/data/a.txt", "/data/b.txt"]


def test_several_sources_need_a_trailing_slash(tmp_path, layer):
    ctx = context(tmp_path, {"a.txt": "1", "b.txt": "2"})
    with pytest.raises(TaskFormatError, match="must be a folder and end with a /") as err:
        copy(layer, ctx, ["a.txt", "b.txt"], "/data")
    assert err.value.path == "Dockerfile:3"
    with pytest.raises(TaskFormatError, match="end with a /"):
        copy(layer, ctx, ["*.txt"], "/data")
    assert os.listdir(layer) == []


def test_relative_destination_is_under_the_workdir(tmp_path, layer):
    ctx = context(tmp_path, {"test.txt": "t"})
    copy(layer, ctx, ["test.txt"], "rel/", workdir="/usr/src/app")
    assert (layer / "usr/src/app/rel/test.txt").read_text() == "t"
    copy(layer, ctx, ["test.txt"], ".", workdir="/w")
    assert (layer / "w/test.txt").read_text() == "t"


def test_destination_the_lower_image_has_as_a_folder_means_into(tmp_path, layer):
    ctx = context(tmp_path, {"a.txt": "A"})
    written = copy(layer, ctx, ["a.txt"], "/srv", existing=lower_with({"/srv": "dir"}))
    assert (layer / "srv/a.txt").read_text() == "A"
    assert written == ["/srv/a.txt"]
    assert owner_of(layer / "srv") == (SHIFT, SHIFT) and stat.S_IMODE(os.lstat(layer / "srv").st_mode) == 0o755


def test_a_file_never_replaces_a_folder_nor_a_folder_a_file(tmp_path, layer):
    ctx = context(tmp_path, {"a.txt": "A", "d/x": "x"})
    with pytest.raises(TaskFormatError, match="cannot replace the folder"):
        copy(layer, ctx, ["a.txt"], "/srv/", existing=lower_with({"/srv": "dir", "/srv/a.txt": "dir"}))
    with pytest.raises(TaskFormatError, match="onto the file"):
        copy(layer, ctx, ["d"], "/etc/hosts", existing=lower_with({"/etc": "dir", "/etc/hosts": "file"}))


def test_ignored_files_are_skipped_inside_a_copied_folder(tmp_path, layer):
    ctx = context(tmp_path, {"app/main.py": "m", "app/main.pyc": "c", "app/__pycache__/m.pyc": "c"},
                  "**/*.pyc\n**/__pycache__\n")
    written = copy(layer, ctx, ["app"], "/srv/")
    assert everything_under(layer / "srv") == {"main.py"}
    assert written == ["/srv", "/srv/main.py"]


def test_mtimes_are_kept(tmp_path, layer):
    ctx = context(tmp_path, {"d/f.txt": "f"})
    os.utime(ctx.root / "d/f.txt", ns=(1_500_000_000_000_000_000, 1_600_000_000_123_456_789))
    os.mkdir(ctx.root / "d/sub")
    os.utime(ctx.root / "d/sub", ns=(1_400_000_000_000_000_000, 1_400_000_000_000_000_000))
    copy(layer, ctx, ["d"], "/out/")
    assert os.lstat(layer / "out/f.txt").st_mtime_ns == 1_600_000_000_123_456_789
    assert os.lstat(layer / "out/sub").st_mtime_ns == 1_400_000_000_000_000_000


def test_destination_that_climbs_stays_in_the_layer(tmp_path, layer):
    ctx = context(tmp_path, {"x": "x"})
    before = set(os.listdir(tmp_path))
    written = copy(layer, ctx, ["x"], "../../../escaped", workdir="/w")
    assert written == ["/escaped"] and (layer / "escaped").read_text() == "x"
    assert set(os.listdir(tmp_path)) == before


def test_symlinks_in_the_layer_are_followed_inside_it(tmp_path, layer):
    outside = tmp_path / "outside"
    outside.mkdir()
    ctx = context(tmp_path, {"x": "x"})
    (layer / "etc").mkdir()
    (layer / "link").symlink_to(outside)  # a host path: inside the image it is /<that path>
    (layer / "up").symlink_to("../../../../etc")
    copy(layer, ctx, ["x"], "/link/", existing=lower_with({"/etc": "dir"}))
    copy(layer, ctx, ["x"], "/up/")
    assert list(outside.iterdir()) == []
    assert (layer / str(outside).lstrip("/") / "x").read_text() == "x"
    assert (layer / "etc/x").read_text() == "x"


def test_a_symlink_in_the_layer_under_a_copied_folder_is_not_written_through(tmp_path, layer):
    outside = tmp_path / "outside"
    outside.mkdir()
    ctx = context(tmp_path, {"d/conf/a.txt": "a"})
    (layer / "app").mkdir()
    (layer / "app/conf").symlink_to(outside)
    with pytest.raises(TaskFormatError, match="not a folder"):
        copy(layer, ctx, ["d"], "/app/")
    assert list(outside.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# Owners and modes


PASSWD = "root:x:0:0:root:/root:/bin/sh\n# comment\napp:x:1000:1001::/home/app:/bin/sh\nweb:x:33:33::/var/www:/bin/false\n"
GROUP = "root:x:0:\nstaff:x:50:app\nappgrp:x:1001:\n"


def test_chown_by_name_takes_the_primary_group(tmp_path):
    assert parse_chown("app", PASSWD, GROUP, "w") == Owner(1000, 1001)
    assert parse_chown("app:staff", PASSWD, GROUP, "w") == Owner(1000, 50)
    assert parse_chown(":staff", PASSWD, GROUP, "w") == Owner(0, 50)
    assert parse_chown("web:1234", PASSWD, GROUP, "w") == Owner(33, 1234)


def test_chown_by_number_gid_follows_uid(tmp_path):
    assert parse_chown("1000", "", "", "w") == Owner(1000, 1000)
    assert parse_chown("10:11", "", "", "w") == Owner(10, 11)
    assert parse_chown("55:staff", "", GROUP, "w") == Owner(55, 50)


def test_chown_names_the_image_lacks_are_errors(tmp_path):
    with pytest.raises(TaskFormatError, match="no user 'ghost'") as err:
        parse_chown("ghost", PASSWD, GROUP, "Dockerfile:9")
    assert err.value.path == "Dockerfile:9" and err.value.field == "--chown"
    with pytest.raises(TaskFormatError, match="no group 'nogroup'"):
        parse_chown("app:nogroup", PASSWD, GROUP, "Dockerfile:9")
    with pytest.raises(TaskFormatError, match="empty"):
        parse_chown("", PASSWD, GROUP, "Dockerfile:9")


def test_chown_owns_files_folders_symlinks_and_created_parents(tmp_path, layer):
    ctx = context(tmp_path, {"d/f.txt": "f", "d/sub/g.txt": "g"})
    (ctx.root / "d/ln").symlink_to("f.txt")
    owner = parse_chown("app", PASSWD, GROUP, "w")
    copy(layer, ctx, ["d"], "/home/app/", owner=owner)
    shifted = (1000 + SHIFT, 1001 + SHIFT)
    for rel in ("home", "home/app", "home/app/f.txt", "home/app/sub", "home/app/sub/g.txt", "home/app/ln"):
        assert owner_of(layer / rel) == shifted, rel


def test_without_chown_everything_is_root_shifted(tmp_path, layer):
    ctx = context(tmp_path, {"d/f.txt": "f"})
    os.chown(ctx.root / "d/f.txt", 4321, 4321)
    (ctx.root / "d/ln").symlink_to("f.txt")
    copy(layer, ctx, ["d"], "/x/")
    for rel in ("x", "x/f.txt", "x/ln"):
        assert owner_of(layer / rel) == (SHIFT, SHIFT), rel


def test_parse_chmod_octal_and_symbolic(tmp_path):
    assert parse_chmod("755", "w") == 0o755
    assert parse_chmod("0644", "w") == 0o644
    assert parse_chmod("4755", "w") == 0o4755
    assert parse_chmod("u=rwX,go=rX", "w") == SymbolicMode("u=rwX,go=rX")
    assert isinstance(parse_chmod("+x", "w"), SymbolicMode)
    for bad in ("", "9", "0x1ff", "rwxr-xr-x", "u+q", "17777", "-1"):
        with pytest.raises(TaskFormatError) as err:
            parse_chmod(bad, "Dockerfile:4")
        assert err.value.path == "Dockerfile:4" and err.value.field == "--chmod"


def test_symbolic_modes_follow_chmod(tmp_path):
    assert SymbolicMode("u=rwX,go=rX").apply(0o700, True) == 0o755
    assert SymbolicMode("u=rwX,go=rX").apply(0o600, False) == 0o644
    assert SymbolicMode("u=rwX,go=rX").apply(0o700, False) == 0o755
    assert SymbolicMode("+x").apply(0o644, False) == 0o755
    assert SymbolicMode("go-w").apply(0o777, False) == 0o755
    assert SymbolicMode("g=u").apply(0o640, False) == 0o660
    assert SymbolicMode("u+s").apply(0o755, False) == 0o4755


def test_chmod_applies_to_files_and_folders(tmp_path, layer):
    ctx = context(tmp_path, {"d/f.txt": "f", "d/sub/g.sh": "g"})
    os.chmod(ctx.root / "d/sub/g.sh", 0o700)
    copy(layer, ctx, ["d"], "/o/", chmod=parse_chmod("0640", "w"))
    for rel in ("o/f.txt", "o/sub", "o/sub/g.sh"):
        assert stat.S_IMODE(os.lstat(layer / rel).st_mode) == 0o640, rel
    copy(layer, ctx, ["d"], "/s/", chmod=parse_chmod("u=rwX,go=rX", "w"))
    assert stat.S_IMODE(os.lstat(layer / "s/sub").st_mode) == 0o755
    assert stat.S_IMODE(os.lstat(layer / "s/f.txt").st_mode) == 0o644
    assert stat.S_IMODE(os.lstat(layer / "s/sub/g.sh").st_mode) == 0o755


def test_symlinks_inside_a_folder_are_copied_as_links(tmp_path, layer):
    ctx = context(tmp_path, {"d/real.txt": "r"})
    (ctx.root / "d/rel").symlink_to("real.txt")
    (ctx.root / "d/abs").symlink_to("/etc/passwd")  # only data in the image: never followed here
    copy(layer, ctx, ["d"], "/app/")
    assert os.readlink(layer / "app/rel") == "real.txt"
    assert os.readlink(layer / "app/abs") == "/etc/passwd"
    assert stat.S_ISLNK(os.lstat(layer / "app/abs").st_mode)


def test_a_symlink_named_as_the_source_is_followed(tmp_path, layer):
    ctx = context(tmp_path, {"real.txt": "content"})
    (ctx.root / "alias.txt").symlink_to("real.txt")
    copy(layer, ctx, ["alias.txt"], "/d/")
    assert not os.path.islink(layer / "d/alias.txt")
    assert (layer / "d/alias.txt").read_text() == "content"


def test_hard_links_stay_hard_links(tmp_path, layer):
    ctx = context(tmp_path, {"d/a": "same"})
    os.link(ctx.root / "d/a", ctx.root / "d/b")
    copy(layer, ctx, ["d"], "/h/")
    assert os.lstat(layer / "h/a").st_ino == os.lstat(layer / "h/b").st_ino


# ---------------------------------------------------------------------------------------------
# ADD of local archives


def tar_bytes(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, data: bytes | None = None, *, mode: int = 0o644,
           uid: int = 0, gid: int = 0, link: str = "", mtime: int = 1_600_000_000) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.uid, info.gid = uid, gid
    info.mtime = mtime
    info.linkname = link
    if kind == tarfile.REGTYPE:
        data = data or b""
        info.size = len(data)
    return info, data


SAMPLE = [
    member("pkg", tarfile.DIRTYPE, mode=0o750, uid=7, gid=8),
    member("pkg/bin/tool", data=b"#!/bin/sh\n", mode=0o755, uid=7, gid=8),
    member("pkg/README", data=b"read me", uid=9, gid=9),
    member("pkg/current", tarfile.SYMTYPE, link="bin/tool"),
]


def add(layer: Path, archive: Path, dest: str = "/opt/", owner: Owner | None = None, workdir: str = "/") -> list[str]:
    return add_archive(layer, archive, dest, where="Dockerfile:5", owner=owner, host_id=host_id, workdir=workdir)


def check_sample(layer: Path, at: str = "opt") -> None:
    root = layer / at
    assert (root / "pkg/bin/tool").read_bytes() == b"#!/bin/sh\n"
    assert stat.S_IMODE(os.lstat(root / "pkg/bin/tool").st_mode) == 0o755
    assert owner_of(root / "pkg/bin/tool") == (7 + SHIFT, 8 + SHIFT)
    assert owner_of(root / "pkg/README") == (9 + SHIFT, 9 + SHIFT)
    assert stat.S_IMODE(os.lstat(root / "pkg").st_mode) == 0o750
    assert os.lstat(root / "pkg").st_mtime == 1_600_000_000
    assert os.readlink(root / "pkg/current") == "bin/tool"
    assert owner_of(root / "pkg/bin") == (SHIFT, SHIFT)  # implied by a member: root, 0755
    assert stat.S_IMODE(os.lstat(root / "pkg/bin").st_mode) == 0o755


def test_plain_tar_is_unpacked_with_the_archive_owners(tmp_path, layer):
    archive = tmp_path / "app.tar"
    archive.write_bytes(tar_bytes(SAMPLE))
    assert is_archive(archive)
    written = add(layer, archive)
    check_sample(layer)
    assert written[:2] == ["/opt", "/opt/pkg"] and "/opt/pkg/current" in written


@pytest.mark.parametrize("suffix, compress", [(".tar.gz", gzip.compress), (".tar.xz", lzma.compress), (".tar.bz2", bz2.compress)])
def test_compressed_tars_are_unpacked(tmp_path, layer, suffix, compress):
    archive = tmp_path / ("app" + suffix)
    archive.write_bytes(compress(tar_bytes(SAMPLE)))
    assert is_archive(archive)
    add(layer, archive)
    check_sample(layer)


def test_archives_are_known_by_content_not_name(tmp_path, layer):
    disguised = tmp_path / "notes.txt"
    disguised.write_bytes(gzip.compress(tar_bytes(SAMPLE)))
    text = tmp_path / "fake.tar.gz"
    text.write_text("just some text, not gzip\n")
    empty = tmp_path / "empty.tar.gz"
    empty.write_bytes(b"")
    gz_text = tmp_path / "words.gz"
    gz_text.write_bytes(gzip.compress(b"plain words, no tar header here" * 30))
    assert is_archive(disguised)
    assert not is_archive(text) and not is_archive(empty) and not is_archive(gz_text)
    add(layer, disguised, "/u")
    check_sample(layer, "u")
    ctx = BuildContext(tmp_path)
    copy(layer, ctx, ["fake.tar.gz"], "/c/")
    assert (layer / "c/fake.tar.gz").read_text() == "just some text, not gzip\n"


def test_chown_on_an_archive_owns_every_member(tmp_path, layer):
    archive = tmp_path / "app.tar"
    archive.write_bytes(tar_bytes(SAMPLE))
    add(layer, archive, "/opt/", owner=Owner(1000, 1001))
    for rel in ("opt", "opt/pkg", "opt/pkg/bin/tool", "opt/pkg/README", "opt/pkg/current"):
        assert owner_of(layer / rel) == (1000 + SHIFT, 1001 + SHIFT), rel


def refused(tmp_path: Path, layer: Path, members, match: str, dest: str = "/opt/") -> None:
    archive = tmp_path / "bad.tar"
    archive.write_bytes(tar_bytes(members))
    before = beside_the_layer(tmp_path)
    with pytest.raises(TaskFormatError, match=match) as err:
        add(layer, archive, dest)
    assert err.value.path == "Dockerfile:5" and err.value.field == "ADD"
    assert beside_the_layer(tmp_path) == before  # nothing written beside the layer


def test_member_climbing_out_is_refused(tmp_path, layer):
    refused(tmp_path, layer, [member("ok.txt", data=b"1"), member("../evil.txt", data=b"x")], "'../evil.txt'.*'..'")
    assert not (tmp_path / "evil.txt").exists() and not (layer / "evil.txt").exists()


def test_absolute_member_is_refused(tmp_path, layer):
    refused(tmp_path, layer, [member("/etc/zz-termrl-never", data=b"x")], "absolute name")
    assert not Path("/etc/zz-termrl-never").exists()


def test_symlink_to_etc_then_a_file_through_it_is_refused(tmp_path, layer):
    refused(tmp_path, layer, [member("etcl", tarfile.SYMTYPE, link="/etc"),
                              member("etcl/zz-termrl-never", data=b"x")], "points to '/etc'")
    assert not Path("/etc/zz-termrl-never").exists()
    outside = tmp_path / "outside"
    outside.mkdir()
    refused(tmp_path, layer, [member("out", tarfile.SYMTYPE, link=str(outside)),
                              member("out/x", data=b"x")], "outside /opt")
    refused(tmp_path, layer, [member("up", tarfile.SYMTYPE, link="../../.."), member("up/x", data=b"x")], "outside /opt")
    assert list(outside.iterdir()) == []


def test_a_layer_symlink_is_not_written_through(tmp_path, layer):
    outside = tmp_path / "outside"
    outside.mkdir()
    (layer / "opt").mkdir()
    (layer / "opt/lib").symlink_to(outside)
    refused(tmp_path, layer, [member("lib/x.so", data=b"x")], "outside /opt")
    assert list(outside.iterdir()) == []


def test_symlinks_inside_the_destination_are_followed(tmp_path, layer):
    archive = tmp_path / "lib.tar"
    archive.write_bytes(tar_bytes([member("lib64", tarfile.DIRTYPE, mode=0o755), member("lib", tarfile.SYMTYPE, link="lib64"),
                                   member("lib/x.so", data=b"elf"), member("abs", tarfile.SYMTYPE, link="/opt/lib64")]))
    written = add(layer, archive)
    assert (layer / "opt/lib64/x.so").read_bytes() == b"elf"
    assert "/opt/lib64/x.so" in written
    assert os.readlink(layer / "opt/abs") == "/opt/lib64"


def test_hard_links_leaving_the_destination_are_refused(tmp_path, layer):
    refused(tmp_path, layer, [member("h", tarfile.LNKTYPE, link="../../etc/passwd")], "'..'")
    refused(tmp_path, layer, [member("h", tarfile.LNKTYPE, link="/etc/passwd")], "absolute name")
    archive = tmp_path / "ok.tar"
    archive.write_bytes(tar_bytes([member("a", data=b"same"), member("b", tarfile.LNKTYPE, link="a")]))
    add(layer, archive, "/hl/")
    assert os.lstat(layer / "hl/a").st_ino == os.lstat(layer / "hl/b").st_ino


def test_device_members_are_refused(tmp_path, layer):
    dev = member("dev/null", tarfile.CHRTYPE)
    dev[0].devmajor, dev[0].devminor = 1, 3
    refused(tmp_path, layer, [dev], "device file")
    assert not (layer / "opt/dev/null").exists()


def test_archive_relative_destination_uses_the_workdir(tmp_path, layer):
    archive = tmp_path / "a.tar"
    archive.write_bytes(tar_bytes([member("f", data=b"1")]))
    assert add(layer, archive, "sub", workdir="/srv") == ["/srv", "/srv/sub", "/srv/sub/f"]


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
