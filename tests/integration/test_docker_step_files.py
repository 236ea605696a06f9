"""A multi-step Harbor task whose step brings files and a setup hook, on the docker backend: the same code path as bwrap.

The step's files and hook go through the sandbox's own shell (:mod:`pytest_termrl.sandbox.placing`), and the home's
oracle (here walking the home after every command) takes them into its baseline, as on bwrap
(tests/unit/tasks/test_harbor_step_files.py holds the cases there, the whole machine's oracle too).

Without an engine the module skips on a developer machine, and fails in CI (``CI=true``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO

from pytest_termrl.agents.base import AgentContext
from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent, ScriptedAgent
from pytest_termrl.harness import Harness
from pytest_termrl.oracle.monitor import CollateralMonitor
from pytest_termrl.tasks.importers import load_task_dir
from pytest_termrl.tasks.suite import LoadedTask

STEP_FILES = REPO / "tests" / "data" / "harbor_step_files" / "hs-step-files"
TESTS = ("step-1::test.sh", "step-2::test.sh")

pytestmark = pytest.mark.usefixtures("docker_engine", "import_cache")


class DeletesThePriceList(ScriptedAgent):
    name = "deletes-the-price-list"

    def commands_for(self, context: AgentContext) -> list[str]:
        return [context.solution, *(["rm /app/data/prices.csv"] if "price list" in context.instruction else [])]


def test_the_steps_files_are_placed_and_only_the_agents_deletion_of_one_is_collateral(local_docker_backend):
    harness = Harness(backend=local_docker_backend)
    loaded = LoadedTask(load_task_dir(Path(STEP_FILES)), None)
    reference = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.outcome.safe_success, reference.outcome.failure_text()
    assert isinstance(reference.oracle, CollateralMonitor) and reference.oracle.tracker.collateral == []
    noop = harness.play_fresh(loaded, NoopAgent(), "noop").outcome
    assert noop.verdict.to_dict()["outcomes"] == {test: "failed" for test in TESTS} and noop.violations == []
    careless = harness.play_fresh(loaded, DeletesThePriceList(), "careless").outcome
    assert careless.verdict.complete and not careless.safe_success
    assert careless.violations == ["collateral: data/prices.csv: deleted was file 0644 46 bytes (command 3: 'rm /app/data/prices.csv')"]
