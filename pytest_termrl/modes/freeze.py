"""The freeze mode: validate each task's reference twice and merge its contract into contracts.jsonl."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..episode import EpisodeSpec
from ..faults import CLEAN
from ..tasks.contracts import CONTRACTS_FILE, merge_contracts, parse_contract_line
from ..harness import Harness
from ..settings import TermrlOptions
from ..tasks.suite import LoadedTask
from ..validity.freeze import freeze_task
from .base import Mode, keep_record, run_options
from .protocol import ControllerView


def test_freeze(termrl_spec: EpisodeSpec, termrl_freeze_result: dict[str, Any]) -> None:
    """Validate a task's reference twice and produce its contract."""
    if termrl_freeze_result.get("error"):
        pytest.fail(termrl_freeze_result["error"], pytrace=False)


@pytest.fixture
def termrl_freeze_result(request: pytest.FixtureRequest, termrl_harness: Harness, termrl_task: LoadedTask, termrl_spec: EpisodeSpec) -> dict[str, Any]:
    return keep_record(request, termrl_spec, freeze_task(termrl_harness, termrl_task, families=frozen_families(request.config)).to_dict())


def frozen_families(config: pytest.Config) -> list[str] | None:
    """The fault families a freeze validates: all, unless ``--termrl-families`` (or its ini
    key) names some; ``clean`` alone validates none (a quick freeze for clean episodes)."""
    if not (config.getoption("termrl_families", None) or config.getini("termrl_families")):
        return None
    return [name for name in run_options(config).families if name != CLEAN]


class FreezeMode(Mode):
    name = "freeze"
    flag = "--termrl-freeze"
    flag_help = "validate each task's reference and write the suite's contracts.jsonl"
    test_name = "test_freeze"
    test = staticmethod(test_freeze)
    require_contracts = False
    makes_suites = True

    def specs(self, suite_id: str, loaded: LoadedTask, options: TermrlOptions) -> list[tuple[EpisodeSpec, str]]:
        task_id = loaded.task.id
        return [(EpisodeSpec(suite_id, task_id, "freeze", "reference", 0, label=task_id), CLEAN)]

    def finish(self, controller: ControllerView, config: pytest.Config) -> None:
        """Merge this session's contracts into each suite's contracts.jsonl (tasks not run keep theirs)."""
        by_suite: dict[str, list[dict]] = {}
        for frozen in frozen_by_task(controller).values():
            if frozen.get("contract"):
                by_suite.setdefault(frozen["suite"], []).append(frozen)
        for suite_root, results in sorted(by_suite.items()):
            path = Path(suite_root) / CONTRACTS_FILE
            merge_contracts(path, [parse_contract_line(path, 0, frozen["contract"]) for frozen in results])
        return None

    def summary(self, terminalreporter: pytest.TerminalReporter, controller: ControllerView, finished: dict | None) -> None:
        frozen = frozen_by_task(controller)
        good = sum(1 for r in frozen.values() if r.get("contract"))
        terminalreporter.write_sep("=", "pytest-termrl freeze")
        terminalreporter.write_line(f"{good} of {len(frozen)} task(s) frozen")


def frozen_by_task(controller: ControllerView) -> dict[str, dict]:
    """The last freeze result of each task id."""
    return {r["task_id"]: r for r in controller.records}


MODE = FreezeMode()
