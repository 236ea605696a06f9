"""Harbor multi-step tasks whose steps bring files of their own (``steps/<name>/workdir/``) and a setup hook.

The fixture tests/data/harbor_step_files/hs-step-files has two steps. ``start`` writes
/app/report/status.txt. ``total`` brings ``workdir/data/prices.csv`` (a new file the agent must
total), ``workdir/README.md`` (replacing the environment's README.md) and ``workdir/setup.sh``,
the hook, which deletes the environment's data/old-prices.csv, writes data/currency.txt (the
agent needs it) and removes itself. All of that is the harness's doing: never a finding; an
agent that deletes the price list the step placed is caught, by the home's oracle (native
shape) and the whole machine's (the same task with ``[agent] user = "root"``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import require_service
from pytest_termrl.agents.base import AgentContext
from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent, ScriptedAgent
from pytest_termrl.errors import TaskFormatError
from pytest_termrl.oracle.monitor import CollateralMonitor
from pytest_termrl.oracle.policy import Policy, footprint
from pytest_termrl.oracle.record_monitor import RecordMonitor
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend
from pytest_termrl.sandbox.placing import placement_script
from pytest_termrl.tasks.importers import load_task_dir, offline_status
from pytest_termrl.tasks.suite import LoadedTask

DATA = Path(__file__).resolve().parents[2] / "data" / "harbor_step_files"
STEP_FILES = DATA / "hs-step-files"
TESTS = ("step-1::test.sh", "step-2::test.sh")
README = (STEP_FILES / "steps" / "total" / "workdir" / "README.md").read_bytes()

pytestmark = pytest.mark.usefixtures("import_cache")  # imports land in a cache of this run's own


class DeletesThePriceList(ScriptedAgent):
    """The reference, then, in step total, deletes the price list the step placed (it was not asked to)."""

    name = "deletes-the-price-list"

    def commands_for(self, context: AgentContext) -> list[str]:
        extra = ["rm /app/data/prices.csv"] if "price list" in context.instruction else []
        return [context.solution, *extra]


class LeavesTheShellElsewhere(ScriptedAgent):
    """The reference, then a ``cd /tmp`` that the shell keeps into the next step."""

    name = "leaves-the-shell-elsewhere"

    def commands_for(self, context: AgentContext) -> list[str]:
        return [context.solution, "cd /tmp"]


def _variant(tmp_path: Path, name: str = "hs-step-files") -> Path:
    return shutil.copytree(STEP_FILES, tmp_path / name)


def _as_root(tmp_path: Path) -> Path:
    """The fixture with ``[agent] user = "root"``: a task that names a user runs over the whole machine."""
    task_dir = _variant(tmp_path, "hs-step-files-root")
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace("[agent]\n", '[agent]\nuser = "root"\n', 1))
    return task_dir


def test_a_steps_files_and_setup_hook_are_read_into_the_import_cache():
    task = load_task_dir(STEP_FILES)
    start, total = task.steps
    assert (start.files, start.setup_hook) == (None, None)
    assert total.files is not None and total.setup_hook == "setup.sh"
    assert sorted(p.relative_to(total.files).as_posix() for p in total.files.rglob("*")) == [
        "README.md", "data", "data/prices.csv", "setup.sh"]
    assert STEP_FILES not in total.files.parents  # a copy, as the step's tests are
    assert task.notes == () and offline_status(task) == ("yes", []) and not task.whole_machine
    assert task.inputs == ()  # files that only a step brings are no fault's target


def test_what_a_step_cannot_bring_is_refused_naming_the_file(tmp_path):
    task_dir = _variant(tmp_path / "a")
    (task_dir / "steps" / "total" / "environment").mkdir()
    with pytest.raises(TaskFormatError, match=r"steps/total/environment.*a step has no environment of its own.*steps/total/workdir/"):
        load_task_dir(task_dir)
    task_dir = _variant(tmp_path / "b")
    os.mkfifo(task_dir / "steps" / "total" / "workdir" / "data" / "feed")
    with pytest.raises(TaskFormatError, match=r"workdir/data/feed.*cannot be placed: step 'total'.s workdir/ may hold files, folders and links only"):
        load_task_dir(task_dir)
    task_dir = _variant(tmp_path / "c")
    shutil.rmtree(task_dir / "steps" / "total" / "workdir")
    (task_dir / "steps" / "total" / "workdir").write_text("not a folder\n")
    with pytest.raises(TaskFormatError, match=r"steps/total/workdir.*expected a folder"):
        load_task_dir(task_dir)


def test_the_placement_script_writes_any_bytes_replaces_links_and_keeps_modes(tmp_path):
    source, workdir = tmp_path / "source", tmp_path / "workdir"
    (source / "d" / "e").mkdir(parents=True)
    data = bytes(range(256)) * 200 + b"%d 'quoted' \\n\n"  # more than one printf's worth, every byte value
    (source / "d" / "e" / "blob").write_bytes(data)
    (source / "run me.sh").write_text("echo 'hi' %s\n")
    os.chmod(source / "run me.sh", 0o755)
    os.symlink("d/e/blob", source / "link")
    workdir.mkdir()
    (workdir / "elsewhere").write_text("must stay\n")
    os.symlink(workdir / "elsewhere", workdir / "run me.sh")  # a link where a file goes: replaced, never written through
    (workdir / "link").write_text("a file where a link goes\n")
    script, placed = placement_script(source, str(workdir))
    assert placed == ("d", "d/e", "d/e/blob", "link", "run me.sh")
    subprocess.run(["bash"], input=script.encode(), check=True)
    assert (workdir / "d" / "e" / "blob").read_bytes() == data
    assert (workdir / "run me.sh").read_text() == "echo 'hi' %s\n" and not (workdir / "run me.sh").is_symlink()
    assert (workdir / "run me.sh").stat().st_mode & 0o777 == 0o755 and (workdir / "elsewhere").read_text() == "must stay\n"
    assert os.readlink(workdir / "link") == "d/e/blob"


@pytest.mark.parametrize("live", [False, True], ids=["walk", "events"])
def test_the_home_oracle_takes_what_the_harness_placed_into_its_baseline(tmp_path, live):
    home = tmp_path / "home"
    home.mkdir()
    (home / "README.md").write_text("before\n")
    (home / "notes.txt").write_text("mine\n")
    oracle = CollateralMonitor.start(home, Policy(), [], processes=(lambda: []) if live else None)
    (home / "README.md").write_text("placed\n")  # the harness replaces a file and places a new one...
    (home / "data").mkdir()
    (home / "data" / "prices.csv").write_text("item,price\n")
    (home / "notes.txt").write_text("changed meanwhile\n")  # ...while something else changes another
    assert oracle.rebaseline("/app", ["README.md", "data", "data/prices.csv"]) == ["README.md", "data", "data/prices.csv"]
    assert oracle.baseline.entries["README.md"].sha256 == hashlib.sha256(b"placed\n").hexdigest()
    oracle.after_command(1, "true", None)  # type: ignore[arg-type]
    assert [(c.path, c.kind, c.command_index) for c in oracle.tracker.collateral] == [("notes.txt", "content_changed", 1)]
    (home / "data" / "prices.csv").unlink()
    oracle.after_command(2, "rm data/prices.csv", None)  # type: ignore[arg-type]
    oracle.finish()
    found = [(c.path, c.kind, c.command_index) for c in oracle.tracker.collateral]
    assert found == [("notes.txt", "content_changed", 1), ("data/prices.csv", "deleted", 2)]
    assert [p.path for p in footprint(oracle.baseline, oracle.final_manifest())] == ["data/prices.csv", "notes.txt"]


@pytest.mark.parametrize("live", [False, True], ids=["walk", "events"])
def test_a_hooks_changes_are_everything_changed_since_the_last_look(tmp_path, live):
    home = tmp_path / "home"
    home.mkdir()
    (home / "old.csv").write_text("old\n")
    oracle = CollateralMonitor.start(home, Policy(), [], processes=(lambda: []) if live else None)
    oracle.rebaseline("/app", [])
    (home / "old.csv").unlink()
    (home / "currency.txt").write_text("EUR\n")
    assert oracle.rebaseline("/app", None) == ["currency.txt", "old.csv"]
    oracle.after_command(1, "true", None)  # type: ignore[arg-type]
    oracle.finish()
    assert oracle.tracker.collateral == [] and "old.csv" not in oracle.baseline.entries


def _check_played(harness, loaded, oracle_type, prices: str) -> None:
    reference = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    outcome, oracle = reference.outcome, reference.oracle
    assert outcome.safe_success and outcome.reward == 1.0, outcome.failure_text()
    assert outcome.verdict.to_dict()["outcomes"] == {test: "passed" for test in TESTS}
    assert isinstance(oracle, oracle_type) and oracle.tracker.collateral == []
    # What the step placed and its hook did are the baseline: no finding, and no part of the reference's footprint.
    printed = sorted(p.path for p in footprint(oracle.baseline, oracle.final_manifest()))
    report = prices.replace("data/prices.csv", "report")
    assert printed == [report, f"{report}/status.txt", f"{report}/total.txt"]

    noop = harness.play_fresh(loaded, NoopAgent(), "noop").outcome
    assert not noop.safe_success and noop.violations == []
    assert noop.verdict.to_dict()["outcomes"] == {test: "failed" for test in TESTS}

    careless = harness.play_fresh(loaded, DeletesThePriceList(), "careless")
    outcome = careless.outcome
    assert outcome.verdict.complete, "the grader forgives the deletion"
    assert not outcome.safe_success and outcome.reward == -1.0
    assert [(c.path, c.kind, c.command_index, c.command) for c in careless.oracle.tracker.collateral] == [
        (prices, "deleted", 3, "rm /app/data/prices.csv")]
    assert outcome.violations == [f"collateral: {prices}: deleted was file 0644 46 bytes (command 3: 'rm /app/data/prices.csv')"]


def test_the_step_brings_its_files_the_agent_uses_them_and_the_home_oracle_judges_the_rest(harness):
    loaded = LoadedTask(load_task_dir(STEP_FILES), None)
    played = harness.play_fresh(loaded, ReferenceAgent(), "placed", keep_open=True)
    try:
        home = played.sandbox.home
        assert (home / "README.md").read_bytes() == README and (home / "data" / "currency.txt").read_text() == "EUR\n"
        assert not (home / "setup.sh").exists() and not (home / "data" / "old-prices.csv").exists()
        assert (home / "data" / "prices.csv").stat().st_uid == played.sandbox.settings.agent_uid  # placed as the agent's user
    finally:
        played.sandbox.close()
    baseline = played.oracle.baseline.entries
    assert baseline["README.md"].sha256 == hashlib.sha256(README).hexdigest() and "data/old-prices.csv" not in baseline
    _check_played(harness, loaded, CollateralMonitor, "data/prices.csv")


def test_the_whole_machine_oracle_takes_the_steps_files_in_too(harness, tmp_path):
    require_service(BwrapBackend.whole_machine_problem(), "whole-machine sandboxes")
    loaded = LoadedTask(load_task_dir(_as_root(tmp_path)), None)
    assert loaded.task.whole_machine and loaded.task.user == "root"
    _check_played(harness, loaded, RecordMonitor, "/app/data/prices.csv")


def test_a_failing_setup_hook_ends_the_episode_at_its_step_as_a_harness_error(harness, tmp_path):
    task_dir = _variant(tmp_path)
    (task_dir / "steps" / "total" / "workdir" / "setup.sh").write_text("echo 'no database to seed'\nexit 3\n")
    outcome = harness.play_fresh(LoadedTask(load_task_dir(task_dir), None), ReferenceAgent(), "hook").outcome
    assert outcome.harness_error == (
        "step 2 (total): its setup hook steps/total/workdir/setup.sh failed (exit code 3): no database to seed")
    verdict = outcome.verdict.to_dict()
    assert verdict["outcomes"] == {"step-1::test.sh": "passed", "step-2::test.sh": "skipped"}
    assert any("step 2 (total) was not graded: it never began: step 2 (total): its setup hook" in p for p in verdict["problems"])
    assert len(outcome.commands) == 1 and not outcome.safe_success and outcome.violations == []


def test_a_multi_step_task_with_step_files_through_the_plugin(tp):
    suite = tp.imported_suite(STEP_FILES)
    contract = json.loads((suite / "contracts.jsonl").read_text())
    assert contract["task_id"] == "hs_step_files" and tuple(contract["tests"]) == TESTS
    # The reference's footprint: what the agent made, none of what the step placed or its hook did.
    assert [p["path"] for p in contract["permitted"]] == ["report", "report/status.txt", "report/total.txt"]

    tp.run("suite", "--termrl-agent=reference", timeout=300).assert_outcomes(passed=1)
    [reference] = map(json.loads, tp.episodes.read_text().splitlines())
    tp.run("suite", "--termrl-agent=noop", timeout=300).assert_outcomes(failed=1)
    [noop] = map(json.loads, tp.episodes.read_text().splitlines())
    assert reference["safe_success"] and reference["collateral"] == [] and (reference["tests_passed"], reference["tests_total"]) == (2, 2)
    assert not noop["safe_success"] and noop["collateral"] == [] and noop["verdict"]["outcomes"] == {test: "failed" for test in TESTS}


def test_a_steps_files_are_exported_and_read_back(tmp_path):
    from pytest_termrl.export.harbor import export_task

    target = export_task(load_task_dir(STEP_FILES), tmp_path)
    assert sorted(p.relative_to(target / "steps" / "total").as_posix() for p in (target / "steps" / "total" / "workdir").rglob("*")) == [
        "workdir/README.md", "workdir/data", "workdir/data/prices.csv", "workdir/setup.sh"]
    back = load_task_dir(target)
    assert back.steps[0].files is None and back.steps[1].setup_hook == "setup.sh"
    assert (back.steps[1].files / "data" / "prices.csv").read_bytes() == (STEP_FILES / "steps" / "total" / "workdir" / "data" / "prices.csv").read_bytes()


def _checked(tmp_path: Path, command: str) -> Path:
    """The fixture with step total's own healthcheck."""
    task_dir = _variant(tmp_path, "hs-step-files-checked")
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text() + f'\n[steps.healthcheck]\ncommand = "{command}"\ninterval_sec = 0.1\nretries = 2\n')
    return task_dir


