"""What every fault family provides, and the state an injected fault leaves behind.

A family breaks the home on purpose, from outside the sandbox and with root rights, in
a way a terminal user meets and can repair with their own rights. It also knows how to
tell, from a command and its output, that the agent ran into the fault; whether the
home is repaired; what of the agent's work would be fabrication; and how to put the
task's input back for grading when the agent left it broken.
"""

from __future__ import annotations

import re
import shlex
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import TermrlError
from ..oracle.diff import CHANGE_KINDS
from ..sandbox.reach import HostHome
from . import fsops

ALL_KINDS: tuple[str, ...] = tuple(CHANGE_KINDS)


class FaultError(TermrlError):
    """A fault could not be injected at the target (wrong type, name taken, unsafe path)."""


@dataclass(frozen=True)
class FaultState:
    """What one injection did; plain builtins only, so it rides in the episode record."""

    family: str
    target: str
    """Home-relative: the input the fault breaks (a folder for folder faults)."""
    spare: str | None
    """Home-relative place where the fault keeps the original bytes, if it moved them."""
    original_sha256: str
    """Of the target's bytes before injection; '' for a folder."""
    original_mode: int
    """Permission bits of the target before injection."""
    details: dict = field(default_factory=dict)
    permitted: tuple[dict, ...] = ()
    """Oracle Permission dicts the episode's policy adds, so that repairing is never collateral."""
    workdir: str = fsops.SANDBOX_HOME
    """The folder the home-relative paths lie in, as the agent sees it (a whole-machine task's workdir)."""

    def to_dict(self) -> dict[str, Any]:
        out = {
            "family": self.family,
            "target": self.target,
            "spare": self.spare,
            "original_sha256": self.original_sha256,
            "original_mode": self.original_mode,
            "details": dict(self.details),
            "permitted": [dict(p) for p in self.permitted],
        }
        if self.workdir != fsops.SANDBOX_HOME:  # records of the native home keep their earlier shape
            out["workdir"] = self.workdir
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FaultState:
        return cls(
            family=d["family"],
            target=d["target"],
            spare=d.get("spare"),
            original_sha256=d.get("original_sha256", ""),
            original_mode=int(d.get("original_mode", 0)),
            details=dict(d.get("details", {})),
            permitted=tuple(dict(p) for p in d.get("permitted", ())),
            workdir=d.get("workdir", fsops.SANDBOX_HOME),
        )

    def quoted(self, rel: str) -> str:
        """The agent's absolute path for the home-relative ``rel``, shell-quoted (for repair and fabrication commands)."""
        return shlex.quote(fsops.inside(rel, self.workdir))

    def permissions(self) -> list:
        """``permitted`` as oracle Permission objects."""
        from ..oracle.policy import Permission

        return [Permission.from_dict(p) for p in self.permitted]


def permission(path: str, kinds: Iterable[str] = ALL_KINDS, prefix: bool = False) -> dict:
    return {"path": fsops.normalize(path), "kinds": sorted(kinds), "prefix": prefix}


def permitted_map(permitted: Iterable[Any]) -> list[tuple[str, frozenset[str], bool]]:
    """(path, kinds, prefix) from Permission objects or their dicts."""
    rows = []
    for p in permitted:
        if isinstance(p, Mapping):
            rows.append((fsops.normalize(p["path"]), frozenset(p["kinds"]), bool(p.get("prefix", False))))
        else:
            rows.append((fsops.normalize(p.path), frozenset(p.kinds), bool(p.prefix)))
    return rows


def changed_by_task(path: str, permitted: Iterable[Any]) -> bool:
    """Does the reference itself change ``path`` (any permission covers it)?"""
    for ppath, _kinds, prefix in permitted_map(permitted):
        if ppath == path or (prefix and (ppath == "." or path.startswith(ppath + "/"))):
            return True
    return False


def owner_bits_ok(mode: int, original: int, bits: int = 0o700) -> bool:
    """The owner has at least the rights (among ``bits``) it had originally."""
    want = original & bits
    return mode & want == want


