"""Writing into a layer folder that stands for the image's ``/``, never through a symlink, for COPY and ADD alike.

Every write checks each folder on its way with lstat; a symlink the layer already holds is
followed only as an image path, inside the layer (``..`` stops at ``/``). Owners are image ids,
shifted by ``host_id`` (the layer sits in a user namespace). An overlay whiteout (a 0/0
character device) counts as nothing there. What the image below already has is asked of
``existing`` (an image path to "dir", another kind, or None).
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import IO, Callable

from pytest_termrl.errors import TaskFormatError

from .ownership import ROOT, Owner
from .paths import MAX_LINKS, go_clean

__all__ = ["Layer", "dest_path", "is_whiteout"]


def dest_path(dest: str, workdir: str) -> tuple[str, bool]:
    """The absolute image path of a destination and whether it means "into" (ends in ``/``,
    or is ``.`` or empty)."""
    into = dest in ("", ".") or dest.endswith("/")
    base = workdir if workdir.startswith("/") else "/" + workdir
    joined = dest if dest.startswith("/") else f"{base}/{dest}"
    return go_clean("/" + joined), into


def is_whiteout(st: os.stat_result) -> bool:
    """Whether a layer entry is an overlay whiteout: it hides the lower image's path."""
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == 0


def _set_times(host: str, atime_ns: int, mtime_ns: int) -> None:
    os.utime(host, ns=(atime_ns, mtime_ns), follow_symlinks=False)


