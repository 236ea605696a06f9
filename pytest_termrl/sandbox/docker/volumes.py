"""Read-only volumes that stand in for the verifier's trusted mounts on a remote Docker engine.

A remote engine cannot bind-mount this machine's folders, so each trusted mount (the hidden
tests, the runner, the harness's Python) is copied once into a labelled volume and mounted
read-only. Volumes are keyed by what they hold and reused for the life of the backend, so
the interpreter crosses once per process, not once per episode.

A Python prefix is narrowed to what running pytest needs: the interpreter, its shared
library, the standard library without its own test suite, and only pytest and the packages
it depends on from site-packages (the hidden tests import nothing else). Mounts whose top
folder is not a system folder (``/root/.pyenv/...``, ``/work/...``) share one volume at that
top folder, holding just their trees: the image's own ``/root`` is 0700, which the agent's
uid could not cross.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import stat
import sys
import tarfile
import io
from pathlib import Path, PurePosixPath
from typing import Callable

from ...errors import SandboxError
from ..base import TrustedMount
from ..hostfs import walk_tree
from ..tarstream import add_tree, parent_dirs_tar
from .layout import SYSTEM_TOP

PYTEST_ROOTS = ("pytest",)
"""Distributions the verifier runs; their dependency closure is what site-packages keeps."""

STDLIB_LEFT_OUT = {"test", "site-packages", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "distutils", "pydoc_data"}
"""Parts of the standard library no test run needs (``config-*``, the static library, too)."""

Keep = Callable[[str], bool]


def mount_groups(mounts: list[TrustedMount]) -> dict[str, list[tuple[str, TrustedMount]]]:
    """Mount point inside -> [(path under it, trusted mount)]; one volume per mount point."""
    groups: dict[str, list[tuple[str, TrustedMount]]] = {}
    for mount in sorted(mounts, key=lambda m: m.sandbox_path):
        if not mount.host_path.is_dir():
            raise SandboxError(
                f"a remote Docker engine can only receive folders as trusted mounts, not {mount.host_path} "
                "(run the harness with a Python installed outside /usr: pyenv, conda, a relocatable build)"
            )
        parts = PurePosixPath(mount.sandbox_path).parts
        if len(parts) >= 3 and parts[1] not in SYSTEM_TOP:
            groups.setdefault(f"/{parts[1]}", []).append(("/".join(parts[2:]), mount))
        else:
            groups.setdefault(mount.sandbox_path, []).append((".", mount))
    return groups


def python_prefix_filter(root: Path) -> Keep | None:
    """What of a Python prefix (or virtual environment) at root the verifier needs; None if not one."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    if not (root / "lib" / version).is_dir():
        return None
    lib = f"lib/{version}"
    site = f"{lib}/site-packages"
    wanted = pytest_site_names()

    def keep(rel: str) -> bool:
        if rel in ("pyvenv.cfg", "bin", "lib", "lib64", lib, site):
            return True
        if rel.startswith("bin/"):
            return PurePosixPath(rel).name.startswith("python")
        if rel.startswith("lib/libpython"):
            return True
        if rel.startswith(site + "/"):
            return rel[len(site) + 1 :].split("/", 1)[0] in wanted
        if rel.startswith(lib + "/"):
            top = rel[len(lib) + 1 :].split("/", 1)[0]
            return top not in STDLIB_LEFT_OUT and not top.startswith("config-")
        return False

    return keep


_SITE_NAMES: set[str] | None = None


def pytest_site_names() -> set[str]:
    """Top-level names in site-packages of pytest and every distribution it requires."""
    global _SITE_NAMES
    if _SITE_NAMES is not None:
        return _SITE_NAMES
    from packaging.requirements import Requirement

    names: set[str] = set()
    seen: set[str] = set()
    todo = list(PYTEST_ROOTS)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        for file in dist.files or ():
            top = file.parts[0]
            if top != "..":
                names.add(top)
        for line in dist.requires or ():
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    _SITE_NAMES = names
    return names


def fingerprint(root: Path, keep: Keep | None) -> str:
    """A digest of a tree's paths, types, modes, sizes, mtimes and link targets (no bytes read)."""
    digest = hashlib.sha256()
    for rel, path in walk_tree(root, keep):
        info = os.lstat(path)
        extra = os.readlink(path) if stat.S_ISLNK(info.st_mode) else ""
        mtime = info.st_mtime_ns if stat.S_ISREG(info.st_mode) else 0
        digest.update(f"{rel}\0{info.st_mode}\0{info.st_size if stat.S_ISREG(info.st_mode) else 0}\0{mtime}\0{extra}\n".encode(errors="surrogateescape"))
    return digest.hexdigest()


def group_tar(members: list[tuple[str, TrustedMount]], keeps: dict[Path, Keep | None]) -> bytes:
    """One volume's contents: each mount's tree at its path under the mount point."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        root = tarfile.TarInfo(".")
        root.type, root.mode, root.uid, root.gid = tarfile.DIRTYPE, 0o755, 0, 0
        tar.addfile(root)
        for info in parent_dirs_tar(path for path, _ in members if path != "."):
            tar.addfile(info)
        for path, mount in members:
            add_tree(tar, mount.host_path, path, keeps[mount.host_path])
    return buffer.getvalue()


class TrustedVolumes:
    """Per backend: trusted mounts -> read-only volume mounts, filled once and reused."""

    def __init__(self, create_volume: Callable[[str], str], fill: Callable[[str, bytes], None]) -> None:
        self._create_volume = create_volume
        self._fill = fill
        self._by_key: dict[str, str] = {}
        self._keeps: dict[Path, Keep | None] = {}
        self._prefix_prints: dict[Path, str] = {}

    def volumes_for(self, mounts: list[TrustedMount]) -> list[tuple[str, str]]:
        """(mount point inside, volume name) for each mount point the trusted mounts need."""
        result = []
        for at, members in mount_groups(mounts).items():
            prints = []
            for path, mount in members:
                keep = self._keep(mount.host_path)
                if keep is not None:  # a Python prefix: large, and fixed for the process's life
                    if mount.host_path not in self._prefix_prints:
                        self._prefix_prints[mount.host_path] = fingerprint(mount.host_path, keep)
                    prints.append((path, self._prefix_prints[mount.host_path]))
                else:
                    prints.append((path, fingerprint(mount.host_path, None)))
            key = hashlib.sha256(repr((at, prints)).encode()).hexdigest()[:20]
            if key not in self._by_key:
                volume = self._create_volume(key)
                self._fill(volume, group_tar(members, self._keeps))
                self._by_key[key] = volume
            result.append((at, self._by_key[key]))
        return result

    def _keep(self, root: Path) -> Keep | None:
        if root not in self._keeps:
            self._keeps[root] = python_prefix_filter(root)
        return self._keeps[root]

    def forget(self, volume: str) -> None:
        for key, name in list(self._by_key.items()):
            if name == volume:
                del self._by_key[key]
