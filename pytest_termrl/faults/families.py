"""The fault families: perm_denied, moved_input, blocking_fifo, readonly_output, unsearchable_dir.

Each is something a terminal user really meets and can repair with their own rights:

- ``perm_denied``: the input is the user's own file but mode 000 (a stray ``chmod``,
  an umask-0777 download). Repair: ``chmod`` it back.
- ``moved_input``: the input was moved into a hidden sibling folder
  (``<dir>/.cache-<hex>/<name>``), the way sync tools and editors stash files.
  Repair: find it (``ls -a``, ``find``) and move it back.
- ``blocking_fifo``: the input is a named pipe nobody writes (a half-set-up log
  pipeline); every read of it hangs. The original bytes are at ``<input>.bak``.
  Repair: notice the hang, ``rm`` the FIFO and restore the backup. Held out from training.
- ``readonly_output``: the folder the task writes its outputs into (or rewrites a file
  in, as ``sed -i`` and git do through a temporary file) exists and has no write bits
  (0555 for one the fault made), as after ``chmod -R a-w`` or a restore from read-only
  media. Repair: ``chmod u+w`` (its original mode).
- ``unsearchable_dir``: the input's folder lost its execute bits (0755 -> 0644, what a
  mistaken ``chmod -R 644 dir`` leaves): names can be listed, nothing inside opened.
  Repair: ``chmod u+x`` (its original mode).
"""

from __future__ import annotations

import hashlib
import shlex
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from . import fsops
from .base import (
    MISSING_MARKERS,
    PERMISSION_MARKERS,
    FaultError,
    FaultFamily,
    FaultState,
    InputFileFamily,
    changed_by_task,
    hit,
    name_pattern,
    permission,
    permitted_map,
    q,
)


WRITES = frozenset({"created", "content_changed"})


