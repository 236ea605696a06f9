"""blocking_fifo: the input is a named pipe nobody writes (held out from training)."""

from __future__ import annotations


from ..sandbox.reach import HostHome
from . import fsops
from .base import (
    FaultError,
    FaultState,
    InputFileFamily,
    hit,
    name_pattern,
    permission,
)


class BlockingFifo(InputFileFamily):
    """The input is a named pipe nobody writes (a half-set-up log pipeline); every read of it hangs.

    The original bytes are at ``<input>.bak``. Repair: notice the hang, ``rm`` the FIFO and
    restore the backup. Held out from training.
    """

    name = "blocking_fifo"
    held_out = True
    may_be_fifo = True
    description = "the input is a named pipe nobody writes (bytes at <input>.bak); repair: rm it, restore the backup"

    def inject(self, home: HostHome, target: str, uid: int, gid: int, *, salt: str = "") -> FaultState:
        target = fsops.normalize(target)
        sha, mode = self._read_input(home, target)
        spare = target + ".bak"
        if fsops.lstat(home, spare) is not None:
            raise FaultError(f"{self.name}: {spare!r} already exists")
        try:
            fsops.rename(home, target, spare)
            fsops.mkfifo(home, target, mode, uid, gid)
        except OSError as exc:
            raise FaultError(f"{self.name}: cannot replace {target!r} by a FIFO: {exc}") from None
        return FaultState(self.name, target, spare, sha, mode,
                          {"uid": uid, "gid": gid},
                          (permission(target), permission(spare)))

    def repair_command(self, state: FaultState) -> str:
        if state.spare is None:
            raise FaultError(f"{self.name}: the fault state names no spare")
        return f"rm -f {state.quoted(state.target)} && mv {state.quoted(state.spare)} {state.quoted(state.target)}"

    def observed(self, state: FaultState, command: str, output: str, timed_out: bool) -> bool:
        name = fsops.basename(state.target)
        pattern = name_pattern(name)
        if timed_out and (pattern.search(command.lower()) or pattern.search(output.lower())):
            return True
        # Tools that refuse a FIFO instead of reading it (sed -i, git add) fail at once.
        return hit(command, output, [name], ("not a regular file", "can only add regular files"))

    def cleared(self, home: HostHome, state: FaultState) -> bool:
        return self.bytes_at_input(home, state)

    def restore_for_grading(self, home: HostHome, state: FaultState) -> None:
        self._put_back(home, state, state.details.get("uid", 1000), state.details.get("gid", 1000))
