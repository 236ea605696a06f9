"""``ADD`` of a local archive: which files it unpacks, and unpacking one into the destination folder.

Detected by content (gzip, bzip2, xz or plain tar whose first header reads), never by name;
unpacked into the destination as a folder. Members keep their mode and times and their own
numeric owners unless ``--chown`` is given (BuildKit v0.23 and later apply it to every member);
folders implied by a member are made 0755 root. Refused, with the member named: absolute
names, ``..``, device files, unknown member types, a symlink or hard link whose target leaves
the destination, and anything that would be written through a link to outside it. zstd
archives are not unpacked here (no standard-library decoder).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import posixpath
import stat
import tarfile
import zlib
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Callable, Iterator, cast

from .layer import Layer, dest_path
from .ownership import ROOT, Owner
from .paths import go_clean

__all__ = ["add_archive", "is_archive"]

_GZIP = b"\x1f\x8b\x08"
_BZIP2 = b"BZh"
_XZ = b"\xfd7zXZ\x00"
_ZSTD = b"\x28\xb5\x2f\xfd"

_READ_ERRORS = (tarfile.TarError, OSError, EOFError, lzma.LZMAError, zlib.error, ValueError)


@contextmanager
def _open_tar(path: Path) -> Iterator[tarfile.TarFile | None]:
    """``path`` read as a tar stream, decompressed by content (what the engine's
    DecompressStream detects); None for zstd, which the standard library cannot read."""
    with ExitStack() as stack:
        raw = stack.enter_context(open(path, "rb"))
        head = raw.read(6)
        raw.seek(0)
        stream: IO[bytes]
        if head.startswith(_GZIP):
            stream = stack.enter_context(cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb")))
        elif head.startswith(_BZIP2):
            stream = stack.enter_context(bz2.BZ2File(raw, mode="rb"))
        elif head.startswith(_XZ):
            stream = stack.enter_context(lzma.LZMAFile(raw, mode="rb"))
        elif head.startswith(_ZSTD):
            yield None
            return
        else:
            stream = raw
        with tarfile.open(fileobj=stream, mode="r|") as tf:
            yield tf


def is_archive(path: Path) -> bool:
    """Whether ADD unpacks ``path``: a regular file (not a symlink) whose bytes, decompressed if
    gzip, bzip2 or xz, start with a readable tar header. The name plays no part."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    try:
        with _open_tar(Path(path)) as tf:
            return tf is not None and tf.next() is not None
    except _READ_ERRORS:
        return False


def add_archive(layer: Path, archive: Path, dest: str, *, where: str, owner: Owner | None,
                host_id: Callable[[int], int], workdir: str,
                existing: Callable[[str], str | None] | None = None) -> list[str]:
    """Unpack the local archive ``archive`` into the folder ``dest`` of ``layer`` (the image's
    ``/``), as ADD does, and return the absolute image paths written. ``existing`` (optional,
    as for copy_into) tells which folders the lower image already has."""
    field = "ADD"
    target_abs, _ = dest_path(dest, workdir)
    out = Layer(layer, where, field, host_id, existing)
    base = out.resolve(target_abs)
    if out.kind(base) == "file":
        raise out.fail(f"cannot unpack {Path(archive).name} into {base}, which is a file")
    out.ensure_dir(base, owner if owner is not None else ROOT)
    try:
        with _open_tar(Path(archive)) as tf:
            if tf is None:
                raise out.fail(f"{archive} is a zstd archive, which this builder cannot unpack")
            for member in tf:
                _unpack_member(out, tf, member, base, owner)
    except _READ_ERRORS as err:
        raise out.fail(f"cannot unpack the archive {archive}: {err}") from None
    return out.done()


def _within(path: str, base: str) -> bool:
    """Whether the image path ``path`` is ``base`` or below it."""
    return base == "/" or path == base or path.startswith(base.rstrip("/") + "/")


def _member_parts(out: Layer, name: str, what: str) -> list[str]:
    if name.startswith("/"):
        raise out.fail(f"archive {what} {name!r} has an absolute name")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise out.fail(f"archive {what} {name!r} climbs with '..'")
    return parts


def _unpack_member(out: Layer, tf: tarfile.TarFile, member: tarfile.TarInfo, base: str, owner: Owner | None) -> None:
    """Write one member (a folder's times are set once its contents are in: ``Layer.done``)."""
    name = member.name
    parts = _member_parts(out, name, "member")
    if not parts:
        return
    if member.ischr() or member.isblk():
        raise out.fail(f"archive member {name!r} is a device file")
    if not (member.isreg() or member.isdir() or member.issym() or member.islnk() or member.isfifo()):
        raise out.fail(f"archive member {name!r} has an unsupported type {member.type!r}")
    lexical = posixpath.join(base, *parts)
    ipath = out.resolve(lexical, follow_leaf=member.isdir())
    if not _within(ipath, base):
        raise out.fail(f"archive member {name!r} would be written at {ipath}, outside {base}, through a symbolic link")
    ids = owner if owner is not None else Owner(member.uid, member.gid)
    mode = member.mode & 0o7777
    mtime_ns = int(member.mtime * 1e9)
    parent = posixpath.dirname(ipath)
    out.ensure_dir(parent, ROOT)
    if member.isdir():
        out.put_dir(ipath, ids, mode, mtime_ns, mtime_ns)
        return
    if member.issym():
        target = member.linkname
        pointed = go_clean(target if target.startswith("/") else posixpath.join(parent, target))
        if not _within(pointed, base):
            raise out.fail(f"archive symlink {name!r} points to {target!r}, outside {base}")
        out.clear(ipath)
        out.put_symlink(ipath, target, ids)
        out.stamp(ipath, mtime_ns, mtime_ns)
        return
    if member.islnk():
        link_parts = _member_parts(out, member.linkname, "hard link target")
        if not link_parts:
            raise out.fail(f"archive hard link {name!r} points to the extraction folder itself")
        source = out.resolve(posixpath.join(base, *link_parts), follow_leaf=False)
        if not _within(source, base):
            raise out.fail(f"archive hard link {name!r} points to {member.linkname!r}, outside {base}")
        sst = out.lstat(source)
        if sst is None or stat.S_ISDIR(sst.st_mode):
            raise out.fail(f"archive hard link {name!r} points to {member.linkname!r}, which the archive has not written as a file")
        if source != ipath:
            out.clear(ipath)
            out.link(source, ipath)
        if stat.S_ISLNK(sst.st_mode):
            out.note(ipath)
        else:
            out.own(ipath, ids, mode)
            out.stamp(ipath, mtime_ns, mtime_ns)
        return
    out.clear(ipath)
    if member.isfifo():
        os.mkfifo(out.host(ipath), 0o600)
        out.own(ipath, ids, mode)
    else:
        data = tf.extractfile(member)
        assert data is not None
        out.put_file(ipath, data, ids, mode)
    out.stamp(ipath, mtime_ns, mtime_ns)
