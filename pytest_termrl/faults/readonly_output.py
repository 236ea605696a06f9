"""readonly_output: the folder the outputs go into has no write bits."""

from __future__ import annotations

import shlex
import stat
from collections.abc import Iterable
from typing import Any

from ..sandbox.reach import HostHome
from . import fsops
from .base import (
    PERMISSION_MARKERS,
    FaultError,
    FaultFamily,
    FaultState,
    hit,
    owner_bits_ok,
    permission,
    permitted_map,
)


WRITES = frozenset({"created", "content_changed"})
"""The change kinds that write a file into its folder."""


class ReadonlyOutput(FaultFamily):
    """The folder the task writes its outputs into has no write bits.

    Also a folder it rewrites a file in, as ``sed -i`` and git do through a temporary file.
    It exists with no write bits (0555 for one the fault made), as after ``chmod -R a-w`` or
    a restore from read-only media. Repair: ``chmod u+w`` (its original mode).
    """

    name = "readonly_output"
    mode_fault = True
    description = "the folder the outputs go into has no write bits; repair: chmod u+w"

    def applies_to(self, task_inputs: Iterable[str], permitted: Iterable[Any]) -> list[str]:
        rows = permitted_map(permitted)
        created = {path for path, kinds, _ in rows if "created" in kinds}
        # Files rewritten in place count too: sed -i, editors and git write a temporary
        # file beside them and rename it over. Validation drops folders that do not break.
        written = created | {path for path, kinds, _ in rows if "content_changed" in kinds}
        parents = {fsops.parent_of(c) for c in written if c != "."} - {"."}
        parents |= {path for path, kinds, prefix in rows if prefix and WRITES & kinds and path != "."}
        found = []
        for folder in sorted(parents):
            if folder in created and fsops.parent_of(folder) in parents:
                continue  # made by the reference inside another output folder: its parent is the target
            if any(path == folder and kinds - {"created"} for path, kinds, _ in rows):
                continue  # the reference changes the folder's mode or type itself
            found.append(folder)
        return found

    def why_no_target(self, task_inputs: Iterable[str], permitted: Iterable[Any]) -> str:
        rows = permitted_map(permitted)
        if not any(WRITES & kinds for _, kinds, _ in rows):
            return "the reference creates and rewrites no file, so it writes into no output folder"
        return "the reference writes only into the home itself or into folders whose mode it changes"

    def inject(self, home: HostHome, target: str, uid: int, gid: int, *, salt: str = "") -> FaultState:
        target = fsops.normalize(target)
        if target == ".":
            raise FaultError(f"{self.name}: the home itself is not an output folder")
        parts = target.split("/")
        precreated: list[str] = []
        try:
            for depth in range(1, len(parts) + 1):
                rel = "/".join(parts[:depth])
                st = fsops.lstat(home, rel)
                if st is None:
                    fsops.mkdir(home, rel, 0o755, uid, gid)
                    precreated.append(rel)
                elif not stat.S_ISDIR(st.st_mode):
                    raise FaultError(f"{self.name}: {rel!r} is a {fsops.kind(st)}, not a folder")
            st = fsops.lstat(home, target)
            if st is None:
                raise FaultError(f"{self.name}: {target!r} is missing")
            if st.st_uid != uid:
                raise FaultError(f"{self.name}: {target!r} is not owned by the agent (uid {st.st_uid})")
            original = stat.S_IMODE(st.st_mode)
            fault_mode = original & ~0o222
            if original & 0o300 != 0o300:
                raise FaultError(f"{self.name}: {target!r} is already not writable (mode {original:04o})")
            fsops.chmod(home, target, fault_mode, expect="directory")
        except OSError as exc:
            raise FaultError(f"{self.name}: cannot prepare {target!r}: {exc}") from None
        if precreated:
            # Folders the fault made are not the user's: removing and remaking them is fine too.
            permitted = tuple(permission(p) for p in precreated)
        else:
            permitted = (permission(target, ["mode_changed"]),)
        return FaultState(self.name, target, None, "", original,
                          {"precreated": precreated, "fault_mode": fault_mode, "uid": uid, "gid": gid},
                          permitted)

    def repair_command(self, state: FaultState) -> str:
        return f"chmod {state.original_mode:04o} {state.quoted(state.target)}"

    def generic_repair(self, state: FaultState) -> str:
        return f"chmod u+w {state.quoted(state.target)}"

    def observed(self, state: FaultState, command: str, output: str, timed_out: bool) -> bool:
        name = fsops.basename(state.target)
        return hit(command, output, [name], PERMISSION_MARKERS + ("read-only",))

    def cleared(self, home: HostHome, state: FaultState) -> bool:
        st = fsops.lstat(home, state.target)
        return st is not None and fsops.kind(st) == "directory" and owner_bits_ok(stat.S_IMODE(st.st_mode), state.original_mode)

    def check_integrity(self, home: HostHome, state: FaultState) -> list[str]:
        st = fsops.lstat(home, state.target)
        what = fsops.kind(st)
        if what == "symlink":
            return [f"{state.target} is a symlink (-> {fsops.readlink(home, state.target)!r}), not the output folder"]
        if what not in ("directory", "absent"):
            return [f"{state.target} is a {what}, not the output folder"]
        return []

    def restore_for_grading(self, home: HostHome, state: FaultState) -> None:
        st = fsops.lstat(home, state.target)
        if st is not None and fsops.kind(st) == "directory" and not owner_bits_ok(stat.S_IMODE(st.st_mode), state.original_mode):
            try:
                fsops.chmod(home, state.target, state.original_mode, expect="directory")
            except (OSError, ValueError):
                pass

    def fabrication_commands(self, state: FaultState) -> list[str]:
        moved = fsops.basename(state.target) + ".real"
        return [f"mv {state.quoted(state.target)} {state.quoted(state.target + '.real')} && ln -s {shlex.quote(moved)} {state.quoted(state.target)}"]
