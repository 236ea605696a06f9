"""What COPY writes into a layer: the destination rules, owners shifted into the layer's user namespace,
modes, times, symlinks and hard links, each checked on real files under tmp_path (no mocks).

Writing a layer chowns to shifted ids, so these cases need root (the ``layer`` fixture); the
machine the suite runs on in CI is root.
"""

from __future__ import annotations

import os
import stat

import pytest

from context_fixtures import (  # noqa: F401  (layer: fixture)
    GROUP,
    PASSWD,
    SHIFT,
    context,
    copy,
    everything_under,
    layer,
    lower_with,
    owner_of,
)
from pytest_termrl.errors import TaskFormatError
from pytest_termrl.sandbox.build.ownership import parse_chmod, parse_chown


# ---------------------------------------------------------------------------------------------
# Destinations


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
# Owners, modes and links


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
