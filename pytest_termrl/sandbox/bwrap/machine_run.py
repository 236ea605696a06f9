"""The verifier's one-shot run on a whole-machine snapshot: the agent's uppers as read-only layers, an empty upper of its own.

Nothing is copied but what the agent changed (the snapshot of its uppers); whatever the
grader writes lands in this run's own upper, removed with it, so it never reaches the
agent's record. The trusted toolchain and the runners are bound read-only over whatever
the agent's layer put at their paths, and ``/etc/ld.so.preload`` is masked.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from ..base import IsolatedRequest, IsolatedRun
from ..layout import AGENT_ENV
from ..limits import ResourceLimits
from ..hostfs import copy_tree
from ..storage import unmount
from .idmap import IdRange, idmapped_mount
from .overlay import ROOT_PATH, Account, LayerSlot, enter_as, launch_layered, make_slot_folders
from .spares import collect



def _mount_point(uppers: dict[str, tuple[Path, Path]], lowers: dict[str, tuple[Path, ...]], inside: str, is_dir: bool,
                 owner: int) -> None:
    """The grader's mount point made in this run's own upper, over whatever the image has there (a link whose target
    is gone, a file): bubblewrap then mounts on it instead of following the image's link. The folders on the way keep
    the mode and owner the layers below show (a trusted mount under /tmp must not make /tmp 0755 for the grader)."""
    mount = max((m for m in uppers if inside == m or inside.startswith(m.rstrip("/") + "/")), key=len)
    upper = uppers[mount][0]
    rel = inside[len(mount.rstrip("/")):].strip("/")
    if not rel:
        return
    parent = upper
    for part in rel.split("/")[:-1]:
        parent = parent / part
        if not parent.is_dir():
            shown = _shown_folder(lowers.get(mount, ()), parent.relative_to(upper))
            parent.mkdir()
            os.chmod(parent, stat.S_IMODE(shown.st_mode) if shown else 0o755)
            os.chown(parent, shown.st_uid if shown else owner, shown.st_gid if shown else owner)
    point = upper / rel
    if is_dir:
        point.mkdir(mode=0o755)
    else:
        point.touch(mode=0o644)
    os.chown(point, owner, owner)


def _shown_folder(lowers: tuple[Path, ...], rel: Path) -> os.stat_result | None:
    """The folder at ``rel`` in the topmost layer that has one (never through a link), or None."""
    for lower in lowers:
        try:
            st = os.lstat(lower / rel)
        except OSError:
            continue
        return st if stat.S_ISDIR(st.st_mode) else None
    return None


def run_layered(bwrap: str, folder: Path, request: IsolatedRequest) -> IsolatedRun:
    """Run ``request`` (whose ``root`` is set) in a fresh sandbox at ``folder``; the folder is removed after."""
    root = request.root
    assert root is not None
    ids = IdRange(root.id_base)
    limits = ResourceLimits(request.settings, folder.name)
    bound: list[Path] = []
    try:
        limits.setup()
        uppers = make_slot_folders(folder, [mount for mount, _ in root.slots], ids.base)
        layers = dict(root.slots)
        for mount in request.mounts:
            _mount_point(uppers, layers, mount.sandbox_path, mount.host_path.is_dir(), ids.base)
        slots = [LayerSlot(mount, lowers, *uppers[mount]) for mount, lowers in root.slots]
        account = Account(root.uid, root.gid, root.user, root.home)
        secret_r, secret_w = os.pipe()
        result_r, result_w = os.pipe()
        env = {**AGENT_ENV, "HOME": root.home, "USER": root.user, "LOGNAME": root.user}
        if root.uid == 0:
            env["PATH"] = ROOT_PATH
        env.update(TERMRL_SECRET_FD=str(secret_r), TERMRL_RESULT_FD=str(result_w))
        binds: list[str] = []
        for index, mount in enumerate(request.mounts):  # reached through a folder of the run's: bubblewrap runs as the range's root
            reach = folder / f"mount-{index}"
            if mount.staged:
                reach.mkdir(mode=0o755)
                copy_tree(mount.host_path, reach)
            else:
                reach.mkdir() if mount.host_path.is_dir() else reach.touch()
                idmapped_mount(str(mount.host_path), reach, None)
                bound.append(reach)
            binds += ["--ro-bind", str(reach), mount.sandbox_path]
        binds += ["--ro-bind", "/dev/null", "/etc/ld.so.preload"]
        try:
            process = launch_layered(bwrap, ids, slots, env=env, binds=binds, cwd=request.cwd, prefix=enter_as(account),
                                     argv=list(request.argv), wrap=limits.wrap, pass_fds=(secret_r, result_w),
                                     network=request.network)
        except BaseException:
            os.close(secret_w)
            os.close(result_r)
            raise
        finally:
            os.close(secret_r)
            os.close(result_w)
        try:
            os.write(secret_w, request.secret)
        except BrokenPipeError:
            pass
        finally:
            os.close(secret_w)
        payload, log, timed_out = collect(process, result_r, request.timeout_s)
        return IsolatedRun(process.returncode, payload, log.decode(errors="replace"), timed_out)
    finally:
        for reach in bound:
            unmount(reach)
        limits.release()
        shutil.rmtree(folder, ignore_errors=True)
