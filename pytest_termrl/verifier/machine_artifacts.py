"""Harbor's declared ``artifacts`` of a whole-machine task: read from the machine the agent left, and all a separate verifier gets of its change.

The artifacts are read through :meth:`.Sandbox.reach_home`'s root while the sandbox lives
(``/proc/PID/root`` on bwrap, the container's merged folder on docker), walked from the
machine's ``/`` one component at a time without following a link (:class:`.Anchored`): the
one way that serves both engines (docker's snapshot is a committed image, not host layers),
and the kernel's own merge shows whiteouts, opaque folders and the image below exactly as the
agent saw them, where :class:`.MergedView` reads single entries and lists no merged folder.

A separate verifier (``[verifier] environment_mode = "separate"``) grades the image with the
artifacts alone over it: the snapshot's copied upper layers (the first layer of each slot of
its :class:`.LayeredRoot`) are pruned to the artifacts and the folders that lead to them, whose
opaque marks are dropped so the image's other files show through again. On docker the sandbox
makes that machine itself (an image committed before the setup script, the artifacts put in).
"""

from __future__ import annotations

import base64
import errno
import os
import stat
from pathlib import Path, PurePosixPath

from ..errors import SandboxError
from ..sandbox.base import LayeredRoot, Sandbox
from ..sandbox.build.view import OPAQUE_XATTRS
from ..sandbox.reach import Anchored
from ..tasks.model import Task
from .declared_artifacts import PREFIX, prune_to
from .inside.script_runner import ARTIFACT_BYTES, collect_artifacts, read_capped


def _parts(source: str) -> tuple[str, ...]:
    return tuple(p for p in source.split("/") if p not in ("", "."))


def _read_one(root: str, source: str, kept: dict[str, str], left_out: list[str]) -> None:
    """Read ``source`` of the machine below ``root`` into ``kept`` (a file, or a folder's files), or say why not."""
    parts, key = _parts(source), f"{PREFIX}{source}"
    if not parts or ".." in parts:
        left_out.append(f"{source}: not a path of one file or folder of the machine")
        return
    try:
        fd = Anchored(root, parts[:-1]).open()
    except OSError as exc:
        why = "a link on the way, not followed" if exc.errno in (errno.ELOOP, errno.ENOTDIR) else "not there when the agent ended"
        left_out.append(f"{source}: {why}")
        return
    try:
        try:
            info = os.lstat(parts[-1], dir_fd=fd)
        except OSError:
            left_out.append(f"{source}: not there when the agent ended")
            return
        if stat.S_ISLNK(info.st_mode):
            left_out.append(f"{source}: a link, not followed")
        elif stat.S_ISDIR(info.st_mode):
            sub = os.open(parts[-1], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            try:
                files, skipped = collect_artifacts(f"/proc/self/fd/{sub}")
            finally:
                os.close(sub)
            kept.update({f"{key}/{name}": data for name, data in files.items()})
            left_out += [f"{source}/{line}" for line in skipped]
        else:
            data, problem = read_capped(f"/proc/self/fd/{fd}/{parts[-1]}", ARTIFACT_BYTES)
            if data is None:
                left_out.append(f"{source}: {problem}")
            else:
                kept[key] = base64.b64encode(data).decode("ascii")
    finally:
        os.close(fd)


def collect(sandbox: Sandbox, task: Task) -> tuple[dict[str, str], list[str]]:
    """({'declared/<abs path>': base64}, [left out and why]) of the task's declared artifacts on the machine the agent left."""
    kept: dict[str, str] = {}
    left_out: list[str] = []
    with sandbox.reach_home() as reached:
        if not isinstance(reached.path, Anchored):
            raise SandboxError(f"the {sandbox.backend_name} sandbox does not reach a machine's root: its declared artifacts cannot be read")
        for source in task.artifacts:
            _read_one(reached.path.root, source, kept, left_out)
    return kept, left_out[:50]


def _slot_paths(root: LayeredRoot, task: Task) -> dict[str, set[str]]:
    """Per mount point, the artifacts relative to it (each under the most specific mount that holds it)."""
    mounts = [mount for mount, _ in root.slots]
    kept: dict[str, set[str]] = {mount: set() for mount in mounts}
    for source in task.artifacts:
        path = "/" + "/".join(_parts(source))
        holders = [m for m in mounts if m == "/" or path == m or path.startswith(m.rstrip("/") + "/")]
        if holders:
            mount = max(holders, key=len)
            kept[mount].add(PurePosixPath(path).relative_to(mount).as_posix())
    return kept


def _drop_opaque(path: Path) -> None:
    for name in OPAQUE_XATTRS:
        try:
            os.removexattr(path, name, follow_symlinks=False)
        except OSError:
            continue


def keep_only_artifacts(root: LayeredRoot, task: Task) -> list[str]:
    """Prune the snapshot's agent layers to the declared artifacts (a separate verifier's machine): the paths removed.
    A snapshot that already holds the artifacts alone (docker's, :mod:`..sandbox.docker.machine_apart`) is left as it is."""
    if root.artifacts_only:
        return []
    if not root.slots:
        raise SandboxError("a separate verifier of a whole-machine task needs its snapshot as layers, or the machine "
                           "its sandbox prepared for one; this snapshot is the agent's whole machine as a committed image")
    paths = _slot_paths(root, task)
    removed: list[str] = []
    for mount, layers in root.slots:
        if layers and layers[0].is_dir():
            removed += [f"{mount.rstrip('/')}/{rel}" for rel in prune_to(layers[0], paths[mount], _drop_opaque)]
    return removed
