"""The overlay upper directories read as the record of everything the agent changed.

The agent's filesystem is one overlay per mount point (a :class:`Slot`): read-only lower
directories and one writable upper directory. Every object the agent created or changed
is in an upper; every object it deleted is hidden there by a whiteout or an opaque
directory. Reading the uppers therefore costs what changed, never what the lowers hold.

The overlays are mounted inside a user namespace with ``userxattr``, so their markers are
``user.overlay.*`` xattrs (``trusted.overlay.*`` is read the same way; a record of overlays
mounted by root, a Docker engine's, reads ``trusted.overlay.*`` alone: :attr:`ChangeRecord.marks`); redirect_dir and
metacopy are off, and an upper object carrying either marker cannot be read exactly, so
it raises :class:`ChangeRecordError` rather than miss a change. Objects are described by
the manifest's own code (:class:`.manifest._Walker`: no symlink followed, no FIFO or
device opened, a file's bytes re-read only when its stat key moved), with owners shown
as the agent sees them (host ids shifted back by ``id_base``).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..tasks.placement import INSIDE_IDS
from .manifest import _DIR_FLAGS, Entry, Manifest, StatKey, _describe_error, _Walker

ID_RANGE = INSIDE_IDS
"""How many ids the user namespace maps: host ``id_base + n`` is inside ``n``."""
OVERFLOW_ID = 65534
"""What the kernel shows inside for a host id the namespace does not map."""

_PREFIXES = ("user.overlay.", "trusted.overlay.")
_FDS = "/proc/self/fd"
"""A file's xattrs are listed through its folder's descriptor here, so no symlink on the way is followed."""


class ChangeRecordError(Exception):
    """The uppers hold something whose meaning depends on overlay features this reader does not follow."""


def _normalize(path: str, what: str) -> str:
    if not path.startswith("/"):
        raise ValueError(f"{what} must be an absolute path inside the sandbox: {path!r}")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ValueError(f"{what} must not contain '..': {path!r}")
    return "/" + "/".join(parts)


def _join(parent: str, name: str) -> str:
    return "/" + name if parent == "/" else f"{parent}/{name}"


def _below(path: str, top: str) -> bool:
    """``path`` is ``top`` or inside it (component-wise)."""
    return path == top or top == "/" or path.startswith(top + "/")


@dataclass(frozen=True)
class Slot:
    """One overlay mount: the inside mount point, its upper directory and its lowers (topmost first)."""

    mount: str
    upper: Path
    lowers: tuple[Path, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "mount", _normalize(self.mount, "a slot's mount point"))
        object.__setattr__(self, "upper", Path(self.upper))
        object.__setattr__(self, "lowers", tuple(Path(p) for p in self.lowers))


@dataclass(frozen=True)
class RecordState:
    """What the uppers held at one read: the objects present, the paths deleted, the stat keys."""

    entries: dict[str, Entry]
    """Every object present in an upper, by absolute inside path (whiteouts are not objects)."""
    deleted: frozenset[str]
    """Every lower path the uppers hide: whiteouts and what is below them, lower objects under opaque folders."""
    keys: dict[str, StatKey]
    """Stat keys of entries last changed well before the read (see manifest.RACY_NS), for reuse."""


@dataclass(frozen=True)
class _Lower:
    """A path as the lowers alone show it, and which lowers merge into it when it is a folder."""

    entry: Entry | None
    layers: tuple[int, ...]


@dataclass(frozen=True)
class ChangeRecord:
    """The slots of one sandbox, read together as absolute inside paths."""

    slots: tuple[Slot, ...]
    id_base: int = 0
    ignore: tuple[str, ...] = ()
    """Absolute inside paths (each with everything below it) that are the harness's own mounts."""
    marks: tuple[str, ...] = _PREFIXES
    """The xattr prefixes the overlays obey: ``user.overlay.`` where mounted with userxattr (bwrap's), ``trusted.overlay.``
    where mounted by root (a Docker engine's overlay2); any other is a plain xattr that anyone may set inside."""
    _lower_cache: dict[str, _Lower] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        slots = tuple(self.slots)
        mounts = [s.mount for s in slots]
        if len(set(mounts)) != len(mounts):
            raise ValueError(f"two slots share a mount point: {sorted(mounts)}")
        object.__setattr__(self, "slots", slots)
        object.__setattr__(self, "ignore", tuple(_normalize(p, "an ignored path") for p in self.ignore))

    # --- paths -------------------------------------------------------------------------

    def _slot_of(self, path: str) -> Slot | None:
        """The slot that shows ``path``: the deepest mount point at or above it."""
        best: Slot | None = None
        for slot in self.slots:
            if _below(path, slot.mount) and (best is None or len(slot.mount) > len(best.mount)):
                best = slot
        return best

    def _ignored(self, path: str) -> bool:
        return any(_below(path, top) for top in self.ignore)

    def _hidden_in(self, slot: Slot) -> frozenset[str]:
        """Paths under ``slot`` it never shows: other slots' mount points and the harness's mounts."""
        return frozenset(p for p in (*(s.mount for s in self.slots), *self.ignore)
                         if p != slot.mount and _below(p, slot.mount))

    def _rel(self, slot: Slot, path: str) -> str:
        return path[len(slot.mount):].lstrip("/") if slot.mount != "/" else path[1:]

    # --- describing objects ------------------------------------------------------------

    def _inside(self, st: os.stat_result) -> os.stat_result:
        """``st`` with the owner the agent sees (host ids shifted back by id_base)."""
        if self.id_base == 0:
            return st
        uid, gid = st.st_uid - self.id_base, st.st_gid - self.id_base
        uid = uid if 0 <= uid < ID_RANGE else OVERFLOW_ID
        gid = gid if 0 <= gid < ID_RANGE else OVERFLOW_ID
        if (uid, gid) == (st.st_uid, st.st_gid):
            return st
        fields = list(st)
        fields[4], fields[5] = uid, gid
        extra = {name: getattr(st, name) for name in (
            "st_atime", "st_mtime", "st_ctime", "st_atime_ns", "st_mtime_ns", "st_ctime_ns",
            "st_blksize", "st_blocks", "st_rdev")}
        return os.stat_result(fields, extra)

    @staticmethod
    def _xattrs(target: int | str) -> list[str]:
        """The names of the xattrs on ``target`` (an open folder, or a path whose last part is not followed)."""
        try:
            if isinstance(target, int):
                return os.listxattr(target)
            return os.listxattr(target, follow_symlinks=False)
        except OSError as exc:
            if exc.errno in (errno.ENOTSUP, errno.ENOENT):
                return []
            raise

    def _marked(self, kind: str) -> tuple[str, ...]:
        return tuple(p + kind for p in self.marks)

    def _opaque(self, target: int | str, names: list[str]) -> bool:
        for name in self._marked("opaque"):
            if name in names:
                try:
                    value = (os.getxattr(target, name) if isinstance(target, int)
                             else os.getxattr(target, name, follow_symlinks=False))
                except OSError:
                    continue
                if value == b"y":
                    return True
        return False

    def _is_whiteout(self, st: os.stat_result, names: list[str] | None) -> bool:
        """A 0/0 character device, or (as the kernel reads it) an empty regular file marked whiteout."""
        if stat.S_ISCHR(st.st_mode):
            return st.st_rdev == 0
        return (names is not None and stat.S_ISREG(st.st_mode) and st.st_size == 0
                and any(n in names for n in self._marked("whiteout")))

    # --- the lowers --------------------------------------------------------------------

    def _lower_root(self, slot: Slot) -> _Lower:
        walker = _Walker(None)
        entry: Entry | None = None
        layers: list[int] = []
        for i, lower in enumerate(slot.lowers):
            host = os.fspath(lower)
            try:
                st = os.lstat(host)
            except FileNotFoundError:
                continue
            if not stat.S_ISDIR(st.st_mode):
                raise ChangeRecordError(f"{slot.mount}: lower {host} is not a folder")
            if entry is None:
                walker.record(slot.mount, host, self._inside(st), None)
                entry = walker.entries[slot.mount]
            layers.append(i)
            if self._opaque(host, self._xattrs(host)):
                break
        return _Lower(entry, tuple(layers))

    def _lower_child(self, slot: Slot, path: str, parent: _Lower) -> _Lower:
        """``path`` in the lowers merged into its parent folder, topmost first, as overlayfs looks it up."""
        rel = self._rel(slot, path)
        walker = _Walker(None)
        entry: Entry | None = None
        layers: list[int] = []
        for i in parent.layers:
            host = os.path.join(os.fspath(slot.lowers[i]), rel)
            try:
                st = os.lstat(host)  # every folder above it in this lower is a real folder
            except (FileNotFoundError, NotADirectoryError):
                continue
            names = self._xattrs(host) if (stat.S_ISREG(st.st_mode) and st.st_size == 0
                                           or stat.S_ISDIR(st.st_mode)) else None
            if self._is_whiteout(st, names):
                break
            if entry is None:
                walker.record(path, host, self._inside(st), None)
                entry = walker.entries[path]
            if not stat.S_ISDIR(st.st_mode):
                break  # a non-folder ends the lookup; below a folder it is neither merged nor seen
            layers.append(i)
            if self._opaque(host, names or []):
                break
        return _Lower(entry, tuple(layers))

    def _lower(self, path: str) -> _Lower:
        """The cached lower view of ``path``; computed top-down from the nearest cached folder above."""
        hit = self._lower_cache.get(path)
        if hit is not None:
            return hit
        slot = self._slot_of(path)
        if slot is None or self._ignored(path):
            result = _Lower(None, ())
            self._lower_cache[path] = result
            return result
        pending = [path]
        probe = path
        while probe != slot.mount:
            probe = probe[:probe.rfind("/")] or "/"
            if probe in self._lower_cache:
                break
            pending.append(probe)
        result = _Lower(None, ())
        for p in reversed(pending):
            if p == slot.mount:
                result = self._lower_root(slot)
            else:
                parent = self._lower_cache[p[:p.rfind("/")] or "/"]
                result = self._lower_child(slot, p, parent) if parent.layers else _Lower(None, ())
            self._lower_cache[p] = result
        return result

    def lower_entry(self, path: str) -> Entry | None:
        """``path`` as the lowers alone show it (None if absent there). Cached: lowers never change."""
        return self._lower(_normalize(path, "a path")).entry

    def _lower_below(self, path: str, hidden: frozenset[str]) -> Iterator[str]:
        """Every path below ``path`` in the lowers' merged view (``hidden`` paths and what is under them left out)."""
        top = self._lower(path)
        if not top.layers:
            return
        slot = self._slot_of(path)
        assert slot is not None
        stack = [(path, top)]
        while stack:
            folder, info = stack.pop()
            rel = self._rel(slot, folder)
            names: set[str] = set()
            for i in info.layers:
                host = os.path.join(os.fspath(slot.lowers[i]), rel)
                try:
                    with os.scandir(host) as it:
                        names.update(e.name for e in it)
                except OSError as exc:  # what it holds was deleted: not knowing it would miss a change
                    raise ChangeRecordError(f"{folder}: lower {host} cannot be listed: {_describe_error(exc)}") from exc
            for name in sorted(names):
                child = _join(folder, name)
                if child in hidden:
                    continue
                below = self._lower(child)
                if below.entry is None:
                    continue
                yield child
                if below.layers:
                    stack.append((child, below))

    # --- the uppers --------------------------------------------------------------------

    def read(self, previous: RecordState | None = None) -> RecordState:
        """What every upper holds now; files whose stat key did not move keep ``previous``'s digest."""
        if not os.path.isdir(_FDS):
            raise ChangeRecordError(f"{_FDS} is not there: a file's overlay xattrs cannot be read without following it")
        walker = _Walker(None if previous is None else Manifest(previous.entries, previous.keys))
        prev_keys = previous.keys if previous is not None else {}
        whiteouts: list[tuple[str, frozenset[str]]] = []
        covers: list[tuple[str, frozenset[str]]] = []
        for slot in self.slots:
            if self._ignored(slot.mount):
                continue
            hidden = self._hidden_in(slot)
            self._read_slot(slot, hidden, walker, prev_keys, whiteouts, covers)
        deleted: set[str] = set()
        for path, hidden in whiteouts:
            deleted.add(path)
            deleted.update(self._lower_below(path, hidden))
        for path, hidden in covers:
            deleted.update(p for p in self._lower_below(path, hidden) if p not in walker.entries)
        return RecordState(walker.entries, frozenset(deleted), walker.keys)

    def _read_slot(self, slot: Slot, hidden: frozenset[str], walker: _Walker, prev_keys: dict[str, StatKey],
                   whiteouts: list[tuple[str, frozenset[str]]], covers: list[tuple[str, frozenset[str]]]) -> None:
        """Describe one upper, noting whiteouts and what hides the lowers below it (opaque folders, non-folders)."""
        upper = os.fspath(slot.upper)
        st = os.lstat(upper)
        if not stat.S_ISDIR(st.st_mode):
            raise ChangeRecordError(f"{slot.mount}: upper {upper} is not a folder")
        walker.record(slot.mount, upper, self._inside(st), None)
        stack: list[tuple[str, str, os.stat_result]] = [(upper, slot.mount, st)]
        while stack:
            host, path, dst = stack.pop()
            try:
                dfd = os.open(host, _DIR_FLAGS)
            except OSError as exc:
                walker.fail(path, exc)
                continue
            try:
                fst = os.fstat(dfd)
                if (fst.st_ino, fst.st_dev) != (dst.st_ino, dst.st_dev):
                    walker.fail(path, "replaced while being read")
                    continue
                if path != slot.mount:
                    names = self._xattrs(dfd)
                    for name in self._marked("redirect"):
                        if name in names:
                            raise ChangeRecordError(f"{path}: the folder carries {name} (upper {host}): "
                                                    "a renamed folder cannot be followed with redirect_dir off")
                    if self._opaque(dfd, names):
                        covers.append((path, hidden))
                try:
                    with os.scandir(dfd) as it:
                        children = list(it)
                except OSError as exc:
                    walker.fail(path, exc)
                    continue
                for child in children:
                    name = child.name
                    cpath = _join(path, name)
                    if cpath in hidden:
                        continue
                    try:
                        cst = child.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue
                    except OSError as exc:
                        walker.entries[cpath] = Entry("unknown", 0, -1, -1, error=_describe_error(exc))
                        continue
                    if stat.S_ISREG(cst.st_mode):
                        key = (cst.st_ino, cst.st_size, cst.st_mtime_ns, cst.st_ctime_ns)
                        if prev_keys.get(cpath) != key:
                            # An xattr cannot change without a new ctime, so a kept key was checked already.
                            names = self._xattrs(f"{_FDS}/{dfd}/{name}")
                            for xname in self._marked("metacopy"):
                                if xname in names:
                                    raise ChangeRecordError(
                                        f"{cpath}: the file carries {xname} (upper {host}/{name}): "
                                        "its bytes are elsewhere, which metacopy off does not expect")
                            if self._is_whiteout(cst, names):
                                whiteouts.append((cpath, hidden))
                                continue
                    elif self._is_whiteout(cst, None):
                        whiteouts.append((cpath, hidden))
                        continue
                    walker.record(cpath, name, self._inside(cst), dfd)
                    if stat.S_ISDIR(cst.st_mode):
                        stack.append((os.path.join(host, name), cpath, cst))
                    else:
                        covers.append((cpath, hidden))  # a non-folder hides a lower folder's contents
            finally:
                os.close(dfd)

    def view(self, state: RecordState, path: str) -> Entry | None:
        """What the agent sees at ``path`` in ``state``: the upper's object, nothing if deleted, else the lowers'."""
        entry = state.entries.get(path)
        if entry is not None:
            return entry
        if path in state.deleted:
            return None
        return self._lower(path).entry
