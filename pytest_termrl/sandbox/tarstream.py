"""Trees to tar and back, faithfully and safely: how a home crosses to a remote Docker engine.

A remote engine sees none of this machine's files, so the docker backend moves the agent's
home by ``put_archive`` / ``get_archive``. The collateral oracle compares kind, mode, owner,
size, bytes and link targets, so the round trip must keep all of them: numeric owners,
permission bits as they are (even 000 and setuid), symlinks unresolved, FIFOs as FIFOs
(never opened), hard links as links. The archive coming back was shaped by the agent, so
extraction takes no name that leaves the destination and no member whose parent is not a
folder this extraction made itself.
"""

from __future__ import annotations

import io
import stat
import tarfile
from collections import deque
from pathlib import Path
from typing import Callable, Iterable, Iterator

from .hostfs import walk_tree
from .output import clean_text, join_head_tail

_KEPT_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.FIFOTYPE)


class TarStreamError(Exception):
    """An archive from the engine that cannot be taken as it is."""


class ChunkReader(io.RawIOBase):
    """A read-only file over an iterator of byte chunks (what the Docker SDK streams)."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._pending = b""

    def readable(self) -> bool:
        return True

    def drain(self) -> None:
        """Read the stream to its end: a response left half-read keeps its connection (over
        ssh, a channel) from going back to the pool."""
        self._pending = b""
        for _ in self._chunks:
            pass

    def readinto(self, buffer) -> int:
        while not self._pending:
            try:
                self._pending = next(self._chunks)
            except StopIteration:
                return 0
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size


def chunked(data: bytes, size: int = 1 << 20) -> Iterator[bytes]:
    """Bytes as a stream of slices: an upload the SDK sends chunk by chunk.

    One large ``bytes`` body is sent over an ``ssh://`` engine's channel by re-slicing the
    rest after every packet, which is quadratic (minutes for a 100 MB archive)."""
    view = memoryview(data)
    for start in range(0, len(view), size):
        yield bytes(view[start : start + size])


# -- host tree -> tar ------------------------------------------------------------------
def tar_tree(root: Path, arcroot: str = ".", keep: Callable[[str], bool] | None = None) -> bytes:
    """The tree at root as a tar whose members sit under arcroot (``.`` is root itself).

    ``keep(relative path)`` may leave paths out (a folder left out takes its contents along).
    Sockets are left out: they cannot be recreated by extracting.
    """
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        add_tree(tar, root, arcroot, keep)
    return buffer.getvalue()


def add_tree(tar: tarfile.TarFile, root: Path, arcroot: str, keep: Callable[[str], bool] | None = None) -> None:
    """Add root and everything under it, without following a link, to an open tar."""
    _add(tar, Path(root), arcroot)
    for rel, path in walk_tree(root, keep):
        _add(tar, Path(path), f"{arcroot}/{rel}" if arcroot != "." else rel)


def _add(tar: tarfile.TarFile, path: Path, arcname: str) -> None:
    info = tar.gettarinfo(str(path), arcname)
    if info is None:  # a socket
        return
    info.uname = info.gname = ""  # numeric owners only: names differ between machines
    if info.isreg():
        with open(path, "rb") as handle:
            tar.addfile(info, handle)
    else:
        tar.addfile(info)


def parent_dirs_tar(paths: Iterable[str], mode: int = 0o755) -> list[tarfile.TarInfo]:
    """Folder entries (root-owned) for every parent of the given relative paths, parents first."""
    seen: dict[str, tarfile.TarInfo] = {}
    for path in paths:
        parts = Path(path).parts[:-1]
        for depth in range(1, len(parts) + 1):
            name = "/".join(parts[:depth])
            if name not in seen:
                info = tarfile.TarInfo(name)
                info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, mode, 0, 0
                seen[name] = info
    return list(seen.values())


# -- tar from the engine -> host tree ------------------------------------------------------
Aside = Callable[[tarfile.TarFile, tarfile.TarInfo], None]


def extract_tree(chunks: Iterable[bytes], dest: Path, top: str, aside: Aside | None = None) -> Path:
    """Extract an engine archive of one folder (its members named ``top/...``) into dest.

    Returns dest/top. Owners, modes and link targets are kept as archived; anything that
    would land outside dest/top, go through a link, or is a device, is refused. Members
    outside top go to ``aside(tar, member)`` when given (never extracted), else are refused.
    """
    dest = Path(dest)
    made_dirs: set[str] = set()
    made_files: set[str] = set()
    made: set[str] = set()
    reader = ChunkReader(chunks)
    with tarfile.open(fileobj=reader, mode="r|") as tar:
        for member in tar:
            if aside is not None and not _within(member.name, top):
                aside(tar, member)
                continue
            name = _checked_name(member.name, top)
            if name in made:  # a second entry would be written through what the first one made
                raise TarStreamError(f"archive member {member.name!r} comes twice")
            made.add(name)
            parent = name.rpartition("/")[0]
            if name != top and parent not in made_dirs:
                raise TarStreamError(f"archive member {member.name!r} comes before its folder, or under a non-folder")
            if member.type not in _KEPT_TYPES:
                raise TarStreamError(f"archive member {member.name!r} is a {_kind(member)}, which the home may not hold")
            if name == top and not member.isdir():
                raise TarStreamError(f"the archive's top {top!r} is not a folder")
            if member.islnk():
                target = _checked_name(member.linkname, top)
                if target not in made_files:
                    raise TarStreamError(f"hard link {member.name!r} points at {member.linkname!r}, not an extracted file")
                member.linkname = target
            member.name = name
            member.mode = stat.S_IMODE(member.mode)
            tar.extract(member, dest, set_attrs=True, numeric_owner=True, filter="fully_trusted")
            if member.isdir():
                made_dirs.add(name)
            elif member.isreg() or member.islnk():
                made_files.add(name)
    reader.drain()
    if top not in made_dirs:
        raise TarStreamError(f"the archive holds no folder {top!r}")
    return dest / top


def _checked_name(raw: str, top: str) -> str:
    name = _normal(raw)
    if not name or name.startswith("/") or any(part in ("", ".", "..") for part in name.split("/")) or not _within(name, top):
        raise TarStreamError(f"archive member {raw!r} is not inside {top!r}")
    return name


def _normal(raw: str) -> str:
    name = raw.rstrip("/")
    while name.startswith("./"):
        name = name[2:]
    return name


def _within(raw: str, top: str) -> bool:
    name = _normal(raw)
    return name == top or name.startswith(top + "/")


def _kind(member: tarfile.TarInfo) -> str:
    return {tarfile.CHRTYPE: "character device", tarfile.BLKTYPE: "block device"}.get(member.type, f"type {member.type!r}")


def read_capped_member(chunks: Iterable[bytes], cap_chars: int) -> tuple[str, bool] | None:
    """The one regular file of an engine archive, head and tail as :func:`.output.read_capped`.

    None when the archive's first member is not a regular file (the agent put a link, a FIFO
    or a folder where the output goes). Reads the stream once, holding at most a cap's worth.
    """
    reader = ChunkReader(chunks)
    try:
        with tarfile.open(fileobj=reader, mode="r|") as tar:
            member = tar.next()
            if member is None or not member.isreg():
                return None
            return read_capped_handle(tar.extractfile(member), member.size, cap_chars)
    finally:
        reader.drain()


def read_capped_handle(handle, size: int, cap_chars: int) -> tuple[str, bool]:
    """Head and tail of a stream of ``size`` bytes read once, as :func:`.output.read_capped`."""
    half = cap_chars // 2
    head = handle.read(max(cap_chars + 1, half * 4))
    if len(head) <= cap_chars:
        return clean_text(head), False
    tail = deque([head[-half * 4 :]])
    kept = len(tail[0])
    while block := handle.read(1 << 16):
        tail.append(block)
        kept += len(block)
        while kept - len(tail[0]) >= half * 4:
            kept -= len(tail.popleft())
    return join_head_tail(head[: half * 4], b"".join(tail)[-half * 4 :], size, cap_chars), True
