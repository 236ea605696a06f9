"""The overlays' upper directories read as the change record, against real kernel overlays and hand-built uppers.

The kernel tests mount overlayfs as the sandbox does (``userxattr``, no redirects, no
metacopy), change things through the merged folder, and check the record two ways: the
exact entries and deleted paths, and, for every path of the lowers and the uppers, that
:meth:`ChangeRecord.view` equals a full manifest of the merged folder.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import mount_overlay, require_root

from pytest_termrl.oracle import manifest as manifest_mod
from pytest_termrl.oracle.manifest import ROOT, Entry, take_manifest
from pytest_termrl.oracle.record import OVERFLOW_ID, ChangeRecord, ChangeRecordError, RecordState, Slot



@contextmanager
def overlay(root: Path, lowers: list[Path], name: str = "ov", at: Path | None = None) -> Iterator[tuple[Path, Path]]:
    """Mount a real overlay of ``lowers`` (topmost first); yields (merged, upper). Skips (fails in CI) where none mounts."""
    upper, work = root / f"{name}-upper", root / f"{name}-work"
    merged = at if at is not None else root / f"{name}-merged"
    for d in (upper, work, merged):
        d.mkdir(exist_ok=True)
    mount_overlay(":".join(str(p) for p in lowers), upper, work, merged)
    try:
        yield merged, upper
    finally:
        subprocess.run(["umount", str(merged)], check=True)


def tree(root: Path, files: dict[str, str | None]) -> Path:
    """Make ``root`` with ``files`` (path -> text; None: a folder), modes 0755 / 0644."""
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o755)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            path.mkdir(exist_ok=True)
            os.chmod(path, 0o755)
        else:
            path.write_text(text)
            os.chmod(path, 0o644)
    return root


def whiteout(path: Path) -> None:
    os.mknod(path, stat.S_IFCHR | 0o000, 0)


def absolute(rel: str) -> str:
    return "/" if rel == ROOT else "/" + rel


def assert_views_match(record: ChangeRecord, state: RecordState, merged: Path, lowers: list[Path]) -> None:
    """For every path the lowers, the upper or the merged folder hold, the view is what the kernel shows."""
    seen = {absolute(p): e for p, e in take_manifest(merged, full=True).entries.items()}
    paths = set(seen) | set(state.entries) | state.deleted
    for lower in lowers:
        paths |= {absolute(p) for p in take_manifest(lower, full=True).entries}
    wrong = {p: (record.view(state, p), seen.get(p)) for p in sorted(paths) if record.view(state, p) != seen.get(p)}
    assert wrong == {}


def needs_root() -> None:
    require_root("making whiteouts (character devices: mknod)")


# --- a real kernel overlay ----------------------------------------------------------------


LOWER = {
    "app.conf": "x=1\n",
    "keep.txt": "keep\n",
    "bin/tool": "#!/bin/sh\n",
    "data/a.txt": "a\n",
    "data/b.txt": "b\n",
    "data/sub/c.txt": "c\n",
    "gone.txt": "gone\n",
    "old/f1": "1\n",
    "old/nested/f2": "2\n",
    "tree/t1": "t1\n",
    "tree/deep/t2": "t2\n",
    "filedir": "a file that becomes a folder\n",
    "empty": None,
}


def test_kernel_overlay_record_is_exact(tmp_path: Path) -> None:
    lower = tree(tmp_path / "lower", LOWER)
    os.chmod(lower / "bin" / "tool", 0o755)
    with overlay(tmp_path, [lower]) as (merged, upper):
        record_of = ChangeRecord((Slot("/", upper, (lower,)),))
        state = record_of.read()
        assert set(state.entries) == {"/"} and state.deleted == frozenset()
        assert_views_match(record_of, state, merged, [lower])

        (merged / "app.conf").write_text("x=2\n")  # edit a lower file
        os.chmod(merged / "keep.txt", 0o600)  # chmod: copied up, bytes unchanged
        os.chown(merged / "bin" / "tool", 1000, 1001)  # chown below a folder: the folder is copied up too
        (merged / "gone.txt").unlink()  # delete: a whiteout
        shutil.rmtree(merged / "old")  # rm -rf and recreate: an opaque folder
        (merged / "old").mkdir()
        (merged / "old" / "new").write_text("new\n")
        (merged / "data" / "a.txt").unlink()  # a file replaced by a symlink
        os.symlink("../app.conf", merged / "data" / "a.txt")
        shutil.rmtree(merged / "data" / "sub")  # a lower folder deleted: one whiteout hides its tree
        shutil.rmtree(merged / "tree")  # a lower folder replaced by a file
        (merged / "tree").write_text("now a file\n")
        (merged / "filedir").unlink()  # a lower file replaced by a folder
        (merged / "filedir").mkdir()
        (merged / "new.txt").write_text("created\n")  # created
        (merged / "newdir" / "x").parent.mkdir()
        (merged / "newdir" / "x").write_text("x\n")

        state = record_of.read(state)
        assert os.getxattr(upper / "old", "user.overlay.opaque") == b"y"  # userxattr markers, as in bwrap
        assert stat.S_ISCHR(os.lstat(upper / "gone.txt").st_mode)
        assert sorted(state.entries) == [
            "/", "/app.conf", "/bin", "/bin/tool", "/data", "/data/a.txt", "/filedir", "/keep.txt",
            "/new.txt", "/newdir", "/newdir/x", "/old", "/old/new", "/tree",
        ]
        assert state.deleted == {
            "/gone.txt", "/old/f1", "/old/nested", "/old/nested/f2", "/data/sub", "/data/sub/c.txt",
            "/tree/t1", "/tree/deep", "/tree/deep/t2",
        }
        e = state.entries
        assert (e["/bin/tool"].uid, e["/bin/tool"].gid, e["/bin/tool"].mode) == (1000, 1001, 0o755)
        assert e["/keep.txt"].mode == 0o600 and e["/keep.txt"].sha256 == record_of.lower_entry("/keep.txt").sha256
        assert e["/data/a.txt"] == Entry("symlink", 0o777, 0, 0, target="../app.conf")
        assert (e["/tree"].kind, e["/filedir"].kind) == ("file", "dir")
        assert record_of.view(state, "/data/b.txt") == record_of.lower_entry("/data/b.txt")  # untouched: the lower's
        assert record_of.view(state, "/gone.txt") is None and record_of.view(state, "/tree/deep/t2") is None
        assert_views_match(record_of, state, merged, [lower])


def test_kernel_overlay_with_two_lowers(tmp_path: Path) -> None:
    needs_root()
    bottom = tree(tmp_path / "bottom", {"both.txt": "bottom\n", "hidden.txt": "hidden\n", "conf/old": "old\n",
                                        "conf/kept": "kept\n", "merged/b": "b\n", "only-bottom": "ob\n"})
    top = tree(tmp_path / "top", {"both.txt": "top wins\n", "conf/new": "new\n", "merged/t": "t\n"})
    whiteout(top / "hidden.txt")
    os.setxattr(top / "conf", "user.overlay.opaque", b"y")
    lowers = [top, bottom]
    with overlay(tmp_path, lowers) as (merged, upper):
        record = ChangeRecord((Slot("/", upper, tuple(lowers)),))
        assert record.lower_entry("/both.txt").size == len("top wins\n")
        assert record.lower_entry("/hidden.txt") is None and record.lower_entry("/conf/old") is None
        assert record.lower_entry("/merged/b") is not None and record.lower_entry("/only-bottom") is not None
        state = record.read()
        assert_views_match(record, state, merged, lowers)
        (merged / "both.txt").unlink()
        shutil.rmtree(merged / "merged")
        shutil.rmtree(merged / "conf")
        (merged / "conf").mkdir()
        state = record.read(state)
        assert state.deleted == {"/both.txt", "/merged", "/merged/b", "/merged/t", "/conf/new"}
        assert_views_match(record, state, merged, lowers)


def test_kernel_nested_slot_and_its_mount_point(tmp_path: Path) -> None:
    """/etc is a slot of its own: what the "/" lower holds there is hidden, and changes land in /etc's upper."""
    root_lower = tree(tmp_path / "root-lower", {"etc/stale.conf": "hidden by the /etc mount\n", "usr/doc": "doc\n"})
    etc_lower = tree(tmp_path / "etc-lower", {"app.conf": "x=1\n", "hosts": "127.0.0.1 localhost\n"})
    with overlay(tmp_path, [root_lower], "root") as (merged, root_upper):
        with overlay(tmp_path, [etc_lower], "etc", at=merged / "etc") as (_, etc_upper):
            record = ChangeRecord((Slot("/", root_upper, (root_lower,)), Slot("/etc", etc_upper, (etc_lower,))))
            base = record.read()
            (merged / "etc" / "app.conf").write_text("x=2\n")
            (merged / "etc" / "hosts").unlink()
            (merged / "usr" / "doc").unlink()
            state = record.read(base)
            assert sorted(state.entries) == ["/", "/etc", "/etc/app.conf", "/usr"]
            assert state.deleted == {"/etc/hosts", "/usr/doc"}
            assert record.view(state, "/etc/stale.conf") is None  # the "/" lower's etc is not seen
            assert record.lower_entry("/etc/app.conf").size == 4
            assert not (root_upper / "etc" / "app.conf").exists() and (etc_upper / "app.conf").exists()


