"""ADD of local archives: known by content, unpacked with their owners, modes and times, and refused
where a member would land outside the destination, each checked on real files under tmp_path.

Unpacking chowns to shifted ids, so these cases need root (the ``layer`` fixture).
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

from context_fixtures import SHIFT, beside_the_layer, copy, host_id, layer, owner_of  # noqa: F401  (layer: fixture)
from pytest_termrl.errors import TaskFormatError
from pytest_termrl.sandbox.build.archive import add_archive, is_archive
from pytest_termrl.sandbox.build.context import BuildContext
from pytest_termrl.sandbox.build.ownership import Owner


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
