"""The home's manifest kept current from kernel events, so a command costs what it changed.

Every folder of the home is watched with inotify from outside the sandbox; after a
command the queued events name the paths to look at again, and only those are
re-described (with the very code of a full walk, :class:`.manifest._Walker`). Where
events cannot say what changed, more is looked at, never less:

- a folder created, moved in, deleted or replaced is walked whole (watched first, then
  listed, so nothing made inside it meanwhile is missed);
- a file with several names is looked at under all of them (a write through one name
  is reported under that name only);
- a file mapped shared and writable by one of the agent's processes is re-read after
  every command while it is mapped and once after (stores through a mapping raise no
  event; :mod:`.mapped`);
- an overflowed event queue, an event from a folder not known, or a watch that cannot
  be placed means a walk of the whole home (the first two once, the last for good).

A looked-at file is always re-read (never trusted by its stat key), so the result equals
``take_manifest(home, full=True)`` at the same moment, which the differential test checks
after every command of random command sequences.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from .inotify import IN_IGNORED, IN_ISDIR, IN_Q_OVERFLOW, IN_UNMOUNT, STRUCTURE, Inotify, WatchError
from .manifest import _DIR_FLAGS, ROOT, Entry, Manifest, StatKey, _describe_error, _Walker
from .mapped import writable_shared_inodes


def _join(parent: str, name: str) -> str:
    return name if parent == ROOT else f"{parent}/{name}"


def _parent_and_name(rel: str) -> tuple[str, str]:
    cut = rel.rfind("/")
    return (ROOT, rel) if cut < 0 else (rel[:cut], rel[cut + 1:])


def _depth(rel: str) -> int:
    return -1 if rel == ROOT else rel.count("/")


class LiveManifest:
    """The current manifest of ``root``, brought up to date by :meth:`refresh` after each command."""

    def __init__(self, root: Path | str, processes: Callable[[], Iterable[int]] | None = None) -> None:
        self.root = os.fspath(root)
        self.processes = processes or (lambda: ())
        self.entries: dict[str, Entry] = {}
        self.keys: dict[str, StatKey] = {}
        self.fast = True
        """False once a watch could not be placed: every refresh is a walk of the whole home."""
        self.walks = 0
        """Walks of the whole home (the first one, the baseline, included)."""
        self.looked_at = 0
        """Paths re-described by refreshes, in all."""
        self._children: dict[str, set[str]] = {}
        self._dir_ino: dict[str, int] = {}
        self._wd_dir: dict[int, str] = {}
        self._dir_wd: dict[str, int] = {}
        """Folders watched and listed: their children are known."""
        self._file_ino: dict[str, int] = {}
        self._ino_files: dict[int, set[str]] = {}
        self._nlink: dict[str, int] = {}
        self._unseen_names: set[str] = set()
        """Files with more links than names in the home: looked at after every command."""
        self._mapped: set[int] = set()
        self._changed: set[str] = set()
        try:
            self._inotify: Inotify | None = Inotify()
        except WatchError:
            self._inotify = None
            self.fast = False

    # -- the whole home ---------------------------------------------------------------
    def start(self) -> Manifest:
        """Watch every folder and describe every path; the result is the baseline."""
        self._walk_all(previous=None)
        return self.manifest()

    def manifest(self) -> Manifest:
        """The current state as a Manifest (a copy: later refreshes do not change it)."""
        return Manifest(dict(self.entries), dict(self.keys), self.root)

    def _reset(self) -> None:
        for table in (self._children, self._dir_ino, self._wd_dir, self._dir_wd, self._file_ino,
                      self._ino_files, self._nlink):
            table.clear()
        self._unseen_names.clear()

    def _walk_all(self, previous: Manifest | None) -> set[str]:
        """Describe the whole home again (re-watching every folder when fast); the paths that changed."""
        old = self.entries
        self.walks += 1
        walker = _Walker(previous)
        walker.stats = {}
        watched: dict[str, int] = {}
        if self.fast:
            walker.on_dir = lambda rel, fd: watched.__setitem__(rel, self._watch(fd))
        try:
            walker.walk(self.root)
        except WatchError:
            self._give_up_watching()
            return self._walk_all(previous)
        self._reset()
        self.entries, self.keys = {}, {}
        for rel, entry in walker.entries.items():
            self._set(rel, entry, walker.keys.get(rel), walker.stats.get(rel))
        for rel, wd in watched.items():
            self._wd_dir[wd] = rel
            if self.entries.get(rel) is not None and self.entries[rel].error is None:
                self._dir_wd[rel] = wd
        self._update_unseen(self._file_ino)
        changed = {p for p in old.keys() | self.entries.keys()
                   if old.get(p) is not self.entries.get(p) and old.get(p) != self.entries.get(p)}
        return changed

    def _watch(self, fd: int) -> int:
        assert self._inotify is not None
        return self._inotify.watch_fd(fd)

    def _give_up_watching(self) -> None:
        self.fast = False
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None

    # -- after a command --------------------------------------------------------------
    def refresh(self) -> set[str]:
        """Bring the state up to date; the paths whose Entry appeared, went or changed."""
        if not self.fast or self._inotify is None:
            mapped = writable_shared_inodes(self.processes())
            forced = {rel for ino in self._mapped | mapped for rel in self._ino_files.get(ino, ())}
            self._mapped = mapped
            return self._walk_all(self._without(forced))
        events = self._inotify.read()
        dirty: dict[str, bool] = {}
        whole = False
        for event in events:
            mask = event.mask
            if mask & (IN_Q_OVERFLOW | IN_UNMOUNT):
                whole = True
                continue
            base = self._wd_dir.get(event.wd)
            if base is None:
                whole = whole or not mask & IN_IGNORED
                continue
            if mask & IN_IGNORED:
                del self._wd_dir[event.wd]
                if self._dir_wd.get(base) == event.wd:
                    del self._dir_wd[base]
                dirty.setdefault(base, True)
                continue
            rel = _join(base, event.name) if event.name else base
            if mask & IN_ISDIR and mask & STRUCTURE:
                dirty[rel] = True
            else:
                dirty.setdefault(rel, False)
        mapped = writable_shared_inodes(self.processes())
        for ino in self._mapped | mapped:
            for rel in self._ino_files.get(ino, ()):
                dirty.setdefault(rel, False)
        self._mapped = mapped
        for rel in self._unseen_names:
            dirty.setdefault(rel, False)
        if whole:
            return self._walk_all(self._without(set(dirty)))
        try:
            return self._look_at(dirty)
        except WatchError:
            self._give_up_watching()
            return self._walk_all(self._without(set(dirty))) | set(dirty) | self._changed

    def _without(self, forced: set[str]) -> Manifest:
        """The current state as a walk's ``previous``, less the paths that must be re-read."""
        if not forced:
            return Manifest(self.entries, self.keys, self.root)
        return Manifest({p: e for p, e in self.entries.items() if p not in forced},
                        {p: k for p, k in self.keys.items() if p not in forced}, self.root)

    def _look_at(self, dirty: dict[str, bool]) -> set[str]:
        self._changed = set()
        walked: set[str] = set()
        done: set[str] = set()
        touched_inodes: set[int] = set()
        fds: dict[str, int | None] = {}
        queue = sorted(dirty.items(), key=lambda item: (_depth(item[0]), item[0]))
        try:
            while queue:
                later: list[tuple[str, bool]] = []
                for rel, structural in queue:
                    if rel in done or self._under(rel, walked):
                        continue
                    done.add(rel)
                    self.looked_at += 1
                    before = self._file_ino.get(rel)
                    self._look(rel, structural, fds, walked)
                    after = self._file_ino.get(rel)
                    for ino in {before, after} - {None}:
                        touched_inodes.add(ino)  # type: ignore[arg-type]
                        for other in self._ino_files.get(ino, ()):  # type: ignore[arg-type]
                            if other not in done:
                                later.append((other, False))
                queue = later
        finally:
            for fd in fds.values():
                if fd is not None:
                    os.close(fd)
        self._update_unseen({p: i for i in touched_inodes for p in self._ino_files.get(i, ())})
        return self._changed

    @staticmethod
    def _under(rel: str, walked: set[str]) -> bool:
        if not walked:
            return False
        probe = rel
        while True:
            cut = probe.rfind("/")
            if cut < 0:
                return ROOT in walked and rel != ROOT
            probe = probe[:cut]
            if probe in walked:
                return True

    def _dir_fd(self, rel: str, fds: dict[str, int | None]) -> int | None:
        """An open descriptor of folder ``rel`` reached without following any link; None if there is none."""
        if rel in fds:
            return fds[rel]
        if rel == ROOT:
            fd: int | None = os.open(self.root, _DIR_FLAGS)
        else:
            parent, name = _parent_and_name(rel)
            pfd = self._dir_fd(parent, fds)
            fd = None
            if pfd is not None:
                try:
                    fd = os.open(name, _DIR_FLAGS, dir_fd=pfd)
                except OSError:
                    fd = None
        fds[rel] = fd
        return fd

    def _look(self, rel: str, structural: bool, fds: dict[str, int | None], walked: set[str]) -> None:
        """Describe ``rel`` as a full walk would now, walking it whole when it is a folder not known."""
        walker = _Walker(None)
        walker.stats = {}
        if rel == ROOT:
            st: os.stat_result | None = os.lstat(self.root)
            name, pfd = self.root, None
        else:
            parent, name = _parent_and_name(rel)
            pfd = self._dir_fd(parent, fds) if parent in self._dir_wd else None
            st = None
            if pfd is not None:
                try:
                    st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
                except (FileNotFoundError, NotADirectoryError):
                    st = None
                except OSError as exc:
                    self._drop(rel)
                    self._set(rel, Entry("unknown", 0, -1, -1, error=_describe_error(exc)), None, None)
                    return
        old = self.entries.get(rel)
        if st is None:
            self._drop(rel)
            return
        is_dir = stat.S_ISDIR(st.st_mode)
        known_dir = old is not None and old.kind == "dir" and rel in self._dir_wd
        fresh_dir = is_dir and (structural or not known_dir or self._dir_ino.get(rel) != st.st_ino)
        if old is not None and old.kind == "dir" and (not is_dir or fresh_dir):
            self._drop_below(rel)
        walker.record(rel, name, st, pfd)
        if not (is_dir and fresh_dir):
            self._set(rel, walker.entries[rel], walker.keys.get(rel), st)
            return
        # A folder whose contents are not known: watch it, then list it, all the way down.
        watched: dict[str, int] = {}
        walker.on_dir = lambda r, fd: watched.__setitem__(r, self._watch(fd))
        walker.walk_below(os.path.join(self.root, rel) if rel != ROOT else self.root, rel, st)
        for path, entry in walker.entries.items():
            self._set(path, entry, walker.keys.get(path), walker.stats.get(path))
        for path, wd in watched.items():
            self._wd_dir[wd] = path
            if self.entries.get(path) is not None and self.entries[path].error is None:
                self._dir_wd[path] = wd
        walked.add(rel)

    # -- the state's tables -------------------------------------------------------------
    def _set(self, rel: str, entry: Entry, key: StatKey | None, st: os.stat_result | None) -> None:
        old = self.entries.get(rel)
        if old is None or (old is not entry and old != entry):
            self._changed.add(rel)
        self.entries[rel] = entry
        if key is not None:
            self.keys[rel] = key
        else:
            self.keys.pop(rel, None)
        if rel != ROOT:
            self._children.setdefault(_parent_and_name(rel)[0], set()).add(rel)
        self._unindex_file(rel)
        if st is not None and stat.S_ISREG(st.st_mode):
            self._file_ino[rel] = st.st_ino
            self._ino_files.setdefault(st.st_ino, set()).add(rel)
            if st.st_nlink > 1:
                self._nlink[rel] = st.st_nlink
        if st is not None and stat.S_ISDIR(st.st_mode):
            self._dir_ino[rel] = st.st_ino
        else:
            self._dir_ino.pop(rel, None)

    def _unindex_file(self, rel: str) -> None:
        ino = self._file_ino.pop(rel, None)
        self._nlink.pop(rel, None)
        self._unseen_names.discard(rel)
        if ino is not None:
            names = self._ino_files.get(ino)
            if names is not None:
                names.discard(rel)
                if not names:
                    del self._ino_files[ino]

    def _drop(self, rel: str) -> None:
        """``rel`` is gone, and everything under it."""
        if rel not in self.entries:
            return
        self._drop_below(rel)
        del self.entries[rel]
        self.keys.pop(rel, None)
        self._changed.add(rel)
        self._unindex_file(rel)
        self._dir_ino.pop(rel, None)
        if rel != ROOT:
            siblings = self._children.get(_parent_and_name(rel)[0])
            if siblings is not None:
                siblings.discard(rel)

    def _drop_below(self, rel: str) -> None:
        stack = [rel]
        while stack:
            folder = stack.pop()
            wd = self._dir_wd.pop(folder, None)
            if wd is not None and self._wd_dir.get(wd) == folder:
                # Keep the watch itself: the folder may live on elsewhere in the home
                # (moved), where the walk that finds it maps the same descriptor again.
                del self._wd_dir[wd]
            for child in self._children.pop(folder, ()):
                if child in self.entries:
                    del self.entries[child]
                    self._changed.add(child)
                self.keys.pop(child, None)
                self._unindex_file(child)
                self._dir_ino.pop(child, None)
                stack.append(child)

    def _update_unseen(self, files: dict[str, int]) -> None:
        for rel, ino in files.items():
            if self._nlink.get(rel, 1) > len(self._ino_files.get(ino, ())):
                self._unseen_names.add(rel)
            else:
                self._unseen_names.discard(rel)