# --- hand-built uppers ---------------------------------------------------------------------


def test_hidden_mount_points_and_ignored_paths_are_skipped(tmp_path: Path) -> None:
    root_lower = tree(tmp_path / "rl", {"etc/stale": "s\n", "tmp/x": "x\n", "proc": None, "srv/a": "a\n"})
    root_upper = tree(tmp_path / "ru", {"etc/made-before-the-mount": "m\n", "tmp/harness/sock": "s\n",
                                        "srv/b": "b\n"})
    etc_upper = tree(tmp_path / "eu", {"new.conf": "n\n"})
    etc_lower = tree(tmp_path / "el", {"old.conf": "o\n"})
    if os.geteuid() == 0:
        whiteout(root_upper / "proc")  # an ignored path's whiteout is not reported either
    record = ChangeRecord((Slot("/", root_upper, (root_lower,)), Slot("/etc/", etc_upper, (etc_lower,))),
                          ignore=("/tmp", "/proc"))
    state = record.read()
    assert sorted(state.entries) == ["/", "/etc", "/etc/new.conf", "/srv", "/srv/b"]
    assert state.deleted == frozenset()
    assert record.lower_entry("/tmp/x") is None and record.lower_entry("/etc/stale") is None
    assert record.lower_entry("/etc/old.conf") is not None


