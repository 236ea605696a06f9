"""Freeze a task: validate its reference run and write down what it established.

The reference runs twice in fresh sandboxes; both runs must pass every hidden test with
the same test inventory, and the untouched environment must fail. The contract records
the inventory and the hashes of the task's files.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .agents.builtin import NoopAgent, OracleAgent
from .episode import EpisodeOutcome, EpisodeSpec
from .harness import Harness
from .tasks.contracts import Contract, hash_task_files
from .tasks.suite import LoadedTask


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


def _play(harness: Harness, loaded: LoadedTask, agent_name: str, index: int) -> EpisodeOutcome:
    spec = EpisodeSpec("freeze", loaded.task.id, "clean", "reference", index)
    agent = OracleAgent() if agent_name == "oracle" else NoopAgent()
    sandbox = harness.new_sandbox(loaded, f"freeze-{loaded.task.id}-{agent_name}{index}")
    try:
        return harness.play(spec, loaded, sandbox, agent)
    finally:
        sandbox.close()


def freeze_task(harness: Harness, loaded: LoadedTask, suite_root_name: str = "") -> FreezeResult:
    task = loaded.task
    result = FreezeResult(task.id)
    unfrozen = LoadedTask(task, None, loaded.split)
    runs = [_play(harness, unfrozen, "oracle", i) for i in range(2)]
    for index, run in enumerate(runs):
        if run.harness_error:
            result.problems.append(f"reference run {index + 1}: harness error: {run.harness_error}")
        elif not run.safe_success:
            result.problems.append(f"reference run {index + 1} does not pass: " + run.failure_text())
    inventories = [tuple(o.nodeid for o in run.verdict.outcomes) if run.verdict else () for run in runs]
    if inventories[0] != inventories[1]:
        result.problems.append(f"the test inventory differs between two reference runs: {inventories[0]} vs {inventories[1]}")
    untouched = _play(harness, unfrozen, "noop", 0)
    if untouched.verdict is not None and untouched.verdict.complete:
        result.problems.append("the untouched environment already passes the hidden tests: the task tests nothing")
    if result.problems:
        return result
    result.contract = Contract(
        task_id=task.id,
        path=task.root.name,
        files=hash_task_files(task.root),
        tests=inventories[0],
    )
    return result
