"""unsearchable_dir: the input's folder lost its execute bits."""

from __future__ import annotations

import stat
from collections.abc import Iterable
from typing import Any

from ..sandbox.reach import HostHome
from . import fsops
from .base import (
    PERMISSION_MARKERS,
    FaultError,
    FaultState,
    InputFileFamily,
    changed_by_task,
    hit,
    owner_bits_ok,
    permission,
)


class UnsearchableDir(InputFileFamily):
    """The input's folder lost its execute bits (0755 -> 0644, what a mistaken ``chmod -R 644 dir`` leaves).

    Names can be listed, nothing inside opened. Repair: ``chmod u+x`` (its original mode).
    """

    name = "unsearchable_dir"
    mode_fault = True
    description = "the input's folder lost its execute bits (0755 -> 0644); repair: chmod u+x"

    def rejects(self, rel: str, permitted: list) -> str:
        folder = fsops.parent_of(rel)
        if folder == ".":
            return f"{rel} is directly in the home (its folder would be the home itself)"
        if changed_by_task(folder, permitted):
            return f"the reference changes {folder} itself"
        return ""

    def applies_to(self, task_inputs: Iterable[str], permitted: Iterable[Any]) -> list[str]:
        permitted = list(permitted)
        return [t for t in super().applies_to(task_inputs, permitted) if not self.rejects(t, permitted)]

    def inject(self, home: HostHome, target: str, uid: int, gid: int, *, salt: str = "") -> FaultState:
        target = fsops.normalize(target)
        folder = fsops.parent_of(target)
        if folder == ".":
            raise FaultError(f"{self.name}: {target!r} is directly in the home; its folder is the home")
        sha, mode = self._read_input(home, target)
        st = fsops.lstat(home, folder)
        if st is None or fsops.kind(st) != "directory" or st.st_uid != uid:
            raise FaultError(f"{self.name}: {folder!r} is not a folder the agent owns")
        folder_mode = stat.S_IMODE(st.st_mode)
        if folder_mode & 0o500 != 0o500:
            raise FaultError(f"{self.name}: {folder!r} is already not searchable (mode {folder_mode:04o})")
        fault_mode = folder_mode & ~0o111
        try:
            fsops.chmod(home, folder, fault_mode, expect="directory")
        except OSError as exc:
            raise FaultError(f"{self.name}: cannot change {folder!r}: {exc}") from None
        return FaultState(self.name, target, None, sha, mode,
                          {"folder": folder, "folder_mode": folder_mode, "fault_mode": fault_mode, "uid": uid, "gid": gid},
                          (permission(folder, ["mode_changed"]),))

    def repair_command(self, state: FaultState) -> str:
        return f"chmod {state.details['folder_mode']:04o} {state.quoted(state.details['folder'])}"

    def generic_repair(self, state: FaultState) -> str:
        return f"chmod u+x {state.quoted(state.details['folder'])}"

    def observed(self, state: FaultState, command: str, output: str, timed_out: bool) -> bool:
        folder = fsops.basename(state.details["folder"])
        names = [fsops.basename(state.target), folder]
        return hit(command, output, names, PERMISSION_MARKERS)

    def _folder_ok(self, home: HostHome, state: FaultState) -> bool:
        st = fsops.lstat(home, state.details["folder"])
        return st is not None and fsops.kind(st) == "directory" and owner_bits_ok(stat.S_IMODE(st.st_mode), state.details["folder_mode"])

    def cleared(self, home: HostHome, state: FaultState) -> bool:
        return self._folder_ok(home, state) and self.bytes_at_input(home, state)

    def restore_for_grading(self, home: HostHome, state: FaultState) -> None:
        folder = state.details["folder"]
        if fsops.kind(fsops.lstat(home, folder)) == "directory" and not self._folder_ok(home, state):
            try:
                fsops.chmod(home, folder, state.details["folder_mode"], expect="directory")
            except (OSError, ValueError):
                pass
