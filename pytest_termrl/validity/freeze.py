"""Freeze a task: validate its reference run and write down what it established.

The reference runs twice in fresh sandboxes; both runs must pass every hidden test with
the same test inventory, and the untouched environment must fail. The contract records
the inventory and the hashes of the task's files.

A task that ships no reference may take one from recorded trials (``--termrl-reference-from``):
among its trials whose recorded reward passes, in folder order, the first whose replay passes
here twice with the same inventory and footprint becomes its reference; the contract keeps
that trial (its calls and where it came from), and ``--termrl-agent=reference`` replays it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from ..agents.base import Agent
from ..agents.builtin import NoopAgent, ReferenceAgent
from ..agents.replay import ReplayAgent
from ..episode import EpisodeOutcome
from ..faults import CLEAN, FAMILIES, freeze_fault_targets, validate_pair
from ..faults.validate import FrozenFaults
from ..harness import Harness, Oracle, frozen_reference, recorded_name
from ..verifier.verify import run_hidden_tests
from ..oracle.inferred import home_relative
from ..oracle.policy import Permission
from ..tasks.contracts import Contract, hash_task_files
from ..tasks.importers import expected_reference
from ..tasks.suite import LoadedTask
from ..trajectories.model import CallKind, RecordedTrial


KEYSTROKE_FAULTS = "not validated: the reference is a recorded trial that types keys, which a fault's validation cannot replay as one script"


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


def _play(harness: Harness, loaded: LoadedTask, agent_name: str, index: int,
          trial: RecordedTrial | None = None) -> tuple[EpisodeOutcome, Oracle]:
    agent: Agent = ReplayAgent() if trial is not None else ReferenceAgent() if agent_name == "reference" else NoopAgent()
    outcome, oracle, _ = harness.play_fresh(loaded, agent, f"{agent_name}{index}", recorded=trial)
    return outcome, oracle


def _passes_twice(harness: Harness, loaded: LoadedTask, trial: RecordedTrial | None) -> tuple[list, list[str]]:
    """Two runs of the reference (or of ``trial``): the runs with their oracles, and why they do not establish a contract."""
    runs = [_play(harness, loaded, "reference", i, trial) for i in range(2)]
    problems = []
    for index, (run, _) in enumerate(runs):
        if run.harness_error:
            problems.append(f"reference run {index + 1}: harness error: {run.harness_error}")
        elif run.verdict is None or not run.verdict.complete:
            problems.append(f"reference run {index + 1} does not pass: " + run.failure_text())
    inventories = [tuple(o.nodeid for o in run.verdict.outcomes) if run.verdict else () for run, _ in runs]
    if inventories[0] != inventories[1]:
        problems.append(f"the test inventory differs between two reference runs: {inventories[0]} vs {inventories[1]}")
    footprints = [[p.to_dict() for p in oracle.footprint()] for _, oracle in runs]
    if footprints[0] != footprints[1]:
        problems.append(f"the reference's footprint differs between two runs: {footprints[0]} vs {footprints[1]}")
    return runs, problems


def reference_from_trials(harness: Harness, loaded: LoadedTask) -> tuple[RecordedTrial | None, list, list[str]]:
    """The first recorded-passing trial of the task that passes here twice alike: (it, its two runs, why the others did not)."""
    task = loaded.task
    trials = harness.recorded.get(recorded_name(task, harness.recorded), [])
    passing = [t for t in trials if t.recorded_reward is not None and t.recorded_reward >= task.grader.reward_threshold]
    reasons = []
    for trial in passing:
        runs, problems = _passes_twice(harness, loaded, trial)
        if not problems:
            return trial, runs, []
        reasons.append(f"trial {trial.trial}: " + "; ".join(problems))
    if not passing:
        reasons.append(f"none of its {len(trials)} recorded trial(s) has a passing reward" if trials else "no recorded trial of it was given")
    return None, [], reasons


def reference_script(loaded: LoadedTask) -> str:
    """The task's reference as one script: its solution, or the shell commands of the trial it was frozen from."""
    trial = frozen_reference(loaded)
    if trial is None:
        return loaded.task.solution_text()
    return _as_script(trial) or ""


