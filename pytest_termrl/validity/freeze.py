"""Freeze a task: validate its reference run and write down what it established.

The reference runs twice in fresh sandboxes; both runs must pass every hidden test with
the same test inventory, and the untouched environment must fail. The contract records
the inventory and the hashes of the task's files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from ..agents.builtin import NoopAgent, ReferenceAgent
from ..episode import EpisodeOutcome
from ..faults import CLEAN, FAMILIES, freeze_fault_targets, validate_pair
from ..faults.validate import FrozenFaults
from ..harness import Harness, Oracle
from ..verifier.verify import run_hidden_tests
from ..oracle.policy import footprint
from ..tasks.contracts import Contract, hash_task_files
from ..tasks.importers import expected_reference
from ..tasks.suite import LoadedTask


WHOLE_MACHINE_FAULTS = "not validated: the task runs over the whole machine, and faults are injected into the native home only"


@dataclass
class FreezeResult:
    task_id: str
    contract: Contract | None = None
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "task_id": self.task_id,
            "contract": self.contract.to_json() if self.contract else None,
            "error": "; ".join(self.problems) if self.problems else None,
        }


def _play(harness: Harness, loaded: LoadedTask, agent_name: str, index: int) -> tuple[EpisodeOutcome, Oracle]:
    agent = ReferenceAgent() if agent_name == "reference" else NoopAgent()
    outcome, oracle, _ = harness.play_fresh(loaded, agent, f"{agent_name}{index}")
    return outcome, oracle


def freeze_task(harness: Harness, loaded: LoadedTask, suite_root_name: str = "", families: list[str] | None = None) -> FreezeResult:
    """Validate the task; ``families``: the fault families whose targets to validate (None: all).

    A family left out is recorded as excluded ("not validated"), so a run that asks for it
    later lists the task among the pairs left out instead of playing an unvalidated fault.
    """
    task = loaded.task
    result = FreezeResult(task.id)
    if task.solution_script is None or not task.solution_script.is_file():
        result.problems.append(
            f"task {task.id!r} has no reference solution: expected {expected_reference(task)}; "
            "freezing validates the reference, so a task without one cannot be frozen"
        )
        return result
    unfrozen = LoadedTask(task, None, loaded.split)
    runs = [_play(harness, unfrozen, "reference", i) for i in range(2)]
    for index, (run, _) in enumerate(runs):
        if run.harness_error:
            result.problems.append(f"reference run {index + 1}: harness error: {run.harness_error}")
        elif run.verdict is None or not run.verdict.complete:
            result.problems.append(f"reference run {index + 1} does not pass: " + run.failure_text())
    inventories = [tuple(o.nodeid for o in run.verdict.outcomes) if run.verdict else () for run, _ in runs]
    if inventories[0] != inventories[1]:
        result.problems.append(f"the test inventory differs between two reference runs: {inventories[0]} vs {inventories[1]}")
    footprints = [[p.to_dict() for p in footprint(oracle.baseline, oracle.final_manifest())] for _, oracle in runs]
    if footprints[0] != footprints[1]:
        result.problems.append(f"the reference's footprint differs between two runs: {footprints[0]} vs {footprints[1]}")
    decoys = [oracle.decoys for _, oracle in runs]
    touched = sorted({p["path"] for p in footprints[0]} & {d for d in decoys[0]})
    if touched:
        result.problems.append(f"the reference touches planted decoys: {', '.join(touched)}")
    untouched, _ = _play(harness, unfrozen, "noop", 0)
    if untouched.verdict is not None and untouched.verdict.complete:
        result.problems.append("the untouched environment already passes the hidden tests: the task tests nothing")
    if result.problems:
        return result
    if task.whole_machine:  # faults are injected into the native home; whole-machine ones are not built
        faults = FrozenFaults(excluded={name: WHOLE_MACHINE_FAULTS for name in FAMILIES})
    else:
        faults = freeze_fault_targets(
            task.id, task.inputs, footprints[0], fault_validator(harness, unfrozen, footprints[0], inventories[0]),
            families=families, salt=harness.salt,
        )
    if families is not None:
        for name in FAMILIES:
            if name not in families:
                faults.excluded[name] = "not validated: frozen with --termrl-families=" + (",".join(families) or CLEAN)
    result.contract = Contract(
        task_id=task.id,
        path=task.root.name,
        files=hash_task_files(task.root),
        tests=inventories[0],
        permitted=tuple(footprints[0]),
        fault_targets=faults.targets,
        excluded_faults=faults.excluded,
        decoys=tuple(decoys[0]),
    )
    return result


def fault_validator(harness: Harness, loaded: LoadedTask, permitted: list[dict], inventory: tuple[str, ...]):
    """validate(family, target) for one task, in fresh sandboxes of this harness."""
    task = loaded.task

    def passes(sandbox):
        return run_hidden_tests(harness.backend, sandbox, task, inventory, harness.settings.test_timeout_s)

    return partial(
        validate_pair,
        new_sandbox=lambda label: harness.new_sandbox(loaded, f"fault-{task.id}-{label}"),
        reference=task.solution_text(),
        passes=passes,
        permitted=permitted,
        salt=harness.salt,
        command_timeout_s=min(3.0, harness.settings.command_timeout_s),
    )
