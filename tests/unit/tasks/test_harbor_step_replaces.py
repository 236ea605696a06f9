"""A multi-step reference's change to a file that a later step's own files write again stays in its footprint.

The fixture tests/data/harbor_step_files/hs-step-replaces has two steps. ``convert``'s reference edits
the environment's /app/settings.ini (USD to EUR); ``summary`` brings ``workdir/settings.ini`` of its
own, which the harness places over the edited one and takes into the oracle's baseline. The edit
is still the reference's: the frozen contract permits it, so an agent that does what the reference
did is no collateral, while what later commands do to the file is judged against what the step
placed. Played on the home's oracle (native shape) and the whole machine's (``[agent] user = "root"``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import require_service
from pytest_termrl.agents.base import AgentContext
from pytest_termrl.agents.builtin import ReferenceAgent, ScriptedAgent
from pytest_termrl.oracle.monitor import CollateralMonitor
from pytest_termrl.oracle.policy import Permission, Policy, footprint
from pytest_termrl.oracle.record_monitor import RecordMonitor
from pytest_termrl.sandbox.base import CommandResult
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend
from pytest_termrl.tasks.importers import load_task_dir
from pytest_termrl.tasks.suite import LoadedTask
from pytest_termrl.validity.freeze import freeze_task

DATA = Path(__file__).resolve().parents[2] / "data" / "harbor_step_files" / "hs-step-replaces"
OK = CommandResult("", 0)

pytestmark = pytest.mark.usefixtures("import_cache")  # imports land in a cache of this run's own


class DeletesTheSettings(ScriptedAgent):
    """The reference, then, in step summary, deletes the settings file the step placed (it was not asked to)."""

    name = "deletes-the-settings"

    def commands_for(self, context: AgentContext) -> list[str]:
        extra = ["rm /app/settings.ini"] if "rounding" in context.instruction else []
        return [context.solution, *extra]


@pytest.mark.parametrize("live", [False, True], ids=["walk", "events"])
def test_the_agents_change_to_a_path_the_harness_places_again_stays_in_the_footprint(tmp_path, live):
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.ini").write_text("currency = USD\n")
    os.chmod(home / "settings.ini", 0o644)
    (home / "notes.txt").write_text("mine\n")
    oracle = CollateralMonitor.start(home, Policy([Permission("settings.ini", frozenset({"mode_changed"}))]), [],
                                     processes=(lambda: []) if live else None)
    os.chmod(home / "settings.ini", 0o600)  # the agent's step: a permitted change...
    oracle.after_command(0, "chmod 600 settings.ini", OK)
    (home / "settings.ini").write_text("currency = EUR\n")  # ...then the harness writes the file again, as it was
    os.chmod(home / "settings.ini", 0o644)
    assert oracle.rebaseline("/app", ["settings.ini"]) == ["settings.ini"]
    oracle.after_command(1, "true", OK)  # judged against what the harness placed: no content change
    (home / "notes.txt").write_text("changed\n")
    oracle.after_command(2, "edit notes.txt", OK)
    oracle.finish()
    assert [(c.path, c.kind, c.command_index) for c in oracle.tracker.collateral] == [("notes.txt", "content_changed", 2)]
    assert footprint(oracle.baseline, oracle.final_manifest()) == [Permission("notes.txt", frozenset({"content_changed"}))]
    # The agent's chmod, as it made it (not the content the harness changed), is still the run's.
    assert oracle.footprint() == [Permission("notes.txt", frozenset({"content_changed"})),
                                  Permission("settings.ini", frozenset({"mode_changed"}))]


def _as_root(tmp_path: Path) -> Path:
    """The fixture with ``[agent] user = "root"``: a task that names a user runs over the whole machine."""
    task_dir = shutil.copytree(DATA, tmp_path / "hs-step-replaces-root")
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace("[agent]\n", '[agent]\nuser = "root"\n', 1))
    return task_dir


def _frozen_and_played_again(harness, task_dir: Path, oracle_type, settings: str) -> None:
    task = load_task_dir(task_dir)
    frozen = freeze_task(harness, LoadedTask(task, None))
    assert frozen.problems == [] and frozen.contract is not None, frozen.problems
    permitted = {p["path"]: p["kinds"] for p in frozen.contract.permitted}
    assert permitted[settings] == ["content_changed"], permitted
    summary = settings.replace("settings.ini", "summary.txt")
    assert sorted(permitted) == [settings, summary] and permitted[summary] == ["created"]

    loaded = LoadedTask(task, frozen.contract)
    played = harness.play_fresh(loaded, ReferenceAgent(), "again")
    assert isinstance(played.oracle, oracle_type)
    assert played.outcome.safe_success and played.outcome.violations == [], played.outcome.failure_text()
    assert played.oracle.tracker.collateral == []
    assert [p.to_dict() for p in played.oracle.footprint()] == list(frozen.contract.permitted)

    # The re-based baseline still judges later commands: step summary's agent deleting the file it placed is caught.
    careless = harness.play_fresh(loaded, DeletesTheSettings(), "careless")
    assert careless.outcome.verdict.complete and not careless.outcome.safe_success
    assert [(c.path, c.kind, c.command) for c in careless.oracle.tracker.collateral] == [(settings, "deleted", "rm /app/settings.ini")]


def test_a_frozen_home_task_permits_the_edit_a_later_step_overwrote(harness):
    _frozen_and_played_again(harness, DATA, CollateralMonitor, "settings.ini")


def test_a_frozen_whole_machine_task_permits_the_edit_a_later_step_overwrote(harness, tmp_path):
    require_service(BwrapBackend.whole_machine_problem(), "whole-machine sandboxes")
    _frozen_and_played_again(harness, _as_root(tmp_path), RecordMonitor, "/app/settings.ini")
