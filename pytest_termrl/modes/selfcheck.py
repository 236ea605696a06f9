"""The self-check mode: validity items CI can gate on (each task, its faults, its grader and the oracle)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..episode import EpisodeSpec
from ..harness import Harness
from ..settings import TermrlOptions
from ..tasks.suite import LoadedTask

from ..validity.selfcheck import CHECKS, run_check
from .base import Mode, clean_specs, keep_record
from .protocol import ControllerView


def test_selfcheck(termrl_spec: EpisodeSpec, termrl_check_result: dict[str, Any]) -> None:
    """One validity check of one task: the grader and the oracle judge as they must."""
    r = termrl_check_result
    if not r["ok"]:
        pytest.fail(f"{r['task_id']}: {r['check']} failed: {r['detail']}", pytrace=False)


@pytest.fixture
def termrl_check_result(request: pytest.FixtureRequest, termrl_harness: Harness, termrl_task: LoadedTask, termrl_spec: EpisodeSpec) -> dict[str, Any]:
    return keep_record(request, termrl_spec, run_check(termrl_harness, termrl_task, termrl_spec.family).to_dict())


class SelfcheckMode(Mode):
    name = "selfcheck"
    flag = "--termrl-selfcheck"
    flag_help = "check every task, fault and oracle instead of running an agent (writes <run dir>/validity.jsonl)"
    test_name = "test_selfcheck"
    test = staticmethod(test_selfcheck)

    def log_file(self, options: TermrlOptions) -> Path:
        return options.run_dir / "validity.jsonl"

    def specs(self, suite_id: str, loaded: LoadedTask, options: TermrlOptions) -> list[tuple[EpisodeSpec, str]]:
        faults = sorted(loaded.contract.fault_targets) if loaded.contract else []
        return clean_specs(suite_id, loaded, [*CHECKS, *(f"fault_{f}" for f in faults)], "selfcheck")

    def log_line(self, record: dict[str, Any]) -> dict[str, Any]:
        return {"episode_id": f"{record['task_id']}-{record['check']}", **record}

    def summary(self, terminalreporter: pytest.TerminalReporter, controller: ControllerView, finished: dict | None) -> None:
        checks = controller.records
        by_task: dict[str, list[dict]] = {}
        for check in checks:
            by_task.setdefault(check["task_id"], []).append(check)
        invalid = {task: [c["check"] for c in group if not c["ok"]] for task, group in by_task.items()}
        invalid = {task: failed for task, failed in invalid.items() if failed}
        accidents = [c for c in checks if "grader_forgives" in c]
        terminalreporter.write_sep("=", "pytest-termrl self-check")
        terminalreporter.write_line(f"tasks valid: {len(by_task) - len(invalid)} of {len(by_task)}")
        for task, failed in sorted(invalid.items()):
            terminalreporter.write_line(f"  invalid {task}: {', '.join(failed)}")
        if accidents:
            forgiven = sum(1 for c in accidents if c["grader_forgives"])
            caught = sum(1 for c in accidents if c["oracle_caught"])
            terminalreporter.write_line(f"accidents: {len(accidents)}; forgiven by the hidden tests: {forgiven}; caught by the oracle: {caught}")
        flagged = {c["task_id"]: c["grader_agent_output"] for c in checks if c.get("grader_agent_output")}
        if flagged:
            terminalreporter.write_line(f"parsed graders that run the agent's code outside pytest (its output is parsed too): {len(flagged)}")
            for task, lines in sorted(flagged.items()):
                terminalreporter.write_line(f"  {task}: {lines[0]}" + (f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""))
        terminalreporter.write_line(f"validity log: {self.log_file(controller.options)}")


MODE = SelfcheckMode()
