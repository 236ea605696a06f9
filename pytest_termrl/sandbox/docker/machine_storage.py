"""A whole-machine container's disk: its overlay2 layer folder on a tmpfs of the task's storage size, as bwrap's upper layers.

Between creating the container and starting it, a tmpfs of the size (:func:`..storage.storage_size`:
the task's ``storage_mb``, else the settings' ``storage_bytes``) is mounted over the container's
layer folder, the parent of ``GraphDriver.Data.UpperDir`` (``diff``, ``work``, ``link``,
``lower``: upper and work must share one file system), and what the engine put there is copied
onto it with its owners, modes and times (a remapped engine's ids shifted as they are). When the
container starts, the engine mounts its overlay on that tmpfs: past the size a write fails with
"No space left on device" inside, the engine's disk fills nothing, and the episode ends with
``storage_limit`` (:func:`..storage.is_full`, bwrap's test). ``docker commit`` reads the upper
through the mount, and ``docker rm`` unmounts it before removing the folder (moby's
``EnsureRemoveAll``), also for a killed run's container that :mod:`.cleanup` removes.

The harness mounts it only where it can: a local engine storing containers with overlay2, the
harness root, and the engine in a mount namespace that sees the harness's mounts (checked once
the container runs: its root's overlay reports the tmpfs's size). Elsewhere an engine that sizes
layers itself (overlay2 on xfs with project quotas) sizes it, or ``storage`` says ``not enforced``
and why.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ...errors import SandboxError
from ...settings import SandboxSettings
from ...tasks.model import Resources
from ..hostfs import copy_tree
from ..storage import SizedTmpfs, is_full, storage_size, tmpfs_note
from .machine_support import MachineSupport

NOT_SEEN = ("the engine laid the container's overlay elsewhere than the tmpfs mounted over its layer folder "
            "(it runs in a mount namespace that does not see this machine's mounts)")
"""Why the limit is not enforced when the started container's root is not on the harness's tmpfs."""


def tmpfs_problem(support: MachineSupport, euid: int | None = None) -> str | None:
    """Why the harness cannot put a container's layer folder on a tmpfs of its own (None: it can)."""
    missing = []
    if not support.local:
        missing.append("the engine runs on another machine")
    if support.driver != "overlay2":
        missing.append(f"the engine stores containers with the {support.driver} driver, not overlay2")
    if (os.geteuid() if euid is None else euid) != 0:
        missing.append("the harness is not root (it mounts a tmpfs under the container's layer)")
    return "; ".join(missing) or None


class LayerStorage:
    """How one whole-machine container's disk is bounded: a tmpfs under its layer folder, the engine's quota, or not at all."""

    def __init__(self, support: MachineSupport, settings: SandboxSettings, resources: Resources | None,
                 euid: int | None = None) -> None:
        self.size_bytes, self._from_task = storage_size(settings, resources)
        self.why_not = tmpfs_problem(support, euid)
        """Why there is no tmpfs (None: there is one, once :meth:`mount_under` ran)."""
        asked = resources.storage_mb if self._from_task and resources is not None else None
        self._asked = asked
        self.quota = f"{asked}M" if self.why_not is not None and asked and support.storage_sizable else None
        """The engine's own size for the writable layer (overlay2 on xfs with pquota), where no tmpfs can be made."""
        self._engine_note = support.storage_note()
        self.tmpfs: SizedTmpfs | None = None
        self._upper: str | None = None

    @property
    def note(self) -> str:
        """The ``storage`` line of ``enforced_limits``: what bounds the container's writes, or why nothing does."""
        if self.why_not is None:
            return tmpfs_note("the container's overlay2 layer folder", self.size_bytes, self._from_task)
        if self.quota is not None:
            return f"the container's writable layer sized {self._asked} MiB (overlay2 on xfs, project quota; the task's storage_mb)"
        why = f"{self.why_not}; and {self._engine_note}"
        return f"not enforced (storage_mb={self._asked} asked): {why}" if self._asked else f"not enforced: {why}"

    def mount_under(self, container) -> None:
        """Put the created container's layer folder on the tmpfs, what it holds copied over (before the container starts)."""
        data = (container.attrs.get("GraphDriver") or {}).get("Data") or {}
        upper, work = data.get("UpperDir"), data.get("WorkDir")
        self._upper = upper
        if self.why_not is not None:
            return
        if not upper or not work or Path(upper).parent != Path(work).parent:
            raise SandboxError(f"{container.name}'s upper and work folders ({upper!r}, {work!r}) share no layer folder to size")
        layer = Path(upper).parent
        st = os.lstat(layer)
        below = os.open(layer, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)  # the folder, once hidden
        try:
            tmpfs = SizedTmpfs(layer, self.size_bytes, stat.S_IMODE(st.st_mode))
            try:
                os.chown(layer, st.st_uid, st.st_gid)
                copy_tree(Path(f"/proc/{os.getpid()}/fd/{below}"), layer)
                os.utime(layer, ns=(st.st_atime_ns, st.st_mtime_ns))
            except BaseException:
                tmpfs.release()
                raise
        finally:
            os.close(below)
        self.tmpfs = tmpfs

    def confirm(self, container) -> None:
        """Once the container runs: its root must lie on the tmpfs (an overlay reports its upper's file system);
        else the engine does not see the harness's mounts, and the tmpfs goes (the record reads the engine's folder)."""
        if self.tmpfs is None:
            return
        container.reload()
        pid = (container.attrs.get("State") or {}).get("Pid")
        try:
            seen = bool(pid) and self.tmpfs.holds(os.statvfs(f"/proc/{pid}/root"))
        except OSError:
            seen = False
        if not seen:
            self.tmpfs.release()
            self.tmpfs, self.why_not = None, NOT_SEEN

    def exhausted(self) -> bool:
        """Whether the container's writes filled what bounds them (never, where nothing does)."""
        if self.tmpfs is not None:
            return self.tmpfs.exhausted()
        if self.quota is not None and self._upper:
            try:
                return is_full(self._upper)
            except OSError:
                return False
        return False

    def used_bytes(self) -> int:
        """What the container's layer holds on the tmpfs (0 without one)."""
        return self.tmpfs.used_bytes() if self.tmpfs is not None else 0

