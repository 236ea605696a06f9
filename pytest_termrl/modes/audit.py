"""The audit mode: per (task, accident) the grader's and the oracle's verdicts, as test items."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..episode import EpisodeSpec
from ..harness import Harness
from ..settings import TermrlOptions

from ..errors import ContractMismatchError
from ..tasks.contracts import check_task_files
from ..tasks.suite import LoadedTask
from ..validity.audit import REFERENCE, accidents_for, AuditPlan, Receipt, format_summary, plan_task, run_accident, summarize
from .base import Mode, clean_specs, keep_record
from .protocol import ControllerView

PLANS_KEY = pytest.StashKey[dict[tuple[str, str], AuditPlan]]()
"""config.stash: each task's audit plan, made once per process and reused by its accidents."""


def test_audit(termrl_spec: EpisodeSpec, termrl_audit_receipt: dict[str, Any]) -> None:
    """One (task, accident) of the grader audit: the oracle must catch the accident, the reference must pass."""
    r = termrl_audit_receipt
    if not r["ok"]:
        what = "the reference" if r["accident"] == REFERENCE else f"accident {r['accident']} ({r['command']})"
        pytest.fail(f"{r['task_id']}: {what}: grader: {r['grader_output']}; oracle: {r['oracle_findings'] or 'nothing found'}"
                    + (f"; {r['harness_error']}" if r["harness_error"] else ""), pytrace=False)


@pytest.fixture
def termrl_audit_receipt(request: pytest.FixtureRequest, termrl_harness: Harness, termrl_task: LoadedTask, termrl_spec: EpisodeSpec) -> dict[str, Any]:
    """This item's audit receipt; the task's reference is planned once per process and reused."""
    plans = request.config.stash.setdefault(PLANS_KEY, {})
    key = (termrl_spec.suite, termrl_spec.task_id)
    if key not in plans:
        loaded = termrl_task
        if loaded.contract is not None:
            try:
                check_task_files(loaded.contract, loaded.task.root)
            except ContractMismatchError:
                loaded = LoadedTask(loaded.task, None, loaded.split)  # audited with a provisional contract
        plans[key] = plan_task(termrl_harness, loaded)
    plan = plans[key]
    receipt = plan.reference if termrl_spec.family == REFERENCE else run_accident(termrl_harness, plan, termrl_spec.family)
    return keep_record(request, termrl_spec, receipt.to_dict())


class AuditMode(Mode):
    name = "audit"
    flag = "--termrl-audit"
    flag_help = ("grader audit: the reference, then careless accidents one at a time; per (task, accident) "
                 "the grader's and the oracle's verdicts (writes <run dir>/audit.jsonl)")
    test_name = "test_audit"
    test = staticmethod(test_audit)

    def log_file(self, options: TermrlOptions) -> Path:
        return options.run_dir / "audit.jsonl"

    def specs(self, suite_id: str, loaded: LoadedTask, options: TermrlOptions) -> list[tuple[EpisodeSpec, str]]:
        return clean_specs(suite_id, loaded, (REFERENCE, *accidents_for(loaded.task)), "audit")

    def log_line(self, record: dict[str, Any]) -> dict[str, Any]:
        return {"episode_id": f"{record['task_id']}-{record['accident']}", **record}

    def summary(self, terminalreporter: pytest.TerminalReporter, controller: ControllerView, finished: dict | None) -> None:
        terminalreporter.write_sep("=", "pytest-termrl grader audit")
        for line in format_summary(summarize([Receipt.from_dict(r) for r in controller.records])):
            terminalreporter.write_line(line)
        terminalreporter.write_line(f"receipts: {self.log_file(controller.options)}")


MODE = AuditMode()
