"""perm_denied: the input is the agent's own file, mode 000."""

from __future__ import annotations

import stat

from ..sandbox.reach import HostHome
from . import fsops
from .base import (
    PERMISSION_MARKERS,
    FaultError,
    FaultState,
    InputFileFamily,
    hit,
    owner_bits_ok,
    permission,
)


class PermDenied(InputFileFamily):
    """The input is the user's own file but mode 000 (a stray ``chmod``, an umask-0777 download).

    Repair: ``chmod`` it back.
    """

    name = "perm_denied"
    mode_fault = True
    description = "the input is the agent's own file with mode 000; repair: chmod it back"

    def inject(self, home: HostHome, target: str, uid: int, gid: int, *, salt: str = "") -> FaultState:
        target = fsops.normalize(target)
        sha, mode = self._read_input(home, target)
        try:
            fsops.chown(home, target, uid, gid)
            fsops.chmod(home, target, 0o000, expect="file")
        except OSError as exc:
            raise FaultError(f"{self.name}: cannot change {target!r}: {exc}") from None
        return FaultState(self.name, target, None, sha, mode,
                          {"fault_mode": 0, "uid": uid, "gid": gid},
                          (permission(target),))

    def repair_command(self, state: FaultState) -> str:
        return f"chmod {state.original_mode:04o} {state.quoted(state.target)}"

    def generic_repair(self, state: FaultState) -> str:
        return f"chmod u+rw {state.quoted(state.target)}"

    def observed(self, state: FaultState, command: str, output: str, timed_out: bool) -> bool:
        name = fsops.basename(state.target)
        return hit(command, output, [name], PERMISSION_MARKERS)

    def cleared(self, home: HostHome, state: FaultState) -> bool:
        st = fsops.lstat(home, state.target)
        return (st is not None and fsops.kind(st) == "file" and owner_bits_ok(stat.S_IMODE(st.st_mode), state.original_mode)
                and self.bytes_at_input(home, state))

    def restore_for_grading(self, home: HostHome, state: FaultState) -> None:
        st = fsops.lstat(home, state.target)
        if st is not None and fsops.kind(st) == "file" and not owner_bits_ok(stat.S_IMODE(st.st_mode), state.original_mode):
            try:
                fsops.chmod(home, state.target, state.original_mode, expect="file")
            except (OSError, ValueError):
                pass
