"""A separate verifier's machine on docker: the machine as the harness laid it out, with the agent's declared artifacts alone put in.

On bwrap a separate verifier grades the sandbox's lowers (the image and the task's own layer:
workdir, task files, decoys) under the agent's upper layer pruned to the artifacts and the
folders that lead to them (:mod:`...verifier.machine_artifacts`): the setup script's changes go
with the agent's others. A committed image cannot be pruned so. Here the same machine is an
image committed once the task's files are in, before the setup script and the shell start
(only for a task with a separate verifier), and the artifacts travel in the snapshot folder as
one archive: each read through the engine's archive API (paths resolved inside the container,
the artifact itself never followed when it is a link) after a walk below the container's merged
folder, one folder at a time without following a link, that finds its folders and their owners.
Before the grader runs, each artifact's path is cleared in its fresh container (what the agent
deleted is gone there too, as a kept whiteout does on bwrap) and the archive goes in as root.

As on bwrap, an artifact behind a link or a missing folder is not carried (the prepared
machine's stays); the archive is whole (bwrap's copy of the upper layer is not capped either).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ...errors import SandboxError
from ...tasks.model import Task
from ..bwrap.overlay import Account
from ..tarstream import ChunkReader
from .machine_layer import root_output
from .merged_home import merged_home

SEPARATE_FILE = "separate.json"
"""The file in a snapshot folder that makes it a separate verifier's (:class:`CarriedArtifacts`)."""
ARTIFACTS_FILE = "artifacts.tar"
"""The archive of the artifacts in such a folder, names relative to the machine's ``/``."""
ACCOUNT_FILES = ("passwd", "group")
"""The prepared machine's account files, read when the sandbox was prepared, that name the grader's account."""

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_CLEAR = 'rm -rf -- "$@" 2>/dev/null; exit 0'  # what a read-only trusted mount keeps is masked by it anyway


def _absolute(source: str) -> str | None:
    """``source`` as a plain absolute path ('/' for the whole machine); None with a '..' in it."""
    parts = [p for p in source.split("/") if p not in ("", ".")]
    return None if ".." in parts else "/" + "/".join(parts)


def _under(path: str, tops: Iterable[str]) -> bool:
    return any(path == top or path.startswith(top.rstrip("/") + "/") for top in tops)


@dataclass(frozen=True)
class CarriedArtifacts:
    """What a separate verifier's snapshot takes of the agent's machine: ``cleared`` (each artifact read, or absent
    when the agent ended) is removed from the prepared machine, then :data:`ARTIFACTS_FILE` is put in at ``/``."""

    cleared: tuple[str, ...]

    def covers(self, path: str) -> bool:
        """Whether ``path`` of the machine is the agent's in the verifier's (one of the artifacts, or below one)."""
        return _under(path, self.cleared)

    def to_dict(self) -> dict:
        return {"cleared": list(self.cleared)}

    @classmethod
    def from_dict(cls, data: dict) -> CarriedArtifacts:
        return cls(tuple(str(p) for p in data.get("cleared", ())))

    @classmethod
    def of(cls, snapshot: Path) -> CarriedArtifacts | None:
        """The record of a snapshot folder; None for one that is the agent's whole machine."""
        path = snapshot / SEPARATE_FILE
        return cls.from_dict(json.loads(path.read_text())) if path.is_file() else None