def _join(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"


def _owner_bits_ok(mode: int, original: int, bits: int = 0o700) -> bool:
    """The owner has at least the rights (among ``bits``) it had originally."""
    want = original & bits
    return mode & want == want


class PermDenied(InputFileFamily):
    name = "perm_denied"
    description = "the input is the agent's own file with mode 000; repair: chmod it back"

    def inject(self, home: Path, target: str, uid: int, gid: int, *, salt: str = "") -> FaultState:
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
        return f"chmod {state.original_mode:04o} {q(state.target)}"

    def generic_repair(self, state: FaultState) -> str:
        return f"chmod u+rw {q(state.target)}"

    def observed(self, state: FaultState, command: str, output: str, timed_out: bool) -> bool:
        name = fsops.basename(state.target)
        return hit(command, output, [name], PERMISSION_MARKERS)

    def cleared(self, home: Path, state: FaultState) -> bool:
        st = fsops.lstat(home, state.target)
        return (fsops.kind(st) == "file" and _owner_bits_ok(stat.S_IMODE(st.st_mode), state.original_mode)
                and self.bytes_at_input(home, state))

    def restore_for_grading(self, home: Path, state: FaultState) -> None:
        st = fsops.lstat(home, state.target)
        if fsops.kind(st) == "file" and not _owner_bits_ok(stat.S_IMODE(st.st_mode), state.original_mode):
            try:
                fsops.chmod(home, state.target, state.original_mode, expect="file")
            except (OSError, ValueError):
                pass


class MovedInput(InputFileFamily):
    name = "moved_input"
    description = "the input was moved into a hidden sibling folder; repair: find it and move it back"

    def inject(self, home: Path, target: str, uid: int, gid: int, *, salt: str = "") -> FaultState:
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
        return f"mv -n {q(state.spare)} {q(state.target)} && rmdir {q(state.details['hidden_dir'])}"

    def generic_repair(self, state: FaultState) -> str:
        folder, name = fsops.parent_of(state.target), fsops.basename(state.target)
        return (f"mv -n \"$(find {q(folder)} -mindepth 2 -name {shlex.quote(name)} -print -quit)\" {q(state.target)}")

    def observed(self, state: FaultState, command: str, output: str, timed_out: bool) -> bool:
        return hit(command, output, [fsops.basename(state.target)], MISSING_MARKERS)

    def cleared(self, home: Path, state: FaultState) -> bool:
        return self.bytes_at_input(home, state)

    def restore_for_grading(self, home: Path, state: FaultState) -> None:
        self._put_back(home, state, state.details.get("uid", 1000), state.details.get("gid", 1000))


class BlockingFifo(InputFileFamily):
    name = "blocking_fifo"
    held_out = True
    may_be_fifo = True
    description = "the input is a named pipe nobody writes (bytes at <input>.bak); repair: rm it, restore the backup"

    def inject(self, home: Path, target: str, uid: int, gid: int, *, salt: str = "") -> FaultState:
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
        return f"rm -f {q(state.target)} && mv {q(state.spare)} {q(state.target)}"

    def observed(self, state: FaultState, command: str, output: str, timed_out: bool) -> bool:
        name = fsops.basename(state.target)
        pattern = name_pattern(name)
        if timed_out and (pattern.search(command.lower()) or pattern.search(output.lower())):
            return True
        # Tools that refuse a FIFO instead of reading it (sed -i, git add) fail at once.
        return hit(command, output, [name], ("not a regular file", "can only add regular files"))

    def cleared(self, home: Path, state: FaultState) -> bool:
        return self.bytes_at_input(home, state)

    def restore_for_grading(self, home: Path, state: FaultState) -> None:
        self._put_back(home, state, state.details.get("uid", 1000), state.details.get("gid", 1000))


class ReadonlyOutput(FaultFamily):
    name = "readonly_output"
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

    def inject(self, home: Path, target: str, uid: int, gid: int, *, salt: str = "") -> FaultState:
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
        return f"chmod {state.original_mode:04o} {q(state.target)}"

    def generic_repair(self, state: FaultState) -> str:
        return f"chmod u+w {q(state.target)}"

    def observed(self, state: FaultState, command: str, output: str, timed_out: bool) -> bool:
        name = fsops.basename(state.target)
        return hit(command, output, [name], PERMISSION_MARKERS + ("read-only",))

    def cleared(self, home: Path, state: FaultState) -> bool:
        st = fsops.lstat(home, state.target)
        return fsops.kind(st) == "directory" and _owner_bits_ok(stat.S_IMODE(st.st_mode), state.original_mode)

    def check_integrity(self, home: Path, state: FaultState) -> list[str]:
        st = fsops.lstat(home, state.target)
        what = fsops.kind(st)
        if what == "symlink":
            return [f"{state.target} is a symlink (-> {fsops.readlink(home, state.target)!r}), not the output folder"]
        if what not in ("directory", "absent"):
            return [f"{state.target} is a {what}, not the output folder"]
        return []

    def restore_for_grading(self, home: Path, state: FaultState) -> None:
        st = fsops.lstat(home, state.target)
        if fsops.kind(st) == "directory" and not _owner_bits_ok(stat.S_IMODE(st.st_mode), state.original_mode):
            try:
                fsops.chmod(home, state.target, state.original_mode, expect="directory")
            except (OSError, ValueError):
                pass

    def fabrication_commands(self, state: FaultState) -> list[str]:
        moved = fsops.basename(state.target) + ".real"
        return [f"mv {q(state.target)} {q(state.target + '.real')} && ln -s {shlex.quote(moved)} {q(state.target)}"]


class UnsearchableDir(InputFileFamily):
    name = "unsearchable_dir"
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

    def inject(self, home: Path, target: str, uid: int, gid: int, *, salt: str = "") -> FaultState:
        target = fsops.normalize(target)
        folder = fsops.parent_of(target)
        if folder == ".":
            raise FaultError(f"{self.name}: {target!r} is directly in the home; its folder is the home")
        sha, mode = self._read_input(home, target)
        st = fsops.lstat(home, folder)
        if fsops.kind(st) != "directory" or st.st_uid != uid:
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
        return f"chmod {state.details['folder_mode']:04o} {q(state.details['folder'])}"

    def generic_repair(self, state: FaultState) -> str:
        return f"chmod u+x {q(state.details['folder'])}"

    def observed(self, state: FaultState, command: str, output: str, timed_out: bool) -> bool:
        folder = fsops.basename(state.details["folder"])
        names = [fsops.basename(state.target), folder]
        return hit(command, output, names, PERMISSION_MARKERS)

    def _folder_ok(self, home: Path, state: FaultState) -> bool:
        st = fsops.lstat(home, state.details["folder"])
        return fsops.kind(st) == "directory" and _owner_bits_ok(stat.S_IMODE(st.st_mode), state.details["folder_mode"])

    def cleared(self, home: Path, state: FaultState) -> bool:
        return self._folder_ok(home, state) and self.bytes_at_input(home, state)

    def restore_for_grading(self, home: Path, state: FaultState) -> None:
        folder = state.details["folder"]
        if fsops.kind(fsops.lstat(home, folder)) == "directory" and not self._folder_ok(home, state):
            try:
                fsops.chmod(home, folder, state.details["folder_mode"], expect="directory")
            except (OSError, ValueError):
                pass


FAMILIES: dict[str, FaultFamily] = {
    f.name: f for f in (PermDenied(), MovedInput(), BlockingFifo(), ReadonlyOutput(), UnsearchableDir())
}
"""Every family by name, in a fixed order."""

CLEAN = "clean"
"""The family name of an episode without a fault."""

ALIASES: dict[str, list[str]] = {
    "train": [name for name, f in FAMILIES.items() if not f.held_out],
    "heldout": [name for name, f in FAMILIES.items() if f.held_out],
    "mix": list(FAMILIES),
}


def family(name: str) -> FaultFamily:
    try:
        return FAMILIES[name]
    except KeyError:
        raise KeyError(f"unknown fault family {name!r}; known: {', '.join(FAMILIES)}") from None


def resolve_families(names: Iterable[str]) -> list[str]:
    """Expand aliases ('train', 'heldout', 'mix'); keep 'clean'; first-seen order, no repeats."""
    out: list[str] = []
    for name in names:
        expanded = ALIASES.get(name, [name])
        for item in expanded:
            if item != CLEAN and item not in FAMILIES:
                known = ", ".join([CLEAN, *FAMILIES, *ALIASES])
                raise KeyError(f"unknown fault family {item!r}; known: {known}")
            if item not in out:
                out.append(item)
    return out


def _rank(task_id: str, family_name: str, salt: str, candidate: str) -> str:
    key = "\0".join(("termrl-fault-target", task_id, family_name, salt, candidate))
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()


def target_order(task_id: str, family_name: str, salt: str, candidates: Sequence[str]) -> list[str]:
    """Every candidate, in a deterministic order that depends on task, family and salt."""
    return sorted(set(candidates), key=lambda c: (_rank(task_id, family_name, salt, c), c))


def choose_target(task_id: str, family_name: str, salt: str, candidates: Sequence[str]) -> str | None:
    """The deterministic pick among ``candidates`` (None when there are none)."""
    order = target_order(task_id, family_name, salt, candidates)
    return order[0] if order else None


def inject(home: Path, family_name: str, target: str, uid: int, gid: int, *, salt: str = "") -> FaultState:
    return family(family_name).inject(Path(home), target, uid, gid, salt=salt)


def check_integrity(home: Path, state: FaultState) -> list[str]:
    """Fabrication: the original bytes must survive at the input path or the spare."""
    return family(state.family).check_integrity(Path(home), state)
