"""Validation of one (task, fault family, target) pair, and the freeze's choice of targets.

A pair is valid when, in real sandboxes:

1. the fault breaks the reference: injected, the reference run, the input put back for
   grading as in an episode, the hidden tests fail (whether ``observed`` saw that run is
   recorded, and noted when not: some references fail silently);
2. the generic repair, run as the agent, clears the fault and brings the original
   bytes back to the input path without a fabrication report; the reference then
   passes; and (given the task's permitted changes) repair + reference change nothing
   the episode's policy (task permissions + the fault's) does not permit;
3. every fabrication command of the family (overwriting the input with other bytes,
   a symlink or a folder in its place), run after the repair, is caught by
   ``check_integrity``.

It is written against two callables so it does not depend on the plugin or the harness:
``new_sandbox(label)`` returns a prepared sandbox (environment copied, setup run) that
the validation closes, and ``passes(sandbox)`` runs the hidden tests on it and returns
whether they all passed (a bool, or the Verdict itself, whose failures then go into
``evidence``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..oracle.diff import diff_manifests
from ..oracle.manifest import take_manifest
from ..oracle.policy import Permission, Policy, rooted
from ..oracle.record_monitor import RecordMonitor
from ..sandbox.base import Sandbox
from . import fsops
from .base import FaultError, FaultFamily, FaultState, InputFileFamily
from .families import FAMILIES, family, inject_into, target_order

NewSandbox = Callable[[str], Sandbox]
Passes = Callable[[Sandbox], Any]
"""Runs the hidden tests on a sandbox: a bool, or a Verdict (anything with ``.complete``)."""


def _graded(outcome: Any) -> tuple[bool, str]:
    """(all passed, what failed) from a bool or a Verdict-like object."""
    if isinstance(outcome, bool) or not hasattr(outcome, "complete"):
        return bool(outcome), ""
    if outcome.complete:
        return True, ""
    if getattr(outcome, "error", None):
        return False, f"verifier error: {outcome.error}"
    failed = [f"{o.nodeid} {o.outcome}" for o in getattr(outcome, "outcomes", []) if o.outcome != "passed"]
    return False, "; ".join(failed + list(getattr(outcome, "problems", [])))


@dataclass
class FaultValidation:
    family: str
    target: str
    breaks_reference: bool = False
    observed_by_reference: bool = False
    repair_clears: bool = False
    bytes_restored: bool | None = None
    """None for families whose target is a folder, not an input's bytes."""
    repaired_reference_passes: bool = False
    repair_collateral: list[str] = field(default_factory=list)
    fabrication_caught: dict[str, list[str]] = field(default_factory=dict)
    """Fabrication command -> what check_integrity reported (empty: missed)."""
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What is worth knowing but does not invalidate the pair (a silent failure of the reference)."""
    evidence: list[str] = field(default_factory=list)
    """Command outputs behind problems and notes. Kept apart: problems are stable text, so a
    contract's ``excluded_faults`` freezes byte for byte (outputs hold temp names, pids)."""
    state: dict | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "target": self.target,
            "ok": self.ok,
            "breaks_reference": self.breaks_reference,
            "observed_by_reference": self.observed_by_reference,
            "repair_clears": self.repair_clears,
            "bytes_restored": self.bytes_restored,
            "repaired_reference_passes": self.repaired_reference_passes,
            "repair_collateral": list(self.repair_collateral),
            "fabrication_caught": {k: list(v) for k, v in self.fabrication_caught.items()},
            "problems": list(self.problems),
            "notes": list(self.notes),
            "evidence": list(self.evidence),
            "state": self.state,
        }


def _tail(text: str, n: int = 300) -> str:
    text = text.strip()
    return text if len(text) <= n else "..." + text[-n:]


