"""Tar streams and trusted volumes: how homes and mounts cross to a remote Docker engine.

A remote engine sees none of this machine's files, so the docker backend ships the agent's
home as a tar and reads it back as one. The collateral oracle then judges the mirror, so the
round trip must keep every property a manifest compares (kinds, modes, numeric owners, bytes,
link targets), and extraction must refuse any archive the agent could have shaped to write
outside the landing folder. The verifier's trusted mounts cross as read-only volumes, keyed by
what they hold. None of this needs an engine: archives are built and read here, in memory,
and the engine's two volume calls are stood in for by recording fakes (the real engine path is
covered by tests/integration/test_docker_backend.py).
"""

from __future__ import annotations

import io
import os
import re
import socket
import stat
import sys
import tarfile
from pathlib import Path
from typing import Callable

import pytest

from pytest_termrl.errors import SandboxError
from pytest_termrl.oracle.manifest import take_manifest
from pytest_termrl.sandbox.base import TrustedMount
from pytest_termrl.sandbox.docker.volumes import (
    TrustedVolumes,
    fingerprint,
    mount_groups,
    pytest_site_names,
    python_prefix_filter,
)
from pytest_termrl.sandbox.output import read_capped
from pytest_termrl.sandbox.tarstream import (
    ChunkReader,
    TarStreamError,
    extract_tree,
    parent_dirs_tar,
    read_capped_member,
    tar_tree,
)

AGENT = 1000
PY = f"python{sys.version_info.major}.{sys.version_info.minor}"
NON_UTF8 = os.fsdecode(b"caf\xe9-\xff.txt")
"""A name that is not UTF-8: it must survive as the very same bytes."""

_TYPES = {
    "file": tarfile.REGTYPE,
    "dir": tarfile.DIRTYPE,
    "symlink": tarfile.SYMTYPE,
    "hardlink": tarfile.LNKTYPE,
    "fifo": tarfile.FIFOTYPE,
    "chardev": tarfile.CHRTYPE,
}


# -- helpers ---------------------------------------------------------------------------------
def _member(name: str, kind: str = "file", data: bytes = b"", link: str = "", mode: int | None = None) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = _TYPES[kind]
    info.mode = mode if mode is not None else (0o755 if kind == "dir" else 0o644)
    info.linkname = link
    info.size = len(data) if kind == "file" else 0
    if kind == "chardev":
        info.devmajor, info.devminor = 1, 3
    return info, data