def _as_script(trial: RecordedTrial) -> str | None:
    """The trial's shell commands as one script (to validate fault targets with), or None when it typed keys."""
    if any(call.kind not in (CallKind.BASH, CallKind.DONE) for call in trial.calls):
        return None
    return "\n".join(call.command or "" for call in trial.calls if call.kind == CallKind.BASH)


def freeze_task(harness: Harness, loaded: LoadedTask, suite_root_name: str = "", families: list[str] | None = None) -> FreezeResult:
    """Validate the task; ``families``: the fault families whose targets to validate (None: all).

    A family left out is recorded as excluded ("not validated"), so a run that asks for it
    later lists the task among the pairs left out instead of playing an unvalidated fault.
    """
    task = loaded.task
    result = FreezeResult(task.id)
    unfrozen = LoadedTask(task, None, loaded.split)
    trial: RecordedTrial | None = None
    if task.solution_script is None or not task.solution_script.is_file():
        trial, runs, reasons = reference_from_trials(harness, unfrozen) if harness.recorded else (None, [], [])
        if trial is None:
            given = ("; from recorded trials: " + "; ".join(reasons)) if harness.recorded else (
                "; or give recorded passing trials with --termrl-reference-from=PATH")
            result.problems.append(
                f"task {task.id!r} has no reference solution: expected {expected_reference(task)}{given}; "
                "freezing validates the reference, so a task without one cannot be frozen"
            )
            return result
    else:
        runs, problems = _passes_twice(harness, unfrozen, None)
        result.problems += problems
    inventories = [tuple(o.nodeid for o in run.verdict.outcomes) if run.verdict else () for run, _ in runs]
    footprints = [[p.to_dict() for p in oracle.footprint()] for _, oracle in runs]
    decoys = [oracle.decoys for _, oracle in runs]
    touched = sorted({p["path"] for p in footprints[0]} & {d for d in decoys[0]})
    if touched:
        result.problems.append(f"the reference touches planted decoys: {', '.join(touched)}")
    untouched, _ = _play(harness, unfrozen, "noop", 0)
    if untouched.verdict is not None and untouched.verdict.complete:
        result.problems.append("the untouched environment already passes the hidden tests: the task tests nothing")
    if result.problems:
        return result
    script = task.solution_text() if trial is None else _as_script(trial)
    if script is None:
        faults = FrozenFaults(excluded={name: KEYSTROKE_FAULTS for name in FAMILIES})
    else:
        # A whole machine's footprint is absolute: the families choose among the inputs of its workdir.
        in_home = home_relative([Permission.from_dict(p) for p in footprints[0]], task.workdir) if task.whole_machine else None
        faults = freeze_fault_targets(
            task.id, task.inputs, footprints[0] if in_home is None else [p.to_dict() for p in in_home],
            fault_validator(harness, unfrozen, footprints[0], inventories[0], script),
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
        reference=trial.to_dict() if trial is not None else None,
    )
    return result


def fault_validator(harness: Harness, loaded: LoadedTask, permitted: list[dict], inventory: tuple[str, ...], reference: str | None = None):
    """validate(family, target) for one task, in fresh sandboxes of this harness (``reference``: its script, else the task's)."""
    task = loaded.task

    def passes(sandbox):
        return run_hidden_tests(harness.backend, sandbox, task, inventory, harness.settings.test_timeout_s)

    return partial(
        validate_pair,
        new_sandbox=lambda label: harness.new_sandbox(loaded, f"fault-{task.id}-{label}"),
        reference=reference_script(loaded) if reference is None else reference,
        passes=passes,
        permitted=permitted,
        salt=harness.salt,
        command_timeout_s=min(3.0, harness.settings.command_timeout_s),
    )