def test_slot_validation(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="absolute"):
        Slot("etc", tmp_path, ())
    with pytest.raises(ValueError, match="share a mount point"):
        ChangeRecord((Slot("/etc", tmp_path, ()), Slot("/etc/", tmp_path, ())))
    assert Slot("/etc//", tmp_path, (str(tmp_path),)).mount == "/etc"  # type: ignore[arg-type]


def test_owners_are_shown_as_inside_ids(tmp_path: Path) -> None:
    require_root("chown to other ids")
    base = 100_000
    lower = tree(tmp_path / "lower", {"root-owned": "r\n", "user-owned": "u\n"})
    upper = tree(tmp_path / "upper", {"mine": "m\n", "stranger": "s\n", "low": "l\n"})
    os.chown(lower, base, base)
    os.chown(lower / "root-owned", base, base)
    os.chown(lower / "user-owned", base + 1000, base + 1000)
    os.chown(upper, base, base)
    os.chown(upper / "mine", base + 1000, base + 1001)
    os.chown(upper / "stranger", base + 70_000, base + 65_536)  # past the mapped range
    os.chown(upper / "low", 5, 5)  # below id_base: unmapped too
    slot = Slot("/", upper, (lower,))
    record = ChangeRecord((slot,), id_base=base)
    state = record.read()
    ids = {p: (e.uid, e.gid) for p, e in state.entries.items()}
    assert ids == {"/": (0, 0), "/mine": (1000, 1001), "/stranger": (OVERFLOW_ID, OVERFLOW_ID),
                   "/low": (OVERFLOW_ID, OVERFLOW_ID)}
    assert (record.lower_entry("/root-owned").uid, record.lower_entry("/user-owned").gid) == (0, 1000)
    assert record.lower_entry("/").uid == 0
    plain = ChangeRecord((slot,)).read()  # id_base 0: host ids as they are
    assert (plain.entries["/mine"].uid, plain.entries["/stranger"].uid) == (base + 1000, base + 70_000)