def _tar(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return buffer.getvalue()


def _chunks(data: bytes, size: int = 1000) -> list[bytes]:
    """The archive as the Docker SDK streams it: many small pieces, split anywhere."""
    return [data[i : i + size] for i in range(0, len(data), size)]


def _members(data: bytes) -> dict[str, tarfile.TarInfo]:
    """Members by name; a repeated name keeps its last entry, as extraction would."""
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {info.name: info for info in tar.getmembers()}


def _member_bytes(data: bytes, name: str) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return tar.extractfile(name).read()


def _paths(root: Path) -> set[str]:
    """Every path under root, relative, links not followed."""
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            found.add(os.path.relpath(os.path.join(dirpath, name), root))
    return found


def _write(path: Path, data: bytes | str, mode: int = 0o644, owner: int | None = None, mtime_ns: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    if owner is not None:
        os.chown(path, owner, owner)  # before chmod: a chown clears setuid
    os.chmod(path, mode)
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


def _build_home(root: Path) -> None:
    """A home holding every kind of path, mode and owner the oracle compares."""
    root.mkdir()
    _write(root / "private.txt", "secret\n", 0o600, owner=AGENT)
    _write(root / "setuid-tool", "#!/bin/sh\n", 0o4755, owner=AGENT)
    _write(root / "locked" / "inside.txt", "behind a 000 folder\n")
    os.chmod(root / "locked", 0o000)
    (root / "shared").mkdir()
    os.chmod(root / "shared", 0o1777)
    os.symlink("/nonexistent-termrl/passwd", root / "abs-link")
    os.symlink("no/such/target", root / "dangling")
    os.lchown(root / "dangling", AGENT, AGENT)
    os.mkfifo(root / "pipe", 0o640)
    _write(root / "data.bin", bytes(range(256)) * 4)
    os.link(root / "data.bin", root / "data-link.bin")
    _write(root / NON_UTF8, "non-UTF-8 name\n")
    _write(root / "empty", b"")
    os.chown(root, AGENT, AGENT)
    os.chmod(root, 0o750)


def _bind_socket(folder: Path, name: str) -> None:
    """A socket file in folder, bound by a relative name (AF_UNIX paths are short); cwd restored."""
    with pytest.MonkeyPatch.context() as patch, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        patch.chdir(folder)
        sock.bind(name)


# -- the round trip -----------------------------------------------------------------------------
@pytest.mark.timeout(60)  # a FIFO opened by mistake would block: this fails instead of hanging
def test_home_round_trip_keeps_everything_the_oracle_compares(tmp_path):
    root = tmp_path / "home"
    _build_home(root)
    _bind_socket(root, "sock")
    before = take_manifest(root, full=True).entries
    assert before["."].mode == 0o750 and (before["."].uid, before["."].gid) == (AGENT, AGENT)
    assert before["setuid-tool"].mode == 0o4755 and before["setuid-tool"].uid == AGENT
    assert before["locked"].mode == 0 and before["shared"].mode == 0o1777
    assert before["sock"].kind == "socket" and before["pipe"].kind == "fifo"

    dest = tmp_path / "landing"
    dest.mkdir()
    extracted = extract_tree(_chunks(tar_tree(root, "user")), dest, "user")

    assert extracted == dest / "user"
    after = take_manifest(extracted, full=True).entries
    expected = {path: entry for path, entry in before.items() if path != "sock"}
    assert after == expected
    assert "sock" not in after
    assert stat.S_ISFIFO(os.lstat(extracted / "pipe").st_mode)
    linked = os.lstat(extracted / "data.bin")
    assert linked.st_nlink == 2 and os.lstat(extracted / "data-link.bin").st_ino == linked.st_ino
    assert os.fsencode(NON_UTF8) in os.listdir(os.fsencode(extracted))
    assert os.readlink(extracted / "abs-link") == "/nonexistent-termrl/passwd"


def test_tar_tree_keep_leaves_out_a_folder_and_everything_under_it(tmp_path):
    root = tmp_path / "tree"
    _write(root / "kept.txt", "kept\n")
    _write(root / "sub" / "a.txt", "a\n")
    _write(root / "skip" / "inner" / "deep.txt", "never archived\n")
    _write(root / "skipper.txt", "only the folder named skip goes\n")
    asked: list[str] = []

    def keep(rel: str) -> bool:
        asked.append(rel)
        return rel != "skip"

    names = set(_members(tar_tree(root, keep=keep)))

    assert names == {".", "kept.txt", "skipper.txt", "sub", "sub/a.txt"}
    assert not any(rel.startswith("skip/") for rel in asked), "a folder left out must not be walked"


def test_parent_dirs_tar_lists_each_parent_once_root_owned_parents_first():
    infos = parent_dirs_tar(["a/b/c", "a/d", "e", "f/g"])

    assert [info.name for info in infos] == ["a", "a/b", "f"]
    assert all(info.isdir() and info.mode == 0o755 and (info.uid, info.gid) == (0, 0) for info in infos)


def test_chunk_reader_joins_chunks_and_skips_empty_ones():
    reader = ChunkReader(iter([b"", b"ab", b"", b"", b"cde", b"f"]))

    assert reader.read() == b"abcdef"
    assert reader.read() == b""


def test_hand_built_archive_extracts(tmp_path):
    """The control for the hostile cases below: the same builder, with nothing wrong in it."""
    archive = _tar([
        _member("user", "dir", mode=0o700),
        _member("user/a", "dir"),
        _member("user/a/b", data=b"bytes\n", mode=0o640),
        _member("user/s", "symlink", link="a/b"),
        _member("user/h", "hardlink", link="user/a/b", mode=0o640),  # a link's header carries its inode's mode
    ])

    top = extract_tree(_chunks(archive, 100), tmp_path, "user")

    assert (top / "a" / "b").read_bytes() == b"bytes\n"
    assert stat.S_IMODE(os.lstat(top).st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(top / "a" / "b").st_mode) == 0o640
    assert os.readlink(top / "s") == "a/b"
    assert os.lstat(top / "h").st_ino == os.lstat(top / "a" / "b").st_ino


# -- hostile archives -----------------------------------------------------------------------------
_TOP = _member("user", "dir")
HOSTILE: list = [
    # (id, members given the outside folder's absolute path, paths that must not exist after)
    ("dotdot", lambda out: [_TOP, _member("user/../escape", data=b"x")], ("dest/escape",)),
    ("dotdot-folder", lambda out: [_TOP, _member("user/..", "dir", mode=0o777)], ()),
    ("dotdot-twice", lambda out: [_TOP, _member("user/../../escape", data=b"x")], ("escape",)),
    ("absolute", lambda out: [_TOP, _member("/user/x", data=b"x")], ("/user/x",)),
    ("outside-top", lambda out: [_TOP, _member("other/x", data=b"x")], ("dest/other",)),
    ("under-symlink", lambda out: [_TOP, _member("user/link", "symlink", link=out), _member("user/link/x", data=b"x")], ("outside/x",)),
    ("before-folder", lambda out: [_TOP, _member("user/a/b", data=b"x")], ("dest/user/a",)),
    ("chardev", lambda out: [_TOP, _member("user/null", "chardev")], ("dest/user/null",)),
    ("hardlink-absolute", lambda out: [_TOP, _member("user/h", "hardlink", link="/etc/passwd")], ("dest/user/h",)),
    ("hardlink-dotdot", lambda out: [_TOP, _member("user/h", "hardlink", link="user/../../outside/target")], ("dest/user/h",)),
    ("hardlink-not-extracted", lambda out: [_TOP, _member("user/h", "hardlink", link="user/missing")], ("dest/user/h",)),
    ("hardlink-to-symlink", lambda out: [_TOP, _member("user/s", "symlink", link=f"{out}/target"), _member("user/h", "hardlink", link="user/s")], ("dest/user/h",)),
    ("no-top", lambda out: [], ("dest/user",)),
    ("top-is-file", lambda out: [_member("user", data=b"x")], ("dest/user",)),
    ("top-is-symlink", lambda out: [_member("user", "symlink", link=out)], ("dest/user",)),
    # A name given twice: the second entry would be written through the link the first made.
    ("twice-file-through-link", lambda out: [_TOP, _member("user/x", "symlink", link=f"{out}/target"), _member("user/x", data=b"pwned\n", mode=0o6777)], ()),
    ("twice-folder-through-link", lambda out: [_TOP, _member("user/d", "symlink", link=out), _member("user/d", "dir", mode=0o777), _member("user/d/new", data=b"x")], ("outside/new",)),
]


@pytest.mark.parametrize(("members", "absent"), [pytest.param(m, a, id=i) for i, m, a in HOSTILE])
def test_hostile_archive_is_refused_and_writes_nothing_outside(tmp_path, members: Callable[[str], list], absent: tuple[str, ...]):
    outside = tmp_path / "outside"
    target = _write(outside / "target", "precious\n", 0o600)
    dest = tmp_path / "dest"
    dest.mkdir(mode=0o700)
    before = _paths(tmp_path)

    with pytest.raises(TarStreamError):
        extract_tree(_chunks(_tar(members(str(outside))), 512), dest, "user")

    new = _paths(tmp_path) - before
    assert all(path == "dest/user" or path.startswith("dest/user/") for path in new), new
    for path in absent:
        assert not os.path.lexists(tmp_path / path), path
    assert target.read_text() == "precious\n" and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert os.listdir(outside) == ["target"]
    assert stat.S_IMODE(dest.stat().st_mode) == 0o700, "the landing folder's own mode is not the archive's to set"


# -- capped output from an archive ----------------------------------------------------------------
CAP = 3000


def _numbered_lines(size: int) -> bytes:
    text = "".join(f"line {n:07d}\n" for n in range(size // 13 + 1)).encode()
    return text[:size]


@pytest.mark.parametrize("size", [0, 100, CAP, CAP + 1, 2 * CAP, 1_000_000])
def test_read_capped_member_matches_read_capped_on_the_same_bytes(tmp_path, size):
    data = _numbered_lines(size)
    path = _write(tmp_path / "out.7", data)

    got = read_capped_member(_chunks(_tar([_member("out.7", data=data)]), 777), CAP)

    assert got == read_capped(str(path), CAP)
    text, truncated = got
    assert truncated == (size > CAP)
    if truncated:
        assert f"[... {size - 2 * (CAP // 2)} bytes of output cut ...]" in text
        assert text.startswith("line 0000000\n") and text.endswith(data[-13:].decode())
    else:
        assert text == data.decode()


@pytest.mark.parametrize("member", [
    pytest.param(_member("out.7", "fifo"), id="fifo"),
    pytest.param(_member("out.7", "symlink", link="/etc/shadow"), id="symlink"),
    pytest.param(_member("out.7", "dir"), id="dir"),
])
def test_read_capped_member_gives_none_for_anything_but_a_regular_file(member):
    assert read_capped_member(_chunks(_tar([member])), CAP) is None


def test_read_capped_member_of_an_empty_archive_is_none():
    assert read_capped_member(_chunks(_tar([])), CAP) is None


# -- trusted mounts as volumes ----------------------------------------------------------------------
def _mount(tmp_path: Path, name: str, inside: str) -> TrustedMount:
    host = tmp_path / name
    host.mkdir(parents=True, exist_ok=True)
    return TrustedMount(host, inside)


def test_mount_groups_gathers_non_system_tops_and_leaves_system_paths_alone(tmp_path):
    pyenv = _mount(tmp_path, "pyenv", "/root/.pyenv/versions/3.11.7")
    tools = _mount(tmp_path, "tools", "/root/tools")
    venv = _mount(tmp_path, "venv", "/work/x/.venv")
    opt = _mount(tmp_path, "opt-tests", "/opt/termrl/tests")
    tests = _mount(tmp_path, "tests", "/tests")

    groups = mount_groups([tests, venv, opt, tools, pyenv])

    assert groups == {
        "/root": [(".pyenv/versions/3.11.7", pyenv), ("tools", tools)],
        "/work": [("x/.venv", venv)],
        "/opt/termrl/tests": [(".", opt)],
        "/tests": [(".", tests)],
    }


def test_mount_groups_refuses_a_file_and_names_it(tmp_path):
    host = _write(tmp_path / "runner.py", "print()\n")

    with pytest.raises(SandboxError, match=re.escape(str(host))):
        mount_groups([_mount(tmp_path, "tests", "/tests"), TrustedMount(host, "/opt/termrl/runner.py")])


def test_pytest_site_names_are_pytest_and_its_dependencies_only():
    names = pytest_site_names()

    assert {"pytest", "_pytest", "pluggy"} <= names
    assert not {"torch", "docker"} & names


def test_python_prefix_filter_keeps_the_interpreter_and_stdlib_without_its_tests():
    keep = python_prefix_filter(Path(sys.base_prefix))

    assert keep is not None
    assert keep(f"bin/{PY}") and keep(f"lib/{PY}") and keep(f"lib/{PY}/os.py")
    assert not keep(f"lib/{PY}/test") and not keep(f"lib/{PY}/test/test_os.py")
    assert not keep("include") and not keep(f"include/{PY}/Python.h")
    assert not keep("bin/pip")


def test_python_prefix_filter_keeps_only_pytest_from_a_venv_site_packages():
    keep = python_prefix_filter(Path(sys.prefix))
    site = f"lib/{PY}/site-packages"

    assert keep is not None
    assert keep("pyvenv.cfg")
    assert keep(f"{site}/_pytest/main.py") and keep(f"{site}/pytest/__init__.py") and keep(f"{site}/pluggy/__init__.py")
    assert not keep(f"{site}/torch") and not keep(f"{site}/torch/__init__.py")
    assert not keep(f"{site}/docker/client.py")


def test_python_prefix_filter_of_a_plain_folder_is_none(tmp_path):
    _write(tmp_path / "lib" / "notes.txt", "no python here\n")

    assert python_prefix_filter(tmp_path) is None


# -- fingerprints ----------------------------------------------------------------------------------
MTIME_NS = 1_700_000_000_000_000_000


def _small_tree(root: Path) -> Path:
    _write(root / "a.txt", "alpha\n", mtime_ns=MTIME_NS)
    _write(root / "sub" / "b.py", "print('b')\n", 0o755, mtime_ns=MTIME_NS)
    _write(root / "cache" / "c.pyc", b"\x00" * 8, mtime_ns=MTIME_NS)
    os.symlink("a.txt", root / "link")
    return root


def test_fingerprint_is_equal_for_identical_trees_at_different_paths(tmp_path):
    one = _small_tree(tmp_path / "one")
    two = _small_tree(tmp_path / "elsewhere" / "two")

    assert fingerprint(one, None) == fingerprint(two, None)


@pytest.mark.parametrize("change", [
    pytest.param(lambda root: _write(root / "a.txt", "alpha, longer\n", mtime_ns=MTIME_NS), id="size"),
    pytest.param(lambda root: os.utime(root / "a.txt", ns=(MTIME_NS + 10**9, MTIME_NS + 10**9)), id="mtime"),
    pytest.param(lambda root: os.chmod(root / "sub" / "b.py", 0o700), id="mode"),
    pytest.param(lambda root: (os.unlink(root / "link"), os.symlink("sub", root / "link")), id="link-target"),
    pytest.param(lambda root: _write(root / "sub" / "new.txt", "", mtime_ns=MTIME_NS), id="new-file"),
])
def test_fingerprint_changes_with_what_a_volume_would_hold(tmp_path, change):
    root = _small_tree(tmp_path / "tree")
    before = fingerprint(root, None)

    change(root)

    assert fingerprint(root, None) != before


def test_fingerprint_ignores_what_keep_leaves_out(tmp_path):
    root = _small_tree(tmp_path / "tree")
    keep = lambda rel: rel != "cache"  # noqa: E731
    before = fingerprint(root, keep)

    _write(root / "cache" / "c.pyc", b"\x01" * 100)

    assert fingerprint(root, keep) == before
    assert fingerprint(root, None) != fingerprint(_small_tree(tmp_path / "fresh"), None)


# -- TrustedVolumes ---------------------------------------------------------------------------------
class FakeEngine:
    """Records what TrustedVolumes asks of the engine: volumes made (by key) and filled."""

    def __init__(self) -> None:
        self.created: list[str] = []
        self.filled: list[tuple[str, bytes]] = []

    def create_volume(self, key: str) -> str:
        self.created.append(key)
        return f"vol-{len(self.created)}"

    def fill(self, name: str, data: bytes) -> None:
        self.filled.append((name, data))

    def archive(self, name: str) -> bytes:
        return [data for filled, data in self.filled if filled == name][-1]


def _fake_prefix(root: Path) -> Path:
    """A Python prefix small enough to archive: what the verifier needs and what it does not."""
    _write(root / "bin" / PY, "#!interpreter\n", 0o755)
    _write(root / "bin" / "pip", "#!pip\n", 0o755)
    _write(root / "lib" / PY / "os.py", "# os\n")
    _write(root / "lib" / PY / "test" / "test_os.py", "# stdlib tests\n")
    _write(root / "lib" / PY / "site-packages" / "_pytest" / "main.py", "# pytest\n")
    _write(root / "lib" / PY / "site-packages" / "torch" / "__init__.py", "# torch\n")
    _write(root / "include" / PY / "Python.h", "/* header */\n")
    return root


@pytest.fixture
def trusted(tmp_path):
    """A fake engine, TrustedVolumes over it, and mounts: a prefix and a tool folder under /root, tests at /tests."""
    prefix = TrustedMount(_fake_prefix(tmp_path / "pyenv"), "/root/.pyenv/versions/3.11.7")
    tools = _mount(tmp_path, "tools", "/root/tools")
    _write(tools.host_path / "helper.sh", "echo help\n", 0o750, owner=AGENT)
    os.chown(tools.host_path, AGENT, AGENT)
    os.chmod(tools.host_path, 0o700)
    tests = _mount(tmp_path, "tests", "/tests")
    _write(tests.host_path / "test_task.py", "def test_it(): pass\n")
    engine = FakeEngine()
    return engine, TrustedVolumes(engine.create_volume, engine.fill), [prefix, tools, tests]


def test_trusted_volumes_are_made_and_filled_once_per_content(trusted):
    engine, volumes, mounts = trusted

    first = volumes.volumes_for(mounts)
    second = volumes.volumes_for(list(reversed(mounts)))

    assert first == second == [("/root", "vol-1"), ("/tests", "vol-2")]
    assert len(engine.created) == len(set(engine.created)) == 2
    assert [name for name, _ in engine.filled] == ["vol-1", "vol-2"]


def test_trusted_volume_archive_holds_root_owned_parents_and_the_mounts_files(trusted):
    engine, volumes, mounts = trusted
    volumes.volumes_for(mounts)
    data = engine.archive("vol-1")
    members = _members(data)
    pyenv = ".pyenv/versions/3.11.7"

    for name in (".", ".pyenv", ".pyenv/versions"):
        info = members[name]
        assert info.isdir() and info.mode == 0o755 and (info.uid, info.gid) == (0, 0), name
    tools = members["tools"]
    assert tools.isdir() and tools.mode == 0o700 and tools.uid == AGENT, "a mount's own folder keeps its mode and owner"
    assert members["tools/helper.sh"].mode == 0o750 and _member_bytes(data, "tools/helper.sh") == b"echo help\n"
    assert _member_bytes(data, f"{pyenv}/lib/{PY}/os.py") == b"# os\n"
    assert {f"{pyenv}/bin/{PY}", f"{pyenv}/lib/{PY}/site-packages/_pytest/main.py"} <= set(members)
    left_out = ("bin/pip", f"lib/{PY}/test", f"lib/{PY}/site-packages/torch", "include")
    assert not [name for name in members if any(name.startswith(f"{pyenv}/{part}") for part in left_out)]
    assert _member_bytes(engine.archive("vol-2"), "test_task.py") == b"def test_it(): pass\n"


def test_changing_a_small_mount_makes_a_new_volume_and_leaves_the_others(trusted):
    engine, volumes, mounts = trusted
    volumes.volumes_for(mounts)
    tests = mounts[2].host_path

    _write(tests / "test_task.py", "def test_it(): assert True\n")
    result = volumes.volumes_for(mounts)

    assert result == [("/root", "vol-1"), ("/tests", "vol-3")]
    assert [name for name, _ in engine.filled] == ["vol-1", "vol-2", "vol-3"]
    assert _member_bytes(engine.archive("vol-3"), "test_task.py") == b"def test_it(): assert True\n"


def test_read_capped_member_of_multibyte_output_matches_read_capped(tmp_path):
    data = ("€" * 5000).encode()
    path = _write(tmp_path / "out.7", data)
    got = read_capped_member(_chunks(_tar([_member("out.7", data=data)]), 777), CAP)
    assert got == read_capped(str(path), CAP)
    assert got[0].startswith("€" * (CAP // 2) + "\n[... 6000 bytes")


def test_a_python_prefix_is_fingerprinted_for_the_process_life(trusted, monkeypatch):
    engine, volumes, mounts = trusted
    import pytest_termrl.sandbox.docker.volumes as docker_volumes

    walks = []
    real = docker_volumes.fingerprint
    monkeypatch.setattr(docker_volumes, "fingerprint", lambda root, keep: walks.append((root, keep is not None)) or real(root, keep))
    volumes.volumes_for(mounts)
    volumes.volumes_for(mounts)
    assert sum(1 for _, is_prefix in walks if is_prefix) == 1  # the prefix is walked once, the tests each time

    _write(mounts[0].host_path / "lib" / PY / "os.py", "# os, patched after the first look\n")

    assert volumes.volumes_for(mounts) == [("/root", "vol-1"), ("/tests", "vol-2")]
    assert len(engine.filled) == 2


def test_forget_makes_the_next_request_fill_again(trusted):
    engine, volumes, mounts = trusted
    volumes.volumes_for(mounts)

    volumes.forget("vol-2")
    result = volumes.volumes_for(mounts)

    assert result == [("/root", "vol-1"), ("/tests", "vol-3")]
    assert engine.created[2] == engine.created[1], "the same contents ask for the same key"
    assert [name for name, _ in engine.filled] == ["vol-1", "vol-2", "vol-3"]