def _folders(root: str, parts: list[str], id_base: int) -> tuple[list[tarfile.TarInfo], bool] | None:
    """The folders leading to an artifact as the agent left them (tar headers, owners inside), walked below the merged
    folder without following a link, and whether the artifact itself is there; None when a folder on the way is a
    link, not a folder or absent (on bwrap the pruning drops such an entry of the upper layer: the image's shows)."""
    fd = os.open(root, _DIR)
    infos: list[tarfile.TarInfo] = []
    try:
        for index, part in enumerate(parts[:-1]):
            try:
                nfd = os.open(part, _DIR | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:
                return None
            os.close(fd)
            fd = nfd
            st = os.fstat(fd)
            info = tarfile.TarInfo("/".join(parts[:index + 1]))
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, stat.S_IMODE(st.st_mode), int(st.st_mtime)
            info.uid, info.gid = max(st.st_uid - id_base, 0), max(st.st_gid - id_base, 0)
            infos.append(info)
        try:
            os.lstat(parts[-1], dir_fd=fd)
        except FileNotFoundError:
            return infos, False
        return infos, True
    finally:
        os.close(fd)


def _carry(container, root: str, id_base: int, path: str, out: tarfile.TarFile, written: set[str],
           excluded: tuple[str, ...], not_found: type[Exception]) -> bool:
    """Put ``path`` of the agent's machine (its folders first) in ``out``: whether it is the agent's in the verifier's
    machine (read, or absent there); False when it lies behind a link, a file or a missing folder."""
    parts = path.strip("/").split("/")
    walked = _folders(root, parts, id_base)
    if walked is None:
        return False
    folders, there = walked
    if not there:
        return True  # absent when the agent ended: cleared, nothing put
    try:
        chunks, _ = container.get_archive(path)
    except not_found:
        return True  # removed since the walk (the agent's processes may still run)
    for info in folders:
        if info.name not in written and not _under("/" + info.name, excluded):
            written.add(info.name)
            out.addfile(info)
    parent = "/".join(parts[:-1])
    stream = ChunkReader(chunks)
    with tarfile.open(fileobj=io.BufferedReader(stream), mode="r|") as archive:
        for member in archive:
            member.name = f"{parent}/{member.name}" if parent else member.name
            if member.islnk():
                member.linkname = f"{parent}/{member.linkname}" if parent else member.linkname
            if not _under("/" + member.name, excluded):
                out.addfile(member, archive.extractfile(member) if member.isreg() else None)
    stream.drain()
    return True


@dataclass(frozen=True)
class PreparedMachine:
    """The machine a separate verifier grades, as the harness laid the task out: an image committed before the setup
    script ran (None: an artifact is the whole machine, so the agent's is graded), the account files read then
    (in ``folder``, the sandbox's own), and the declared artifacts as plain absolute paths."""

    image: str | None
    folder: Path
    artifacts: tuple[str, ...]

    @classmethod
    def commit(cls, engine, container, label: str, task: Task, folder: Path) -> PreparedMachine | None:
        """The prepared machine of a task with a separate verifier (None for another task): commit it now."""
        if task.verifier_mode != "separate":
            return None
        artifacts = tuple(sorted({p for p in (_absolute(s) for s in task.artifacts) if p is not None}))
        image = None if "/" in artifacts else engine.commit(container, label)
        return cls(image, folder, artifacts)

    def lay_out(self, container, id_base: int, dest: Path, image_file: str, excluded: tuple[str, ...],
                not_found: type[Exception]) -> None:
        """Make ``dest`` the verifier's snapshot: the prepared image and account files, the artifacts read from the
        agent's ``container`` (none of ``excluded``: mount points whose files are not the machine's; ``not_found``:
        the SDK's error for a path the container lacks)."""
        assert self.image is not None
        (dest / image_file).write_text(self.image + "\n")
        for name in ACCOUNT_FILES:
            if (self.folder / name).is_file():
                shutil.copyfile(self.folder / name, dest / name)
        root = merged_home(container, id_base, Account(0, 0, "root", "/root"), "/").path
        cleared: list[str] = []
        written: set[str] = set()
        with tarfile.open(dest / ARTIFACTS_FILE, "w", format=tarfile.PAX_FORMAT) as out:
            for path in self.artifacts:
                if _carry(container, os.fspath(root), id_base, path, out, written, excluded, not_found):
                    cleared.append(path)
        (dest / SEPARATE_FILE).write_text(json.dumps(CarriedArtifacts(tuple(cleared)).to_dict()) + "\n")


def put_artifacts(container, snapshot: Path, bound: list[str]) -> CarriedArtifacts | None:
    """In the verifier's fresh ``container`` of a separate verifier's snapshot: clear the artifacts' paths and put the
    archive in as root, but what lies at or below ``bound`` (its read-only mounts, which mask it anyway). The record,
    or None for a snapshot of the agent's whole machine."""
    carried = CarriedArtifacts.of(snapshot)
    if carried is None:
        return None
    cleared = [p for p in carried.cleared if p != "/"]
    if cleared:
        root_output(container, _CLEAR, cleared)
    with tempfile.TemporaryFile(dir=snapshot) as data:
        with tarfile.open(snapshot / ARTIFACTS_FILE) as archive, tarfile.open(fileobj=data, mode="w", format=tarfile.PAX_FORMAT) as out:
            for member in archive:
                if not _under("/" + member.name, bound):
                    out.addfile(member, archive.extractfile(member) if member.isreg() else None)
        data.seek(0)
        try:
            accepted = container.put_archive("/", data)
        except Exception as exc:  # noqa: BLE001 - whatever the SDK raised, the artifacts are not in
            raise SandboxError(f"putting the artifacts into {container.name} failed: {exc}") from exc
        if not accepted:
            raise SandboxError(f"the engine refused the artifacts for {container.name}")
    return carried
