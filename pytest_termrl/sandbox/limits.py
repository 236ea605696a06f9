"""Resource limits: cgroups where the harness may create them, rlimits otherwise.

What was enforced, and how, is returned so each episode records it. A task that asks for
its own resources (Harbor's ``cpus``, ``memory_mb``, ``storage_mb``: ``Task.resources``)
gets them in place of the harness's defaults (:func:`task_settings`), capped at what the
machine has; the record says what the task asked and what was capped.
"""

from __future__ import annotations

import os
import shlex
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, TypedDict

from ..tasks.model import Resources
from .base import MiB, SandboxSettings

_V1_ROOT = Path("/sys/fs/cgroup")
_GROUP = "termrl"


def _v1_controller(name: str) -> Path | None:
    path = _V1_ROOT / name
    return path if (path / "cgroup.procs").exists() and os.access(path, os.W_OK) else None


@dataclass
class ResourceLimits:
    """Limits for one sandbox: cgroup dirs it created, and a shell prefix that applies them."""

    settings: SandboxSettings
    label: str
    cgroup_dirs: list[Path] = field(default_factory=list)
    enforced: dict[str, str] = field(default_factory=dict)
    _ulimits: list[str] = field(default_factory=list)

    def setup(self) -> None:
        s = self.settings
        memory = _v1_controller("memory")
        if memory and self._make(memory, {"memory.limit_in_bytes": s.memory_bytes, "memory.swappiness": 0}):
            self.enforced["memory"] = f"cgroup:{s.memory_bytes}"
        else:
            self._ulimits.append(f"ulimit -v {s.memory_bytes // 1024}")
            self.enforced["memory"] = f"rlimit_as:{s.memory_bytes}"
        pids = _v1_controller("pids")
        if pids and self._make(pids, {"pids.max": s.max_processes}):
            self.enforced["processes"] = f"cgroup:{s.max_processes}"
        elif os.geteuid() != 0:
            # RLIMIT_NPROC counts every process of the uid; only meaningful unprivileged.
            self._ulimits.append(f"ulimit -u {s.max_processes + 64}")
            self.enforced["processes"] = f"rlimit_nproc:{s.max_processes + 64}"
        cpu = _v1_controller("cpu")
        period = 100_000
        quota = max(1000, int(period * s.cpus))  # the kernel's least quota is 1 ms a period
        if cpu and self._make(cpu, {"cpu.cfs_period_us": period, "cpu.cfs_quota_us": quota}):
            self.enforced["cpu"] = f"cgroup:{s.cpus}"
        else:
            self.enforced["cpu"] = "none"
        self._ulimits.append(f"ulimit -f {s.file_size_bytes // 1024}")
        self.enforced["file_size"] = f"rlimit_fsize:{s.file_size_bytes}"

    def _make(self, controller: Path, values: dict[str, int]) -> bool:
        path = controller / _GROUP / self.label
        try:
            path.mkdir(parents=True, exist_ok=True)
            for key, value in values.items():
                target = path / key
                if target.exists():
                    target.write_text(str(value))
        except OSError:
            return False
        self.cgroup_dirs.append(path)
        return True

    def wrap(self, argv: list[str]) -> list[str]:
        """argv prefixed by a shell that joins the cgroups and sets the rlimits, then execs."""
        steps = [f"echo $$ > {shlex.quote(str(d / 'cgroup.procs'))}" for d in self.cgroup_dirs]
        steps += self._ulimits
        script = " && ".join(steps + ['exec "$@"'])
        return ["/bin/bash", "-c", script, "termrl-limits", *argv]

    def pids(self) -> list[int]:
        for path in self.cgroup_dirs:
            try:
                return [int(p) for p in (path / "cgroup.procs").read_text().split()]
            except OSError:
                continue
        return []

    def release(self) -> None:
        for path in self.cgroup_dirs:
            pause, deadline = 0.001, time.monotonic() + 1.0
            while True:  # busy until its last process is gone: usually within a millisecond or two
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(pause)
                    pause = min(pause * 2, 0.02)
        self.cgroup_dirs = []


def machine_cpus() -> int:
    """The machine's CPUs (``os.cpu_count()``): the most a task's ``cpus`` gets."""
    return os.cpu_count() or 1


def machine_memory_bytes() -> int | None:
    """The machine's memory (MemTotal of /proc/meminfo): the most a task's ``memory_mb`` gets; None if unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


STORAGE_NOT_ENFORCED = "the home is a folder on the host's disk, with no size limit of its own"
"""Why a backend does not enforce a task's ``storage_mb`` (the file-size limit still applies)."""


class _Changes(TypedDict, total=False):
    """The fields of :class:`SandboxSettings` a task's resources replace."""

    cpus: float
    memory_bytes: int


def task_settings(
    settings: SandboxSettings,
    resources: Resources | None,
    storage_note: str = STORAGE_NOT_ENFORCED,
    machine: tuple[int | None, int | None] | None = None,
) -> tuple[SandboxSettings, dict[str, str]]:
    """The settings of a task's sandbox, and the lines its enforced limits gain.

    A task's ``cpus`` and ``memory_mb`` replace the defaults; a value above the machine's
    (``os.cpu_count()``, MemTotal; ``machine`` gives another machine's CPUs and bytes, a
    docker engine's) is the machine's, and ``capped`` says so. The lines
    (plain strings, merged into ``Sandbox.enforced_limits``): ``task_resources`` (what the
    task asked), ``capped`` (what was lowered to the machine's amount) and ``storage``
    (``storage_mb`` is not enforced: ``storage_note`` says why).
    """
    if resources is None:
        return settings, {}
    cpus_there, memory_there = machine or (None, None)
    changes: _Changes = {}
    asked: list[str] = []
    capped: list[str] = []
    if resources.cpus is not None:
        asked.append(f"cpus={resources.cpus:g}")
        cpus, most = float(resources.cpus), cpus_there or machine_cpus()
        if cpus > most:
            capped.append(f"cpus {cpus:g} -> {most} (the machine's CPUs)")
            cpus = float(most)
        changes["cpus"] = cpus
    if resources.memory_mb is not None:
        asked.append(f"memory_mb={resources.memory_mb}")
        memory, most_bytes = resources.memory_mb * MiB, memory_there or machine_memory_bytes()
        if most_bytes is not None and memory > most_bytes:
            capped.append(f"memory_mb {resources.memory_mb} -> {most_bytes // MiB} (the machine's MemTotal)")
            memory = most_bytes
        changes["memory_bytes"] = memory
    if resources.storage_mb is not None:
        asked.append(f"storage_mb={resources.storage_mb}")
    notes = {"task_resources": " ".join(asked)}
    if capped:
        notes["capped"] = "; ".join(capped)
    if resources.storage_mb is not None:
        notes["storage"] = f"not enforced (storage_mb={resources.storage_mb} asked): {storage_note}"
    return replace(settings, **changes), notes


def remove_stale_cgroups(alive: Callable[[str], bool]) -> list[str]:
    """Remove empty termrl cgroups for whose label ``alive`` is false (left by killed runs)."""
    removed = []
    for controller in ("memory", "pids", "cpu"):
        base = _V1_ROOT / controller / _GROUP
        if not base.is_dir():
            continue
        for path in base.iterdir():
            if path.is_dir() and not alive(path.name):
                try:
                    path.rmdir()
                    removed.append(str(path))
                except OSError:
                    pass
    return removed