class Layer:
    """The layer folder of one COPY or ADD: where it writes, what it wrote, in order."""

    def __init__(self, layer: Path, where: str, field: str, host_id: Callable[[int], int],
                 existing: Callable[[str], str | None] | None) -> None:
        self.root = os.path.realpath(os.fspath(layer))
        if not os.path.isdir(self.root):
            raise TaskFormatError(where, field, f"the layer folder {layer} does not exist")
        self.where = where
        self.field = field
        self.host_id = host_id
        self.existing = existing
        self.written: list[str] = []
        self._seen: set[str] = set()
        self._dir_times: list[tuple[str, int, int]] = []

    def fail(self, expected: str) -> TaskFormatError:
        return TaskFormatError(self.where, self.field, expected)

    def host(self, ipath: str) -> str:
        return self.root if ipath == "/" else os.path.join(self.root, ipath.lstrip("/"))

    def note(self, ipath: str) -> None:
        if ipath not in self._seen:
            self._seen.add(ipath)
            self.written.append(ipath)

    def lstat(self, ipath: str) -> os.stat_result | None:
        try:
            return os.lstat(self.host(ipath))
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            raise self.fail(f"{ipath}: a path element on the way is not a folder") from None

    def lower(self, ipath: str) -> str | None:
        """What the image below has at ``ipath``: "dir", "file" or None."""
        if self.existing is None:
            return None
        kind = self.existing(ipath)
        return None if kind is None else ("dir" if kind == "dir" else "file")

    def kind(self, ipath: str) -> str | None:
        """"dir", "file" or None for what the image will have at ``ipath`` (this layer over the lower)."""
        st = self.lstat(ipath)
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                return "dir"
            if is_whiteout(st):
                return None
            return "file"
        return self.lower(ipath)

    def resolve(self, ipath: str, follow_leaf: bool = True) -> str:
        """``ipath`` with the symlinks this layer holds followed as image paths (``..`` stops at
        ``/``), so the result names a place inside the layer."""
        todo = [p for p in ipath.split("/") if p not in ("", ".")]
        cur: list[str] = []
        hops = 0
        while todo:
            part = todo.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if cur:
                    cur.pop()
                continue
            if not todo and not follow_leaf:
                cur.append(part)
                break
            candidate = "/" + "/".join(cur + [part])
            st = self.lstat(candidate)
            if st is not None and stat.S_ISLNK(st.st_mode):
                hops += 1
                if hops > MAX_LINKS:
                    raise self.fail(f"{ipath}: too many levels of symbolic links in the layer")
                target = os.readlink(self.host(candidate))
                if target.startswith("/"):
                    cur = []
                todo = [p for p in target.split("/") if p not in ("", ".")] + todo
                continue
            cur.append(part)
        return "/" + "/".join(cur)

    def ensure_dir(self, ipath: str, owner: Owner) -> None:
        """Make ``ipath`` and the folders above it a real folder in the layer. A folder the image
        lacks is made 0755 and owned by ``owner`` (and reported as written); one only the lower
        image has is made 0755 root to hold what goes inside, and not reported."""
        parts = [p for p in ipath.split("/") if p]
        for i in range(len(parts)):
            prefix = "/" + "/".join(parts[: i + 1])
            st = self.lstat(prefix)
            if st is not None:
                if stat.S_ISDIR(st.st_mode):
                    continue
                if stat.S_ISLNK(st.st_mode):
                    raise self.fail(f"{prefix} is a symbolic link in the layer; nothing is written through it")
                if not is_whiteout(st):
                    raise self.fail(f"{prefix} is not a folder, so {ipath} cannot be made")
                os.unlink(self.host(prefix))
                below = None
            else:
                below = self.lower(prefix)
                if below == "file":
                    raise self.fail(f"{prefix} is a file in the image, so {ipath} cannot be made")
            host = self.host(prefix)
            os.mkdir(host, 0o755)
            if below == "dir":
                self._chown(host, ROOT)
            else:
                self._chown(host, owner)
                self.note(prefix)
            os.chmod(host, 0o755)

    def clear(self, ipath: str) -> None:
        """Remove whatever the layer holds at ``ipath`` (a folder with its contents)."""
        st = self.lstat(ipath)
        if st is None:
            return
        host = self.host(ipath)
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(host)
        else:
            os.unlink(host)

    # -- writing entries: put_*, link or own, then stamp (a folder's times wait for done) ------

    def put_dir(self, ipath: str, owner: Owner, mode: int, atime_ns: int, mtime_ns: int) -> None:
        """Make ``ipath`` a folder (replacing what else the layer holds there) with this owner and
        mode; its times are set by ``done``, once its contents are in."""
        current = self.lstat(ipath)
        if current is not None and not stat.S_ISDIR(current.st_mode):
            self.clear(ipath)
            current = None
        if current is None:
            os.mkdir(self.host(ipath), 0o700)
        self.own(ipath, owner, mode)
        self._dir_times.append((ipath, atime_ns, mtime_ns))
        self.note(ipath)

    def put_file(self, ipath: str, data: IO[bytes], owner: Owner, mode: int) -> None:
        """Write ``data`` as a new file at the cleared ``ipath``."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with open(os.open(self.host(ipath), flags, 0o600), "wb") as out:
            shutil.copyfileobj(data, out, 1 << 20)
            os.fchown(out.fileno(), self.host_id(owner.uid), self.host_id(owner.gid))
            os.fchmod(out.fileno(), mode)

    def put_symlink(self, ipath: str, target: str, owner: Owner) -> None:
        """Make the cleared ``ipath`` a symlink to ``target``, owned by ``owner``."""
        host = self.host(ipath)
        os.symlink(target, host)
        self._chown(host, owner, follow=False)

    def link(self, source: str, ipath: str) -> None:
        """Make the cleared ``ipath`` a hard link to the layer's ``source``."""
        os.link(self.host(source), self.host(ipath), follow_symlinks=False)

    def own(self, ipath: str, owner: Owner, mode: int) -> None:
        """Give ``ipath`` (followed, as chown and chmod do) this owner and mode."""
        host = self.host(ipath)
        self._chown(host, owner)
        os.chmod(host, mode)

    def stamp(self, ipath: str, atime_ns: int, mtime_ns: int) -> None:
        """Set a finished entry's times and report it as written."""
        _set_times(self.host(ipath), atime_ns, mtime_ns)
        self.note(ipath)

    def done(self) -> list[str]:
        """Set the folders' times, now that their contents are in (the last made first), and return
        the image paths written, in order."""
        for ipath, atime_ns, mtime_ns in reversed(self._dir_times):
            _set_times(self.host(ipath), atime_ns, mtime_ns)
        return self.written

    def _chown(self, host: str, owner: Owner, follow: bool = True) -> None:
        os.chown(host, self.host_id(owner.uid), self.host_id(owner.gid), follow_symlinks=follow)
