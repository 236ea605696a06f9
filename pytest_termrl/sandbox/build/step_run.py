"""One build step in a whole-machine sandbox: the image so far as read-only layers, an empty upper that becomes the step's layer.

The step runs as its user (root of the sandbox's own user namespace unless a ``USER`` says
otherwise), in its ``WORKDIR``, with its ``ENV`` and ``ARG`` values, no network, the offline
installer stand-ins first on PATH, and the sandbox's limits (memory, processes, the upper's
size, the build's time left). Its upper folders, one per overlay, are then assembled into
one tree: the layer.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..base import SandboxSettings
from ..hostfs import copy_tree
from ..layout import CTL_INSIDE, IO_INSIDE
from ..limits import ResourceLimits
from ..standin_shims import LOG_NAME, SHIMS_INSIDE, shim_folder
from ..bwrap.lowers import MachineLowers
from ..bwrap.overlay import Account, LayerSlot, enter_as, launch_layered, make_slot_folders
from ..bwrap.spares import collect
from ..bwrap.storage import UpperStorage

STAGE_INSIDE = CTL_INSIDE
"""Where a step's staged files (a COPY's tar) are seen, read-only: a folder of the base layer's skeleton."""
OUTPUT_CAP = 256 * 1024


@dataclass(frozen=True)
class StepRun:
    """How one step ended: its exit code (None when stopped at the deadline), its output, whether its upper filled up."""

    exit_code: int | None
    output: str
    timed_out: bool
    storage_full: bool
    standin_lines: tuple[str, ...]


def image_slots(lowers: MachineLowers, layers: list[Path]) -> list[tuple[str, tuple[Path, ...]]]:
    """(mount, lowers topmost first) for each overlay of a sandbox over ``layers`` (topmost first) and the machine's lowers."""
    out: list[tuple[str, tuple[Path, ...]]] = [("/", (*layers, lowers.base))]
    for mount, below in sorted(lowers.slots.items()):
        own = [layer / mount.lstrip("/") for layer in layers]
        out.append((mount, (*[p for p in own if p.is_dir() and not p.is_symlink()], *below)))
    return out


def run_step(bwrap: str, workroot: Path, folder: Path, lowers: MachineLowers, layers: list[Path], *,
             argv: list[str], account: Account, groups: tuple[int, ...], cwd: str, env: dict[str, str],
             settings: SandboxSettings, timeout_s: float, stage: Path | None = None) -> tuple[StepRun, UpperStorage]:
    """Run ``argv`` over ``layers`` in a fresh sandbox at ``folder``; (how it ended, the tmpfs holding its uppers).

    The caller assembles ``storage.path / "upper"`` into a layer (:func:`assemble`), then
    releases the storage and removes ``folder``.
    """
    ids = lowers.ids
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    storage = UpperStorage(folder / "rw", settings.storage_bytes)
    limits = ResourceLimits(settings, folder.name)
    io = folder / "io"
    io.mkdir(mode=0o700)
    os.chown(io, ids.host(account.uid), ids.host(account.gid))
    slots_spec = image_slots(lowers, layers)
    uppers = make_slot_folders(storage.path, [mount for mount, _ in slots_spec], ids.base)
    slots = [LayerSlot(mount, below, *uppers[mount]) for mount, below in slots_spec]
    try:
        limits.setup()
        result_r, result_w = os.pipe()
        binds = ["--ro-bind", str(shim_folder(workroot)), SHIMS_INSIDE, "--bind", str(io), IO_INSIDE]
        if stage is not None:
            binds += ["--ro-bind", str(stage), STAGE_INSIDE]
        try:
            process = launch_layered(bwrap, ids, slots, env=env, binds=binds, cwd=cwd, prefix=enter_as(account, groups),
                                     argv=argv, wrap=limits.wrap, pass_fds=(result_w,))
        except BaseException:
            os.close(result_r)
            raise
        finally:
            os.close(result_w)
        _, log, timed_out = collect(process, result_r, timeout_s)
        output = log.decode(errors="replace")
        if len(output) > OUTPUT_CAP:
            output = "[... earlier output cut ...]\n" + output[-OUTPUT_CAP:]
        standins = io / LOG_NAME
        lines = tuple(standins.read_text(errors="replace").splitlines()[:200]) if standins.is_file() and not standins.is_symlink() else ()
        run = StepRun(None if timed_out else process.returncode, output, timed_out, storage.exhausted(), lines)
        return run, storage
    except BaseException:
        storage.release()
        raise
    finally:
        limits.release()


def assemble(uppers: Path, tree: Path) -> None:
    """The step's uppers (one folder per overlay) as one tree: the root's at ``tree``, each other's at its mount point."""
    tree.mkdir(mode=0o755)
    shutil.copystat(uppers / "_root", tree)
    os.chown(tree, os.stat(uppers / "_root").st_uid, os.stat(uppers / "_root").st_gid)
    copy_tree(uppers / "_root", tree)
    for upper in sorted(uppers.iterdir()):
        if upper.name == "_root" or not any(upper.iterdir()):
            continue
        target = tree / upper.name  # a top-level mount point: /usr's upper is the layer's usr/
        if not target.is_dir():
            target.mkdir(parents=True)
            shutil.copystat(upper, target)
            os.chown(target, os.stat(upper).st_uid, os.stat(upper).st_gid)
        copy_tree(upper, target)