def test_whiteouts_and_opaque_markers(tmp_path: Path) -> None:
    lower = tree(tmp_path / "lower", {"a": "a\n", "b": "b\n", "c": "c\n", "d1/x": "x\n", "d2/y": "y\n",
                                      "d3/z": "z\n", "d3/w": "w\n"})
    upper = tree(tmp_path / "upper", {"b": "", "c": "not empty\n", "d1": None, "d2": None, "d3": None,
                                      "d3/w": "w2\n"})
    os.setxattr(upper / "b", "user.overlay.whiteout", b"")  # an empty file marked whiteout: a whiteout
    os.setxattr(upper / "c", "user.overlay.whiteout", b"")  # not empty: the kernel shows the file
    os.setxattr(upper / "d1", "user.overlay.opaque", b"x")  # "x": holds xwhiteouts, not opaque
    os.setxattr(upper / "d3", "user.overlay.opaque", b"y")
    if os.geteuid() == 0:
        os.setxattr(upper / "d2", "trusted.overlay.opaque", b"y")
        whiteout(upper / "a")
    record = ChangeRecord((Slot("/", upper, (lower,)),))
    state = record.read()
    expected_deleted = {"/b", "/d3/z"}
    if os.geteuid() == 0:
        expected_deleted |= {"/a", "/d2/y"}
    assert state.deleted == expected_deleted
    assert "/b" not in state.entries and state.entries["/c"].size == len("not empty\n")
    assert record.view(state, "/d1/x") == record.lower_entry("/d1/x") is not None
    assert record.view(state, "/d3/w").size == 3 and record.view(state, "/d3/z") is None


def test_redirect_and_metacopy_cannot_be_read_exactly(tmp_path: Path) -> None:
    lower = tree(tmp_path / "lower", {"moved/x": "x\n"})
    upper = tree(tmp_path / "upper", {"etc/renamed": None, "etc/thin": "", "ok": "ok\n"})
    record = ChangeRecord((Slot("/", upper, (lower,)),))
    os.setxattr(upper / "etc" / "renamed", "user.overlay.redirect", b"/moved")
    with pytest.raises(ChangeRecordError, match="/etc/renamed: the folder carries user.overlay.redirect"):
        record.read()
    os.removexattr(upper / "etc" / "renamed", "user.overlay.redirect")
    os.setxattr(upper / "etc" / "thin", "user.overlay.metacopy", b"")
    with pytest.raises(ChangeRecordError, match="/etc/thin: the file carries user.overlay.metacopy"):
        record.read()
    os.removexattr(upper / "etc" / "thin", "user.overlay.metacopy")
    assert "/etc/thin" in record.read().entries


def test_unchanged_files_are_not_hashed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifest_mod, "RACY_NS", 0)
    reads: list[str] = []
    real_hash = manifest_mod._hash_file

    def counting(name, st, dir_fd):
        reads.append(os.path.basename(name))
        return real_hash(name, st, dir_fd)

    monkeypatch.setattr(manifest_mod, "_hash_file", counting)
    lower = tree(tmp_path / "lower", {"l": "lower\n"})
    upper = tree(tmp_path / "upper", {"a": "a\n", "d/b": "b\n"})
    record = ChangeRecord((Slot("/", upper, (lower,)),), id_base=0)
    first = record.read()
    assert sorted(reads) == ["a", "b"]
    reads.clear()
    second = record.read(first)
    assert reads == [] and all(second.entries[p] is first.entries[p] for p in first.entries)
    with open(upper / "d" / "b", "a") as f:
        f.write("more\n")
    third = record.read(second)
    assert reads == ["b"] and third.entries["/d/b"].size == 7
    reads.clear()
    assert record.lower_entry("/l") is record.lower_entry("/l")  # the lowers are read once
    assert reads == ["l"]


def test_lowers_are_never_followed_through_symlinks(tmp_path: Path) -> None:
    outside = tree(tmp_path / "outside", {"secret": "s\n"})
    lower = tree(tmp_path / "lower", {"f": "f\n"})
    os.symlink(outside, lower / "link")
    upper = tree(tmp_path / "upper", {})
    record = ChangeRecord((Slot("/", upper, (lower,)),))
    assert record.lower_entry("/link").kind == "symlink"
    assert record.lower_entry("/link/secret") is None and record.lower_entry("/f/x") is None
    assert record.lower_entry("/missing") is None


def test_deep_upper_does_not_recurse(tmp_path: Path) -> None:
    lower = tree(tmp_path / "lower", {})
    upper = tree(tmp_path / "upper", {})
    raw = os.fsencode(upper)
    depth = 1200  # past Python's recursion limit
    fd = os.open(raw, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir(b"d", dir_fd=fd)
        nxt = os.open(b"d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    os.close(fd)
    try:
        record = ChangeRecord((Slot("/", upper, (lower,)),))
        state = record.read()
        deepest = "/d" * depth
        assert len(state.entries) == depth + 1
        assert record.lower_entry(deepest) is None and record.view(state, deepest).kind == "dir"
    finally:
        for level in range(depth, 0, -1):
            os.rmdir(raw + b"/d" * level)