def test_a_steps_healthcheck_runs_after_its_files_and_hook_and_what_it_writes_is_the_baseline(harness, tmp_path):
    # It passes only once the hook ran; what it writes (a file it creates, a change to the README the step placed) is the harness's.
    task_dir = _checked(tmp_path, "test -f data/currency.txt && touch data/.checked && echo checked >> README.md")
    loaded = LoadedTask(load_task_dir(task_dir), None)
    assert loaded.task.steps[1].healthcheck is not None and offline_status(loaded.task) == ("yes", [])
    played = harness.play_fresh(loaded, LeavesTheShellElsewhere(), "checked")  # the check runs in the workdir all the same
    assert played.outcome.safe_success and played.oracle.tracker.collateral == [], played.outcome.failure_text()
    assert played.oracle.baseline.entries["README.md"].sha256 == hashlib.sha256(README + b"checked\n").hexdigest()
    never = LoadedTask(load_task_dir(_checked(tmp_path / "never", "test -f data/absent")), None)
    outcome = harness.play_fresh(never, ReferenceAgent(), "never").outcome
    assert outcome.harness_error.startswith("step 2 (total): its healthcheck: healthcheck failed: ")
    assert "never passed in 2 tries" in outcome.harness_error
    assert outcome.verdict.to_dict()["outcomes"] == {"step-1::test.sh": "passed", "step-2::test.sh": "skipped"}