def validate_pair(
    family_name: str,
    target: str,
    *,
    new_sandbox: NewSandbox,
    reference: str,
    passes: Passes,
    permitted: Iterable[dict] | None = None,
    salt: str = "",
    command_timeout_s: float = 10.0,
) -> FaultValidation:
    """Run the three validations of one pair; see the module docstring."""
    fam = family(family_name)
    result = FaultValidation(fam.name, fsops.normalize(target))
    problems = result.problems
    try:
        _breaks(fam, result, new_sandbox, reference, passes, salt, command_timeout_s)
        if problems:
            return result
        _repairs(fam, result, new_sandbox, reference, passes, permitted, salt, command_timeout_s)
        _fabrications(fam, result, new_sandbox, salt, command_timeout_s)
    except FaultError as exc:
        problems.append(f"cannot inject: {exc}")
    return result


def _inject(fam: FaultFamily, sandbox: Sandbox, target: str, salt: str) -> FaultState:
    return inject_into(sandbox, fam.name, target, salt=salt)


class _Watch:
    """What repair + reference change that the policy does not permit: a manifest of the native home, or a whole
    machine's change record (the policy's home-relative paths then lie in its workdir)."""

    def __init__(self, sandbox: Sandbox, permissions: list[Permission], workdir: str) -> None:
        self.record = sandbox.change_record()
        self.sandbox = sandbox
        if self.record is not None:
            self.monitor = RecordMonitor.start(self.record, Policy(rooted(p, workdir) for p in permissions), [])
        else:
            self.policy = Policy(permissions)
            self.baseline = take_manifest(sandbox.home, full=True)

    def collateral(self) -> list[str]:
        if self.record is not None:
            self.monitor.finish()
            return [f"{c.path}: {c.kind}" for c in self.monitor.tracker.collateral]
        final = take_manifest(self.sandbox.home, full=True)
        return [f"{c.path}: {c.kind} {c.detail()}".rstrip() for c in diff_manifests(self.baseline, final)
                if c.kind != "created" and not self.policy.permits(c)]


def _breaks(fam, result, new_sandbox, reference, passes, salt, timeout) -> None:
    problems = result.problems
    sandbox = new_sandbox(f"fault-{fam.name}-breaks")
    try:
        state = _inject(fam, sandbox, result.target, salt)
        result.state = state.to_dict()
        with sandbox.reach_home() as home:
            root = home.root
            if fam.cleared(home.path, state):
                problems.append("the home counts as repaired right after the injection")
            early = fam.check_integrity(home.path, state)
        if early:
            problems.append("the integrity check reports fabrication right after the injection: " + "; ".join(early))
        run = sandbox.run(reference, timeout)
        result.observed_by_reference = fam.observed(state, reference, run.output, run.timed_out)
        sandbox.stop_processes()
        with sandbox.reach_home() as home:
            fam.restore_for_grading(home.path, state)
        passed, _ = _graded(passes(sandbox))
        result.breaks_reference = not passed
    finally:
        sandbox.close()
    if not result.breaks_reference:
        why = " (the agent runs as root, whose privileges a mode change does not stop)" if root and fam.mode_fault else ""
        problems.append("the fault does not break the reference: its hidden tests still pass" + why)
    elif not result.observed_by_reference:
        # Not a defect of the pair: the reference may fail silently (git commits the input's
        # deletion). Such an episode's 'observed' depends on the agent looking (git status).
        what = "timed out" if run.timed_out else f"exit {run.exit_code}"
        result.notes.append(f"the reference fails without output that shows the fault ({what})")
        result.evidence.append(f"reference output with the fault: {_tail(run.output)!r}")


