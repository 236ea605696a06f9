"""Manifests on real files: every kind, hostile names, FIFOs, links out, scale, increments."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

from pytest_termrl.oracle import manifest as manifest_mod
from pytest_termrl.oracle.diff import diff_manifests
from pytest_termrl.oracle.manifest import Entry, Manifest, take_manifest


def _with_timeout(fn, timeout: float = 20.0):
    """Run ``fn`` in a daemon thread; fail (not hang the suite) if it does not return."""
    result: dict = {}

    def target() -> None:
        try:
            result["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            result["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"did not return within {timeout} s"
    if "error" in result:
        raise result["error"]
    return result["value"]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "home"
    (root / "docs" / "deep").mkdir(parents=True)
    (root / "notes.txt").write_bytes(b"hello\n")
    (root / "docs" / "deep" / "a.bin").write_bytes(bytes(range(256)))
    (root / "empty").write_bytes(b"")
    os.chmod(root / "notes.txt", 0o640)
    os.symlink("docs/deep/a.bin", root / "link")
    return root


def test_records_every_kind(home: Path) -> None:
    os.mkfifo(home / "pipe")
    sock = socket.socket(socket.AF_UNIX)
    cwd = os.getcwd()
    os.chdir(home)  # a relative name stays under the 108-byte limit of socket paths
    try:
        sock.bind("sock")
    finally:
        os.chdir(cwd)
    try:
        os.mknod(home / "null", 0o600 | 0o020000, os.makedev(1, 3))
        has_dev = True
    except PermissionError:
        has_dev = False
    m = _with_timeout(lambda: take_manifest(home))
    sock.close()
    assert m.entries["."].kind == "dir"
    uid, gid = os.geteuid(), (home / "notes.txt").stat().st_gid
    assert m.entries["notes.txt"] == Entry("file", 0o640, uid, gid, 6, _sha(b"hello\n"))
    assert m.entries["empty"].sha256 == _sha(b"")
    assert m.entries["docs/deep/a.bin"].sha256 == _sha(bytes(range(256)))
    assert m.entries["docs"].kind == "dir" and m.entries["docs"].size == 0
    assert m.entries["link"] == Entry("symlink", m.entries["link"].mode, uid, gid, target="docs/deep/a.bin")
    assert m.entries["pipe"].kind == "fifo" and m.entries["pipe"].sha256 is None
    assert m.entries["sock"].kind == "socket"
    if has_dev:
        assert m.entries["null"].kind == "chardev" and m.entries["null"].sha256 is None
    assert not m.errors()


def test_fifo_does_not_hang(home: Path) -> None:
    os.mkfifo(home / "input.csv")
    os.mkfifo(home / "docs" / "deep" / "p")
    m = _with_timeout(lambda: take_manifest(home, full=True), timeout=10)
    gid = (home / "input.csv").stat().st_gid
    assert m.entries["input.csv"] == Entry("fifo", 0o666 & ~_umask(), os.geteuid(), gid)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_does_not_follow_symlinks_out(home: Path) -> None:
    os.symlink("/etc", home / "etc")
    os.symlink("/etc/passwd", home / "passwd")
    os.symlink("/nonexistent/dangling", home / "dangling")
    m = take_manifest(home)
    assert m.entries["etc"].kind == "symlink" and m.entries["etc"].target == "/etc"
    assert m.entries["passwd"].sha256 is None and m.entries["passwd"].size == 0
    assert m.entries["dangling"].target == "/nonexistent/dangling"
    assert not any(p.startswith("etc/") for p in m.entries)


def test_root_given_as_symlink_is_not_followed(tmp_path: Path, home: Path) -> None:
    os.symlink(home, tmp_path / "alias")
    m = take_manifest(tmp_path / "alias")
    assert list(m.entries) == ["."] and m.entries["."].kind == "symlink"


def test_hostile_names(home: Path) -> None:
    raw_home = os.fsencode(home)
    weird = [b"line\nbreak.txt", b"bad\xff\xfename", b" lead space", b"tab\there", b"-rf", b"\xe2\x98\x83.txt"]
    for name in weird:
        with open(raw_home + b"/" + name, "wb") as f:
            f.write(name)
    os.mkdir(raw_home + b"/dir\n\xff")
    with open(raw_home + b"/dir\n\xff/inner", "wb") as f:
        f.write(b"x")
    m = take_manifest(home)
    for name in weird:
        key = os.fsdecode(name)
        assert m.entries[key].sha256 == _sha(name)
        assert os.fsencode(key) == name
    assert m.entries[os.fsdecode(b"dir\n\xff/inner")].size == 1
    back = Manifest.from_json(m.to_json())
    assert back.entries == m.entries
    assert os.fsdecode(b"bad\xff\xfename") in back.entries


def test_json_round_trip(home: Path) -> None:
    os.mkfifo(home / "pipe")
    m = take_manifest(home)
    text = m.to_json()
    json.loads(text)  # plain JSON
    back = Manifest.from_json(text)
    assert back.entries == m.entries and back.keys == m.keys and back.root == m.root
    assert Manifest.from_dict(json.loads(json.dumps(m.to_dict()))).entries == m.entries
    with pytest.raises(ValueError):
        Manifest.from_dict({"format": "other", "entries": {}})


def test_unreadable_directory_is_recorded_not_raised(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = home / "docs" / "deep"
    locked_ino = locked.stat().st_ino
    real_scandir = os.scandir

    def scandir(target=".", *a):
        if isinstance(target, int) and os.fstat(target).st_ino == locked_ino:
            raise PermissionError(13, "Permission denied")
        return real_scandir(target, *a)

    monkeypatch.setattr(os, "scandir", scandir)
    m = take_manifest(home)
    assert m.entries["docs/deep"].error == "PermissionError: Permission denied"
    assert "docs/deep/a.bin" not in m.entries
    assert m.errors() == {"docs/deep": "PermissionError: Permission denied"}
    assert m.entries["notes.txt"].error is None


def test_path_vanishing_mid_walk_is_recorded_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "h"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "child").write_text("c")
    (root / "a.txt").write_text("a")
    real_hash = manifest_mod._hash_file

    def vanishing(name, st, dir_fd):
        if name == "a.txt":
            os.unlink(root / "a.txt")
            shutil.rmtree(root / "sub")
        return real_hash(name, st, dir_fd)

    monkeypatch.setattr(manifest_mod, "_hash_file", vanishing)
    m = take_manifest(root)
    assert m.entries["a.txt"].sha256 is None
    assert m.entries["a.txt"].error.startswith("FileNotFoundError")
    # Seen before it went: recorded with the error; after: simply not there.
    assert "sub" not in m.entries or m.entries["sub"].error.startswith("FileNotFoundError")
    assert "sub/child" not in m.entries


def test_file_swapped_before_open_is_not_read(home: Path) -> None:
    st_other = os.lstat(home / "empty")
    sha, _size, error = manifest_mod._hash_file(str(home / "notes.txt"), st_other, None)
    assert sha is None and error == "replaced while being read"


def test_growing_file_is_read_only_up_to_its_size(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = home / "grows.log"
    target.write_bytes(b"0123456789" * 1000)
    real_read = os.read
    ino = target.stat().st_ino

    def read(fd: int, n: int) -> bytes:
        if os.fstat(fd).st_ino != ino:
            return real_read(fd, n)
        with open(target, "ab") as f:  # a writer appends faster than we read
            f.write(b"x" * (2 * n))
        return real_read(fd, min(n, 7))

    monkeypatch.setattr(os, "read", read)
    m = _with_timeout(lambda: take_manifest(home), timeout=10)
    monkeypatch.undo()
    assert m.entries["grows.log"].size == 10_000
    assert m.entries["grows.log"].sha256 == _sha(b"0123456789" * 1000)


def test_incremental_equals_full_after_real_modifications(home: Path) -> None:
    before = take_manifest(home)
    notes = home / "notes.txt"
    st = notes.stat()
    notes.write_bytes(b"HELLO\n")  # same size
    os.utime(notes, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the old mtime back
    os.chmod(home / "empty", 0o600)
    if os.geteuid() == 0:
        os.chown(home / "docs", 1000, 1000)
    (home / "docs" / "deep" / "a.bin").unlink()
    (home / "new.txt").write_text("new")
    os.unlink(home / "link")
    os.symlink("notes.txt", home / "link")
    (home / "empty2").write_text("")
    incremental = take_manifest(home, before)
    full = take_manifest(home, full=True)
    assert incremental.entries == full.entries
    kinds = {(c.path, c.kind) for c in diff_manifests(before, incremental)}
    assert ("notes.txt", "content_changed") in kinds
    assert ("link", "link_changed") in kinds


def test_unchanged_files_are_not_read_again(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifest_mod, "RACY_NS", 0)
    reads: list[str] = []
    real_hash = manifest_mod._hash_file

    def counting(name, st, dir_fd):
        reads.append(name)
        return real_hash(name, st, dir_fd)

    monkeypatch.setattr(manifest_mod, "_hash_file", counting)
    first = take_manifest(home)
    assert sorted(reads) == ["a.bin", "empty", "notes.txt"]
    reads.clear()
    second = take_manifest(home, first)
    assert reads == [] and second.entries == first.entries
    assert all(second.entries[p] is first.entries[p] for p in first.entries)
    with open(home / "notes.txt", "a") as f:
        f.write("more\n")
    third = take_manifest(home, second)
    assert reads == ["notes.txt"]
    assert third.entries["notes.txt"].size == 11
    reads.clear()
    take_manifest(home, third, full=True)
    assert sorted(reads) == ["a.bin", "empty", "notes.txt"]


def test_recent_changes_keep_no_stat_key(home: Path) -> None:
    """Files changed within RACY_NS of a walk are re-read by the next one, whatever their key."""
    m = take_manifest(home)
    assert "notes.txt" not in m.keys
    assert take_manifest(home, m).entries == m.entries


def test_directory_mtime_is_not_compared(home: Path) -> None:
    before = take_manifest(home)
    (home / "docs" / "tmp").write_text("x")
    (home / "docs" / "tmp").unlink()
    os.utime(home / "docs", (0, 0))
    assert diff_manifests(before, take_manifest(home, before)) == []


def test_deep_nesting_does_not_recurse(tmp_path: Path) -> None:
    path = tmp_path / "h"
    path.mkdir()
    raw = os.fsencode(path)
    depth = 1500  # past Python's recursion limit
    fd = os.open(raw, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir(b"d", dir_fd=fd)
        nxt = os.open(b"d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    os.close(fd)
    try:
        m = take_manifest(path)
        assert len(m) == depth + 1
    finally:
        _remove_chain(raw, depth)  # pytest's own cleanup recurses and would fail on it


def _remove_chain(top: bytes, depth: int) -> None:
    for level in range(depth, 0, -1):
        os.rmdir(top + b"/d" * level)


@pytest.mark.slow
def test_hundred_thousand_files(tmp_path: Path) -> None:
    root = tmp_path / "big"
    for d in range(400):
        sub = root / f"d{d // 20}" / f"s{d}"
        sub.mkdir(parents=True)
        for i in range(250):
            (sub / f"f{i}.txt").write_bytes(b"%d-%d\n" % (d, i))
    full = _with_timeout(lambda: take_manifest(root), timeout=300)
    assert sum(1 for e in full.entries.values() if e.kind == "file") == 100_000
    (root / "d0" / "s0" / "f0.txt").write_text("changed")
    again = take_manifest(root, full)
    changes = diff_manifests(full, again)
    assert [(c.path, c.kind) for c in changes] == [("d0/s0/f0.txt", "content_changed")]
    assert Manifest.from_json(again.to_json()).entries == again.entries
