"""What an image built so far shows at a path, read from its layers on the host without mounting them.

The rules are overlayfs's: the topmost layer holding an entry wins; a whiteout (a 0/0
character device) hides the entry below; an opaque folder (``user.overlay.opaque``) hides
the folders below it; a file hides a folder below. Links in the middle of a path are followed
inside the image (an absolute target starts again at the image's root), as the engine does
when it copies into an image. The bottom is the whole-machine sandbox's base layer and the
host's system folders, each seen only at its mount point.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

OPAQUE_XATTRS = ("user.overlay.opaque", "trusted.overlay.opaque")
_MAX_LINKS = 40


def is_whiteout(st: os.stat_result) -> bool:
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == 0


def is_opaque(path: Path) -> bool:
    for name in OPAQUE_XATTRS:
        try:
            if os.getxattr(path, name, follow_symlinks=False) == b"y":
                return True
        except OSError:
            continue
    return False


class MergedView:
    """An image as its layers make it: ``layers`` topmost first, then the base layer, then host folders by mount point."""

    def __init__(self, layers: list[Path], base: Path, host_folders: dict[str, Path]) -> None:
        self.layers = list(layers)
        self.base = base
        self.host_folders = dict(host_folders)

    def _roots(self, top: str) -> list[Path]:
        """Every folder standing for the image's root under ``/top``, topmost first (layers, base, the host's folder at its mount)."""
        roots = [*self.layers, self.base]
        mount = "/" + top
        if mount in self.host_folders:
            roots.append(self.host_folders[mount].parent)
        return roots

    def _lookup(self, parts: tuple[str, ...]) -> tuple[Path, os.stat_result] | None:
        """The entry shown at exactly ``/parts`` (no link followed), as (host path, its lstat), or None."""
        if not parts:
            return self.base, os.lstat(self.base)
        roots = self._roots(parts[0])
        for depth in range(1, len(parts) + 1):
            below: list[Path] = []
            for root in roots:
                path = root.joinpath(*parts[:depth])
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if is_whiteout(st):
                    break
                if depth == len(parts):
                    return path, st
                if not stat.S_ISDIR(st.st_mode):
                    break
                below.append(root)
                if is_opaque(path):
                    break
            if not below:
                return None
            roots = below
        return None

    def resolve(self, path: str, follow_last: bool = True) -> tuple[str, os.stat_result | None]:
        """(the path with its links followed inside the image, the entry's lstat or None when nothing is there)."""
        parts = [p for p in PurePosixPath("/" + path.lstrip("/")).parts[1:] if p not in ("", ".")]
        done: list[str] = []
        hops = 0
        while parts:
            part = parts.pop(0)
            if part == "..":
                if done:
                    done.pop()
                continue
            found = self._lookup((*done, part))
            if found is None:
                return "/" + "/".join([*done, part, *parts]), None
            host_path, st = found
            if stat.S_ISLNK(st.st_mode) and (parts or follow_last):
                hops += 1
                if hops > _MAX_LINKS:
                    return "/" + "/".join([*done, part, *parts]), None
                target = os.readlink(host_path)
                new = [p for p in PurePosixPath(target).parts if p not in ("", ".")]
                if target.startswith("/"):
                    done, new = [], new[1:]
                parts = new + parts
                continue
            done.append(part)
            if not parts:
                return "/" + "/".join(done), st
        return "/" + "/".join(done), os.lstat(self.base)

    def kind(self, path: str) -> str | None:
        """'dir', 'file' or None for what ``path`` is in the image, links followed."""
        _, st = self.resolve(path)
        if st is None:
            return None
        return "dir" if stat.S_ISDIR(st.st_mode) else "file"

    def read_text(self, path: str) -> str | None:
        resolved, st = self.resolve(path)
        if st is None or not stat.S_ISREG(st.st_mode):
            return None
        found = self._lookup(tuple(PurePosixPath(resolved).parts[1:]))
        if found is None:
            return None
        try:
            return found[0].read_text(errors="replace")
        except OSError:
            return None
