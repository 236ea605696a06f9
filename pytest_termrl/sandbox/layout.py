"""Where things are in every backend's sandbox, and the folders a backend keeps on the host.

Inside: the agent's home at /home/user, the shell's control folder (the harness's, read-only
for the agent) and output folder (the agent's), the agent's environment, and the second
place the home shows up for a task whose workdir is elsewhere (/app). On the host: one work
root per user, holding one folder per sandbox named after the process that made it, so a
later run can tell what a killed one left behind.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
from pathlib import Path

from ..errors import SandboxError
from .hostfs import pid_alive

HOME_INSIDE = "/home/user"
CTL_INSIDE = "/run/termrl"
IO_INSIDE = "/run/termrl-out"

AGENT_ENV = {
    "HOME": HOME_INSIDE,
    "USER": "user",
    "LOGNAME": "user",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "SHELL": "/bin/bash",
    "TMPDIR": "/tmp",
}
"""The agent's whole environment: every backend starts its shell and the verifier with exactly this."""

SYSTEM_DIRS = ("/", "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/dev", "/tmp",
               "/var/tmp", "/run", "/opt/termrl", "/home", "/sys")
"""Folders a task's workdir may not be, nor lie under: showing the home there would hide them."""


MEMORY_ROOT = Path("/dev/shm")
"""A memory file system most Linux machines mount; where the sandboxes' folders live by default."""


def default_workroot() -> Path:
    """``$TERMRL_WORKROOT``, else a folder in memory (/dev/shm), else one in the temporary folder.

    Every episode copies a task's files in, plants decoys (a git repository among them),
    snapshots the home for the verifier and removes it all again: on a disk those are
    journalled writes (a snapshot of a 60-file home took 45 ms on ext4 here, 4 ms in memory).
    """
    chosen = os.environ.get("TERMRL_WORKROOT")
    if chosen:
        return Path(chosen)
    name = f"termrl-{os.geteuid()}"
    if MEMORY_ROOT.is_dir() and os.access(MEMORY_ROOT, os.W_OK | os.X_OK) and _is_memory_fs(MEMORY_ROOT):
        return MEMORY_ROOT / name
    return Path(tempfile.gettempdir()) / name


def _is_memory_fs(path: Path) -> bool:
    """Whether ``path`` is the mount point of a tmpfs (per /proc/self/mounts)."""
    try:
        for line in Path("/proc/self/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) > 2 and fields[1] == str(path) and fields[2] == "tmpfs":
                return True
    except OSError:
        pass
    return False


def workdir_alias(workdir: str) -> str | None:
    """Where the home is mounted a second time for a task whose workdir is not /home/user (/app)."""
    if workdir == HOME_INSIDE or workdir.startswith(HOME_INSIDE + "/"):
        return None
    if not workdir.startswith("/") or ".." in workdir.split("/"):
        raise SandboxError(f"the workdir {workdir!r} is not an absolute path")
    for system in SYSTEM_DIRS:
        if workdir == system or (system != "/" and workdir.startswith(system + "/")):
            raise SandboxError(f"the workdir {workdir} would hide a system folder; the home cannot be shown there")
    return workdir.rstrip("/")


class SandboxFolders:
    """A backend's folders in the work root: ``<prefix>-<pid>-<label>-<token>``, one per sandbox.

    The pid is the owner's: a folder whose owner is dead is a killed run's leftover.
    """

    def __init__(self, workroot: Path, prefix: str) -> None:
        self.workroot = workroot
        self.prefix = prefix
        self._owner = re.compile(rf"^{re.escape(prefix)}-(\d+)-")

    def create_root(self) -> None:
        """The work root itself: 0711, so sandboxes' users may pass through it and list nothing."""
        self.workroot.mkdir(parents=True, exist_ok=True)
        os.chmod(self.workroot, 0o711)

    def new(self, safe_label: str) -> Path:
        path = self.workroot / f"{self.prefix}-{os.getpid()}-{safe_label}-{secrets.token_hex(4)}"
        path.mkdir()
        os.chmod(path, 0o711)
        return path

    def owner_alive(self, name: str) -> bool:
        """Whether name is one of these folders (or cgroups, named alike) whose process still runs."""
        match = self._owner.match(name)
        return bool(match and pid_alive(int(match.group(1))))

    def remove_stale(self) -> list[str]:
        """Remove the folders of dead owners (and any by that prefix not named by an owner); return them."""
        removed = []
        for path in sorted(self.workroot.glob(f"{self.prefix}-*")):
            if self.owner_alive(path.name):
                continue
            shutil.rmtree(path, ignore_errors=True)
            removed.append(str(path))
        return removed

    def remove_own(self) -> None:
        """Remove every folder of this process."""
        for path in self.workroot.glob(f"{self.prefix}-{os.getpid()}-*"):
            shutil.rmtree(path, ignore_errors=True)
