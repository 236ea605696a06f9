"""What a Docker engine offers whole-machine sandboxes: a readable change record, who root inside is, storage limits.

A whole-machine sandbox's change record is its container's overlay2 upper directory, read
from this machine (:mod:`pytest_termrl.oracle.record`), so the engine must run here and store
containers with the overlay2 driver; anything else is refused by name (never a silent
fall-back to watching a home). With user namespaces remapped (``userns-remap``), root inside
is the first id of ``dockremap``'s range in /etc/subuid on the host, the record's ``id_base``;
without, it is host root (0). A task's ``storage_mb`` is a tmpfs the harness mounts under the
container's layer (:mod:`.machine_storage`); the driver itself takes a size only on xfs mounted
with project quotas.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REQUIREMENT = "a local engine with the overlay2 storage driver"
"""What whole-machine sandboxes need of the docker backend's engine."""

REMAP_USER = "dockremap"
"""The account ``userns-remap=default`` maps root inside to (its range in /etc/subuid and /etc/subgid)."""


@dataclass(frozen=True)
class MachineSupport:
    """The engine's answers that whole-machine sandboxes depend on (from ``docker info``)."""

    local: bool
    driver: str
    backing_fs: str
    userns: bool
    id_base: int
    """The host id of root inside (0 without remapping)."""
    userxattr: bool = False
    """Whether the engine mounts its overlays with ``userxattr`` (a rootless engine): their marks are then ``user.overlay.*``."""

    @classmethod
    def of(cls, info: dict, local: bool, subuid: Path = Path("/etc/subuid")) -> "MachineSupport":
        status = {str(k): str(v) for k, v in (info.get("DriverStatus") or [])}
        userns = any("name=userns" in str(option) for option in info.get("SecurityOptions") or [])
        return cls(local, str(info.get("Driver") or "?"), status.get("Backing Filesystem", "?"), userns,
                   remapped_root(subuid) if userns else 0, status.get("userxattr", "false").lower() == "true")

    @property
    def marks(self) -> tuple[str, ...]:
        """The overlay xattrs the engine's overlays obey; any other (``user.overlay.*`` set inside) is a plain xattr."""
        return ("user.overlay.",) if self.userxattr else ("trusted.overlay.",)

    def problem(self) -> str | None:
        """What is missing for whole-machine sandboxes (None: nothing)."""
        missing = []
        if not self.local:
            missing.append("this engine runs on another machine (its overlay layers cannot be read from here)")
        if self.driver != "overlay2":
            missing.append(f"this engine stores containers with the {self.driver} driver")
        if self.userns and self.id_base <= 0:
            missing.append(f"the engine remaps user namespaces but /etc/subuid names no range for {REMAP_USER}")
        if not missing:
            return None
        return f"the docker backend needs {REQUIREMENT} for whole-machine sandboxes, and " + "; ".join(missing)

    @property
    def storage_sizable(self) -> bool:
        """Whether a container's writable layer can be given a size (overlay2 on xfs; project quotas are checked at creation)."""
        return self.driver == "overlay2" and self.backing_fs == "xfs"

    def userns_note(self) -> str:
        if self.userns:
            return f"remapped: root inside is host uid {self.id_base} ({REMAP_USER}'s range in /etc/subuid)"
        return "not remapped: ids inside are host ids, root inside is host root with the engine's default capabilities"

    def storage_note(self) -> str:
        """Why the engine itself does not size a container's writable layer here."""
        return (f"the container's writable layer is {self.driver} on {self.backing_fs}, which the engine sizes "
                "only on xfs mounted with project quotas (pquota)")


def remapped_root(subuid: Path) -> int:
    """The first id of ``dockremap``'s subordinate range (root inside a remapped container); -1 if none is named."""
    try:
        lines = subuid.read_text().splitlines()
    except OSError:
        return -1
    for line in lines:
        parts = line.strip().split(":")
        if len(parts) == 3 and parts[0] == REMAP_USER and parts[1].isdigit():
            return int(parts[1])
    return -1