def _repairs(fam, result, new_sandbox, reference, passes, permitted, salt, timeout) -> None:
    problems = result.problems
    sandbox = new_sandbox(f"fault-{fam.name}-repair")
    try:
        state = _inject(fam, sandbox, result.target, salt)
        watch = None
        if permitted is not None:
            watch = _Watch(sandbox, [*(Permission.from_dict(p) for p in permitted), *state.permissions()], state.workdir)
        command = fam.repair_command(state)
        repair = sandbox.run(command, timeout)
        if repair.exit_code != 0:
            problems.append(f"the generic repair {command!r} failed (exit {repair.exit_code})")
            result.evidence.append(f"repair output: {_tail(repair.output)!r}")
        with sandbox.reach_home() as home:
            result.repair_clears = fam.cleared(home.path, state)
            if isinstance(fam, InputFileFamily):
                result.bytes_restored = fsops.sha256(home.path, state.target) == state.original_sha256
            integrity = fam.check_integrity(home.path, state)
        if not result.repair_clears:
            problems.append(f"after the generic repair {command!r} the home does not count as repaired")
        if result.bytes_restored is False:
            problems.append(f"after the generic repair the original bytes are not back at {state.target}")
        if integrity:
            problems.append("after the generic repair the integrity check reports: " + "; ".join(integrity))
        run = sandbox.run(reference, timeout)
        sandbox.stop_processes()
        if watch is not None:
            result.repair_collateral = watch.collateral()
            if result.repair_collateral:
                problems.append("repair + reference change what the policy does not permit: " + "; ".join(result.repair_collateral))
        with sandbox.reach_home() as home:
            fam.restore_for_grading(home.path, state)
        result.repaired_reference_passes, failed = _graded(passes(sandbox))
        if not result.repaired_reference_passes:
            what = "timed out" if run.timed_out else f"exit {run.exit_code}"
            problems.append(f"after the generic repair the reference fails its hidden tests ({what})")
            result.evidence.append(f"reference output after the repair: {_tail(run.output)!r}")
            if failed:
                result.evidence.append(f"hidden tests after the repair: {failed}")
    finally:
        sandbox.close()


def _fabrications(fam, result, new_sandbox, salt, timeout) -> None:
    # The commands depend only on the target and spare, the same in every sandbox.
    for index, command in enumerate(fam.fabrication_commands(FaultState.from_dict(result.state))):
        sandbox = new_sandbox(f"fault-{fam.name}-fabricate{index}")
        try:
            state = _inject(fam, sandbox, result.target, salt)
            sandbox.run(fam.repair_command(state), timeout)
            run = sandbox.run(command, timeout)
            sandbox.stop_processes()
            with sandbox.reach_home() as home:
                found = fam.check_integrity(home.path, state)
        finally:
            sandbox.close()
        result.fabrication_caught[command] = found
        if not found:
            result.problems.append(f"fabrication not caught: {command!r} (exit {run.exit_code})")


# -- the freeze's choice ------------------------------------------------------------------
@dataclass
class FrozenFaults:
    targets: dict[str, str] = field(default_factory=dict)
    """family -> validated target (the contract's ``fault_targets``)."""
    excluded: dict[str, str] = field(default_factory=dict)
    """family -> why no target is valid (the contract's ``excluded_faults``)."""
    validations: list[FaultValidation] = field(default_factory=list)


def freeze_fault_targets(
    task_id: str,
    inputs: Sequence[str],
    permitted: Sequence[dict],
    validate: Callable[[str, str], FaultValidation],
    *,
    families: Iterable[str] | None = None,
    salt: str = "",
    max_tries: int = 2,
) -> FrozenFaults:
    """For each family: candidates in their deterministic order; the first that validates wins.

    ``validate(family, target)`` is typically a ``functools.partial`` of :func:`validate_pair`.
    """
    frozen = FrozenFaults()
    for name in (list(families) if families is not None else list(FAMILIES)):
        fam = family(name)
        candidates = fam.applies_to(inputs, permitted)
        if not candidates:
            frozen.excluded[name] = "no candidate target: " + fam.why_no_target(inputs, permitted)
            continue
        reasons = []
        for target in target_order(task_id, name, salt, candidates)[:max_tries]:
            validation = validate(name, target)
            frozen.validations.append(validation)
            if validation.ok:
                frozen.targets[name] = target
                break
            reasons.append(f"{target}: " + "; ".join(validation.problems))
        else:
            frozen.excluded[name] = " | ".join(reasons)
    return frozen
