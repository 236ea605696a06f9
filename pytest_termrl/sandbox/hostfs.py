"""Host-side helpers every local backend shares: copying homes, owning them, live owners."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable, Iterator

from ..errors import SandboxError


def copy_tree(src: Path, dest: Path) -> None:
    """cp -a: keeps modes, owners and links, copies FIFOs as FIFOs instead of reading them.

    A harness that is not root copies as root of a user namespace of its own id alone, so what a fault or the agent
    made unreadable (mode 000, its own) copies as it would for a root harness; what it copies becomes its own.
    """
    if os.geteuid() == 0:
        command = ["cp", "-a"]
    else:  # its owners are its own (others' cannot be given), as a plain cp of a user's makes them
        command = ["unshare", "--map-root-user", "--", "cp", "-a", "--no-preserve=ownership"]
    result = subprocess.run([*command, "--", f"{src}/.", str(dest)], capture_output=True, text=True)
    if result.returncode != 0:
        raise SandboxError(f"copying {src} to {dest} failed: {result.stderr.strip()}")


def snapshot_home(home: Path, dest: Path, owner: tuple[int, int] | None) -> Path:
    """Copy a home to ``dest/home`` (links kept, FIFOs not opened), its top owned by ``owner``.

    ``dest`` is 0711: the verifier's user may pass through it to the home, and list nothing.
    """
    dest.mkdir(parents=True, exist_ok=True)
    os.chmod(dest, 0o711)
    target = dest / "home"
    target.mkdir()
    copy_tree(home, target)
    shutil.copystat(home, target)
    if owner is not None:
        os.chown(target, *owner)
    return target


def chown_tree(root: Path, uid: int, gid: int) -> None:
    os.lchown(root, uid, gid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, gid)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def walk_tree(root: Path | str, keep: Callable[[str], bool] | None = None) -> Iterator[tuple[str, str]]:
    """(relative path, host path) of everything under root, sorted, folders before their contents.

    Never follows a link. ``keep(relative path)`` may leave paths out; a folder left out
    takes its contents along.
    """
    root = os.fspath(root)
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        kept = set()
        for name in sorted(dirnames + filenames):
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if keep is not None and not keep(rel):
                continue
            kept.add(name)
            yield rel, os.path.join(dirpath, name)
        dirnames[:] = sorted(d for d in dirnames if d in kept)
