"""The task's files and decoys for a whole-machine container, laid out here and put in before the agent's shell starts.

The workdir (owned by the task's user), its environment files and decoys, and the machine's
decoys (:func:`~pytest_termrl.oracle.decoys.plant_machine_decoys`) are planted in a folder of
this machine shaped like the container's ``/``, with names chosen around what the image already
holds (listed once, :func:`image_names`). The folder goes in as one archive
(:func:`layer_archive`): every folder the image has already is left out, so its mode and owner
stay the image's (the workdir alone takes the task user as owner), and what the archive adds lands
in the container's upper layer before the change record's baseline is read.
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path
from typing import Callable

from ...errors import SandboxError
from ...oracle.decoys import plant_decoys, plant_machine_decoys
from ...tasks.model import Task
from ..hostfs import chown_tree, copy_tree
from .exec import ROOT_ENV

LISTED = ("/etc", "/var/lib", "/srv", "/root", "/root/.ssh")
"""Folders of the image whose names the machine's decoys steer around."""

_LIST = r'''for d; do
  [ -d "$d" ] || continue
  printf '%s\0' "$d"
  for e in "$d"/* "$d"/.[!.]* "$d"/..?*; do
    if [ -e "$e" ] || [ -L "$e" ]; then printf '%s\0' "$e"; fi
  done
done'''

_STAT = r'''for p; do
  if [ -e "$p" ] || [ -L "$p" ]; then stat -c '%a:%u:%g:%F:%n' -- "$p"; fi
done'''


def root_output(container, script: str, args: list[str]) -> str:
    """Run a harness script as root in the container (no agent process is there yet); its stdout."""
    try:
        result = container.exec_run(["sh", "-c", script, "termrl-probe", *args], user="0:0", environment=ROOT_ENV, demux=True)
    except Exception as exc:  # noqa: BLE001 - whatever the SDK raised, the probe did not run
        raise SandboxError(f"a probe of {container.name}'s files could not run: {exc}") from exc
    out, err = result.output if isinstance(result.output, tuple) else (result.output, b"")
    if result.exit_code != 0:
        raise SandboxError(f"a probe of {container.name}'s files failed ({result.exit_code}): {(err or b'').decode(errors='replace')[-300:]}")
    return (out or b"").decode(errors="surrogateescape")


def image_names(container, workdir: str) -> set[str]:
    """Absolute paths the container already shows in its workdir and the folders the decoys go to (one level each)."""
    folders = [workdir, f"{workdir.rstrip('/')}/.ssh", *LISTED]
    return {p for p in root_output(container, _LIST, folders).split("\0") if p}


def image_stats(container, paths: list[str]) -> dict[str, tuple[int, int, int, str]]:
    """Mode, owner, group and kind of those of ``paths`` the container has (symbolic links not followed)."""
    stats: dict[str, tuple[int, int, int, str]] = {}
    if not paths:
        return stats
    for line in root_output(container, _STAT, paths).splitlines():
        parts = line.split(":", 4)
        if len(parts) == 5:
            stats[parts[4]] = (int(parts[0], 8), int(parts[1]), int(parts[2]), parts[3])
    return stats


class MachineLayer:
    """A folder of this machine shaped like the container's ``/``, holding what the harness puts in before the shell."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(mode=0o755)

    def host(self, inside: str) -> Path:
        return self.path / inside.lstrip("/")

    def make_parents(self, path: Path) -> None:
        """The layer's folders above ``path``, root's and 0755 (those the image has are left out of the archive)."""
        for parent in reversed(path.relative_to(self.path).parents[:-1]):
            folder = self.path / parent
            if not folder.is_dir():
                folder.mkdir()
                os.chmod(folder, 0o755)
                os.chown(folder, 0, 0)

    def plant(self, task: Task, workdir: str, owner: tuple[int, int], existing: set[str]) -> list[str]:
        """The workdir with the task's files and decoys, and the machine's decoys; return every decoy's absolute path."""
        home = self.host(workdir)
        if home != self.path:
            self.make_parents(home)
            home.mkdir(mode=0o755)
        if task.environment_dir is not None:
            copy_tree(task.environment_dir, home)
        chown_tree(home, *owner)
        prefix = workdir.rstrip("/") + "/"
        taken = [p[len(prefix):] for p in existing if p.startswith(prefix)]
        home_decoys = [f"{prefix}{rel}" for rel in plant_decoys(home, task.id, task.inputs, *owner, avoid=taken)]
        avoid = [*home_decoys, *(f"{prefix}{i}" for i in task.inputs), workdir, *sorted(existing)]
        return home_decoys + plant_machine_decoys(self.path, task.id, (0, 0), self.make_parents, avoid=avoid)

    def folders(self) -> list[str]:
        """Every folder of the layer, as absolute paths inside (``/`` not included)."""
        out = []
        for dirpath, dirnames, _ in os.walk(self.path):
            dirnames.sort()
            out += ["/" + str(Path(dirpath, d).relative_to(self.path)) for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
        return out

    def archive(self, keep: Callable[[str], bool]) -> bytes:
        """The layer as a tar to extract at ``/``, without the folders ``keep`` turns down (the image's own)."""
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for dirpath, dirnames, filenames in os.walk(self.path):
                dirnames.sort()
                for name in sorted(dirnames) + sorted(filenames):
                    host = os.path.join(dirpath, name)
                    inside = "/" + os.path.relpath(host, self.path)
                    if os.path.isdir(host) and not os.path.islink(host) and not keep(inside):
                        continue
                    info = tar.gettarinfo(host, arcname=inside.lstrip("/"))
                    info.uname = info.gname = ""  # the numbers are the container's
                    if info.isreg():
                        with open(host, "rb") as handle:
                            tar.addfile(info, handle)
                    else:
                        tar.addfile(info)
        return buffer.getvalue()


def layer_archive(layer: MachineLayer, container, workdir: str, owner: tuple[int, int]) -> bytes:
    """The layer's archive for ``container``: folders the image has are left out, but for a workdir whose owner must change."""
    folders = layer.folders()
    stats = image_stats(container, folders)
    workdir = "/" + workdir.strip("/")

    def keep(inside: str) -> bool:
        seen = stats.get(inside)
        if seen is None:
            return True
        if inside == workdir and seen[3] == "directory" and (seen[1], seen[2]) != owner:
            os.chmod(layer.host(inside), seen[0])  # the image's mode, the task user's ownership
            return True
        return False

    return layer.archive(keep)