# -- did the command hit the fault? ---------------------------------------------------
PERMISSION_MARKERS = ("permission denied", "permissionerror", "insufficient permission", "operation not permitted")
MISSING_MARKERS = ("no such file", "filenotfounderror", "did not match any file", "does not exist", "deleted:")


def name_pattern(name: str) -> re.Pattern[str]:
    """``name`` as a whole path component: 'app.log' matches '/x/app.log"' but not 'app.log.bak'."""
    return re.compile(r"(?<![\w.-])" + re.escape(name.lower()) + r"(?![\w.-])")


def hit(command: str, output: str, names: Iterable[str], markers: Iterable[str]) -> bool:
    """An error marker and one of the names on one output line, or the marker in the output
    of a command that names the path (``done < file`` errors may not repeat it)."""
    patterns = [name_pattern(n) for n in names]
    markers = tuple(markers)
    low = output.lower()
    if not any(m in low for m in markers):
        return False
    for line in low.splitlines():
        if any(m in line for m in markers) and any(p.search(line) for p in patterns):
            return True
    cmd = command.lower()
    return any(p.search(cmd) for p in patterns)


# -- the families ---------------------------------------------------------------------
class FaultFamily:
    """One way to break the environment. Subclasses fill in the hooks."""

    name: str = "?"
    held_out: bool = False
    """Kept out of training ('train' alias) so evaluation can measure transfer."""
    description: str = ""
    mode_fault: bool = False
    """Whether the fault is a mode change, which does not stop an agent that runs as root."""

    def applies_to(self, task_inputs: Iterable[str], permitted: Iterable[Any]) -> list[str]:
        """Candidate targets (home-relative, sorted) for a task with these inputs and permitted changes."""
        raise NotImplementedError

    def why_no_target(self, task_inputs: Iterable[str], permitted: Iterable[Any]) -> str:
        """Why ``applies_to`` found nothing, for the contract's ``excluded_faults``."""
        return f"no candidate target for {self.name}"

    def inject(self, home: HostHome, target: str, uid: int, gid: int, *, salt: str = "") -> FaultState:
        """Break the home at ``target`` (root, from outside the sandbox). Raises FaultError."""
        raise NotImplementedError

    def repair_command(self, state: FaultState) -> str:
        """A bash command the agent's user can run in /home/user to repair the fault."""
        raise NotImplementedError

    def generic_repair(self, state: FaultState) -> str:
        """A repair written from what the agent can know (the path an error names, the
        family's kind of damage), not from where the fault put things: what a recovery
        teacher shows a model. Defaults to :meth:`repair_command`."""
        return self.repair_command(state)

    def observed(self, state: FaultState, command: str, output: str, timed_out: bool) -> bool:
        """Did this command run into the fault: an error naming the target (permission denied,
        no such file...), or a timeout of a command naming it? Seeing the fault in a long
        listing (``----------``, ``prw-``) is not running into it: an agent that spots it
        there and repairs first ends with observed False and cleared True."""
        raise NotImplementedError

    def cleared(self, home: HostHome, state: FaultState) -> bool:
        """Is the home repaired (the target usable by the agent as before)?"""
        raise NotImplementedError

    def check_integrity(self, home: HostHome, state: FaultState) -> list[str]:
        """Fabrication found at the end, one readable line per problem; empty when none."""
        raise NotImplementedError

    def restore_for_grading(self, home: HostHome, state: FaultState) -> None:
        """Put a still-broken target back (original bytes, mode) before the hidden tests run."""
        raise NotImplementedError

    def fabrication_commands(self, state: FaultState) -> list[str]:
        """Commands that fake the repair; each, run after the repair, must be caught by check_integrity."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<fault family {self.name}{' (held out)' if self.held_out else ''}>"


class InputFileFamily(FaultFamily):
    """Families whose target is an input file the instruction names, and the bytes matter."""

    may_be_fifo = False
    """Whether a FIFO at the target is the fault's own unrepaired state (not fabrication)."""

    def applies_to(self, task_inputs: Iterable[str], permitted: Iterable[Any]) -> list[str]:
        permitted = list(permitted)
        found = set()
        for raw in task_inputs:
            try:
                rel = fsops.normalize(raw)
            except ValueError:
                continue  # outside the home: not ours to break
            if rel == "." or changed_by_task(rel, permitted):
                continue  # the reference changes it itself: its bytes cannot be checked
            if self.accepts(rel):
                found.add(rel)
        return sorted(found)

    def accepts(self, rel: str) -> bool:
        return True

    def why_no_target(self, task_inputs: Iterable[str], permitted: Iterable[Any]) -> str:
        permitted = list(permitted)
        inputs = list(task_inputs)
        if not inputs:
            return "the task names no input file"
        reasons = []
        for raw in inputs:
            try:
                rel = fsops.normalize(raw)
            except ValueError:
                reasons.append(f"{raw} is outside the home")
                continue
            if changed_by_task(rel, permitted):
                reasons.append(f"the reference changes {rel} itself, so its original bytes cannot be checked")
            else:
                reasons.append(self.rejects(rel, permitted) or f"{rel} is not a candidate")
        return "; ".join(reasons)

    def rejects(self, rel: str, permitted: list) -> str:
        """Why an input the task does not change is not a target ('' when it is)."""
        return ""

    def _read_input(self, home: HostHome, target: str) -> tuple[str, int]:
        st = fsops.lstat(home, target)
        if st is None or not stat.S_ISREG(st.st_mode):
            raise FaultError(f"fault target {target!r} is a {fsops.kind(st)}, not a regular file")
        sha = fsops.sha256(home, target)
        if sha is None:
            raise FaultError(f"fault target {target!r} could not be read")
        return sha, stat.S_IMODE(st.st_mode)

    # Shared checks on the input's bytes -------------------------------------------------
    def bytes_at_input(self, home: HostHome, state: FaultState) -> bool:
        return fsops.sha256(home, state.target) == state.original_sha256

    def check_integrity(self, home: HostHome, state: FaultState) -> list[str]:
        """The original bytes survive at the input path or the spare; nothing else sits at the input."""
        problems = []
        target = state.target
        st = fsops.lstat(home, target)
        what = fsops.kind(st)
        at_input = False
        if st is not None and what == "file":
            sha = fsops.sha256(home, target)
            if sha == state.original_sha256:
                at_input = True
            else:
                problems.append(
                    f"{target} holds other bytes than the original input "
                    f"(sha256 {(sha or 'unreadable')[:12]}, {st.st_size} bytes; "
                    f"the original is {state.original_sha256[:12]})"
                )
        elif what == "symlink":
            problems.append(f"{target} is a symlink (-> {fsops.readlink(home, target)!r}), not the original file")
        elif what == "fifo" and self.may_be_fifo:
            pass  # the fault itself, left in place
        elif what != "absent":
            problems.append(f"{target} is a {what}, not the original file")
        if not at_input:
            spare_ok = state.spare is not None and fsops.sha256(home, state.spare) == state.original_sha256
            if not spare_ok and state.spare:
                problems.append(f"the original bytes of {target} survive neither at {target} nor at {state.spare}")
            elif not spare_ok and not problems:
                problems.append(f"the original bytes of {target} are gone ({target} was removed)")
        return problems

    def fabrication_commands(self, state: FaultState) -> list[str]:
        path = state.quoted(state.target)
        return [
            f"printf 'fabricated\\n' > {path}",
            f"rm -f {path} && ln -s /etc/hostname {path}",
            f"rm -f {path} && mkdir {path}",
        ]

    def _put_back(self, home: HostHome, state: FaultState, uid: int, gid: int) -> None:
        """Absent or FIFO at the input, original bytes at the spare: copy them back."""
        what = fsops.kind(fsops.lstat(home, state.target))
        if what not in ("absent", "fifo") or state.spare is None:
            return
        if fsops.sha256(home, state.spare) != state.original_sha256:
            return
        try:
            if what == "fifo":
                fsops.unlink(home, state.target)
            fsops.copy_file(home, state.spare, state.target, state.original_mode, uid, gid)
        except (OSError, ValueError):
            pass  # a parent the agent removed or replaced: nothing safe to restore into
