"""moved_input: the input moved into a hidden sibling folder."""

from __future__ import annotations

import hashlib
import shlex

from ..sandbox.reach import HostHome
from . import fsops
from .base import (
    MISSING_MARKERS,
    FaultError,
    FaultState,
    InputFileFamily,
    hit,
    permission,
)


def _join(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"


class MovedInput(InputFileFamily):
    """The input was moved into a hidden sibling folder (``<dir>/.cache-<hex>/<name>``), the way sync tools and editors stash files.

    Repair: find it (``ls -a``, ``find``) and move it back.
    """

    name = "moved_input"
    description = "the input was moved into a hidden sibling folder; repair: find it and move it back"

    def inject(self, home: HostHome, target: str, uid: int, gid: int, *, salt: str = "") -> FaultState:
        target = fsops.normalize(target)
        sha, mode = self._read_input(home, target)
        tag = hashlib.sha256(f"termrl-moved\0{target}\0{salt}".encode("utf-8", "surrogateescape")).hexdigest()[:6]
        hidden = _join(fsops.parent_of(target), f".cache-{tag}")
        spare = f"{hidden}/{fsops.basename(target)}"
        if fsops.lstat(home, hidden) is not None:
            raise FaultError(f"{self.name}: {hidden!r} already exists")
        try:
            fsops.mkdir(home, hidden, 0o755, uid, gid)
            fsops.rename(home, target, spare)
        except OSError as exc:
            raise FaultError(f"{self.name}: cannot move {target!r} to {spare!r}: {exc}") from None
        return FaultState(self.name, target, spare, sha, mode,
                          {"hidden_dir": hidden, "uid": uid, "gid": gid},
                          (permission(target), permission(hidden, prefix=True)))

    def repair_command(self, state: FaultState) -> str:
        if state.spare is None:
            raise FaultError(f"{self.name}: the fault state names no spare")
        return f"mv -n {state.quoted(state.spare)} {state.quoted(state.target)} && rmdir {state.quoted(state.details['hidden_dir'])}"

    def generic_repair(self, state: FaultState) -> str:
        folder, name = fsops.parent_of(state.target), fsops.basename(state.target)
        return (f"mv -n \"$(find {state.quoted(folder)} -mindepth 2 -name {shlex.quote(name)} -print -quit)\" {state.quoted(state.target)}")

    def observed(self, state: FaultState, command: str, output: str, timed_out: bool) -> bool:
        return hit(command, output, [fsops.basename(state.target)], MISSING_MARKERS)

    def cleared(self, home: HostHome, state: FaultState) -> bool:
        return self.bytes_at_input(home, state)

    def restore_for_grading(self, home: HostHome, state: FaultState) -> None:
        self._put_back(home, state, state.details.get("uid", 1000), state.details.get("gid", 1000))
