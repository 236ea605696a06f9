"""Harbor multi-step tasks ([[steps]]): each step's own instruction and checks, in order, in one sandbox.

The fixture tests/data/harbor_steps/hs-two-steps has two steps. ``create`` writes
/app/steps.log holding ``first`` and is checked by its own test.sh (which sources the task's
tests/lib.sh and reads a ``[steps.verifier] env`` variable); ``extend`` appends ``second``
and is checked by the task's tests/test.sh. Step create's check fails on the file as the
episode ends, so its passing shows it ran when the step ended. Episodes are played in real
bwrap sandboxes, with the harness and through the plugin (freeze, reference, noop).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_termrl.agents.base import AgentContext, AgentUsage
from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent, ScriptedAgent
from pytest_termrl.errors import TaskFormatError
from pytest_termrl.tasks.importers import load_task_dir, offline_status
from pytest_termrl.tasks.suite import LoadedTask
from pytest_termrl.verifier.steps import step_inventory, step_prefix

DATA = Path(__file__).resolve().parents[2] / "data" / "harbor_steps"
TWO_STEPS = DATA / "hs-two-steps"
TESTS = ("step-1::test.sh", "step-2::test.sh")

pytestmark = pytest.mark.usefixtures("import_cache")  # imports land in a cache of this run's own


class FirstStepOnly(ScriptedAgent):
    """Does step 1 as its reference says, and nothing in the later steps."""

    name = "first-step-only"

    def commands_for(self, context: AgentContext) -> list[str]:
        return [context.solution] if context.instruction.startswith("Create") else []


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    task_dir = shutil.copytree(TWO_STEPS, tmp_path / "hs-variant")
    toml = task_dir / "task.toml"
    assert old in toml.read_text()
    toml.write_text(toml.read_text().replace(old, new, 1))
    return task_dir


def test_the_steps_are_read_with_their_instructions_checks_and_references():
    task = load_task_dir(TWO_STEPS)
    assert [step.name for step in task.steps] == ["create", "extend"] and task.step_reward_strategy == "mean"
    create, extend = task.steps
    assert task.instruction == create.instruction == "Create the file /app/steps.log holding the single line: first"
    assert extend.instruction.startswith("Add a second line to /app/steps.log")
    # Each step's tests: the task's tests/, then the step's own over them.
    assert sorted(p.name for p in create.tests_dir.iterdir()) == ["lib.sh", "test.sh"]
    assert "Step create's checks" in (create.tests_dir / "test.sh").read_text()
    assert "The task's own test.sh" in (extend.tests_dir / "test.sh").read_text()
    assert (create.grader.kind, extend.grader.kind) == ("script", "script")
    assert dict(create.grader.env) == {"EXPECTED": "first"} and dict(extend.grader.env) == {}
    assert (create.grader.timeout_s, extend.grader.timeout_s) == (30.0, 60.0)  # a step's own, else the task's
    assert (create.agent_timeout_s, extend.agent_timeout_s) == (60.0, 120.0)
    assert "echo first > /app/steps.log" in create.solution_text() and "echo second >> /app/steps.log" in extend.solution_text()
    assert task.solution_text().index("echo first") < task.solution_text().index("echo second")
    # The task as a whole: the last step's checks, no warning, runnable offline.
    assert task.tests_dir == extend.tests_dir and task.grader.script == extend.grader.script
    assert task.notes == () and offline_status(task) == ("yes", [])
    one = task.step_task(0)
    assert (one.instruction, one.tests_dir, one.grader, one.steps) == (create.instruction, create.tests_dir, create.grader, ())
    # The hidden tests stay outside the task's folder, in the import cache, never in the sandbox.
    assert TWO_STEPS not in create.tests_dir.parents


def test_the_episodes_tests_are_every_steps_by_prefix():
    assert step_prefix(0) == "step-1::"
    inventory = ("step-1::test.sh", "step-2::test_a.py::test_x", "step-2::test_a.py::test_y")
    assert step_inventory(inventory, 0) == ("test.sh",)
    assert step_inventory(inventory, 1) == ("test_a.py::test_x", "test_a.py::test_y")
    assert step_inventory(None, 1) is None


def test_the_reference_passes_every_step_and_the_noop_fails_each(harness):
    loaded = LoadedTask(load_task_dir(TWO_STEPS), None)
    reference, _, sandbox = harness.play_fresh(loaded, ReferenceAgent(), "reference", keep_open=True)
    try:
        final = (sandbox.home / "steps.log").read_text()
    finally:
        sandbox.close()
    verdict = reference.verdict.to_dict()
    assert reference.safe_success and reference.reward == 1.0, reference.failure_text()
    assert verdict["outcomes"] == {test: "passed" for test in TESTS} and verdict["native_reward"] == 1.0
    steps = verdict["steps"]
    assert [(s["name"], s["end_reason"], s["commands"], s["reward"], s["complete"]) for s in steps] == [
        ("create", "agent_done", 1, 1.0, True), ("extend", "agent_done", 1, 1.0, True),
    ]
    assert steps[0]["verdict"]["reward_source"] == "reward.txt"
    # One conversation per step, each opened by its own instruction.
    users = [m["content"] for m in reference.transcript if m["role"] == "user"]
    assert users == [step.instruction for step in loaded.task.steps] and len(reference.commands) == 2
    # Step create's check (the file holds just "first") fails on the final file: it ran when the step ended.
    assert final == "first\nsecond\n"

    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert not noop.safe_success and noop.reward == 0.0
    assert noop.verdict.to_dict()["outcomes"] == {test: "failed" for test in TESTS} and noop.verdict.native_reward == 0.0
    assert [s["commands"] for s in noop.verdict.to_dict()["steps"]] == [0, 0]


class FreshCountsReference(ReferenceAgent):
    """The reference, counting each conversation afresh (as the openai agent does)."""

    def start(self, context: AgentContext) -> None:
        self.usage = AgentUsage()
        super().start(context)


@pytest.mark.parametrize("agent", [ReferenceAgent, FreshCountsReference])
def test_every_steps_tool_calls_count_once(harness, agent):
    outcome, _, _ = harness.play_fresh(LoadedTask(load_task_dir(TWO_STEPS), None), agent(), "counts")
    assert outcome.usage["tool_calls"] == 2 and outcome.to_record().tool_calls == 2


def test_each_step_is_graded_by_its_own_checks_and_every_step_must_pass(harness, tmp_path):
    half, _, _ = harness.play_fresh(LoadedTask(load_task_dir(TWO_STEPS), None), FirstStepOnly(), "half")
    verdict = half.verdict
    assert verdict.to_dict()["outcomes"] == {"step-1::test.sh": "passed", "step-2::test.sh": "failed"}
    assert not verdict.complete and verdict.native_reward == 0.5  # Harbor's mean of the steps' rewards
    assert half.reward == 0.25 and not half.safe_success  # 0.5 x complete + 0.5 x the fraction of step tests passed
    assert "FAILED step-2::test.sh" in half.failure_text()
    # With the "final" strategy Harbor's reward is the last step's; every step must still pass.
    final = LoadedTask(load_task_dir(_variant(tmp_path, 'multi_step_reward_strategy = "mean"', 'multi_step_reward_strategy = "final"')), None)
    assert final.task.step_reward_strategy == "final"
    half, _, _ = harness.play_fresh(final, FirstStepOnly(), "half-final")
    assert half.verdict.native_reward == 0.0 and half.verdict.to_dict()["strategy"] == "final" and not half.verdict.complete


def test_a_step_below_its_min_reward_ends_the_episode_there(harness, tmp_path):
    task_dir = _variant(tmp_path, 'name = "create"\n', 'name = "create"\nmin_reward = 1.0\n')
    loaded = LoadedTask(load_task_dir(task_dir), None)
    assert loaded.task.steps[0].min_reward == (("reward", 1.0),) and loaded.task.steps[1].min_reward == ()
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    verdict = noop.verdict.to_dict()
    assert verdict["outcomes"] == {"step-1::test.sh": "failed", "step-2::test.sh": "skipped"}
    assert verdict["steps"][0]["stopped"] == "its reward 0.0 is below min_reward 1"
    assert len(verdict["steps"]) == 1 and verdict["native_reward"] == 0.0  # only graded steps make the reward
    assert any("step 2 (extend) was not graded: the episode ended after step 1 (create)" in p for p in verdict["problems"])
    assert [m["role"] for m in noop.transcript].count("system") == 1  # the agent never began step 2
    # Passing the gate goes on to the next step.
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.safe_success, reference.failure_text()
    # A table of named rewards, each with its least value.
    named = load_task_dir(_variant(tmp_path / "named", 'name = "create"\n', 'name = "create"\nmin_reward = { correctness = 0.5 }\n'))
    assert named.steps[0].min_reward == (("correctness", 0.5),)


PYTEST_TEST_SH = """#!/bin/bash
curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh
source $HOME/.local/bin/env
uvx -p 3.12 -w pytest==8.4.1 pytest /tests/test_extend.py -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""


def test_a_step_whose_test_sh_only_runs_pytest_is_graded_by_its_tests(harness, tmp_path):
    task_dir = _variant(tmp_path, "[[steps]]", "[[steps]]")
    (task_dir / "tests" / "test.sh").write_text(PYTEST_TEST_SH)
    (task_dir / "tests" / "test_extend.py").write_text(
        "from pathlib import Path\n\n\ndef test_both_lines_in_order():\n    assert Path('/app/steps.log').read_text() == 'first\\nsecond\\n'\n"
    )
    loaded = LoadedTask(load_task_dir(task_dir), None)
    assert [step.grader.kind for step in loaded.task.steps] == ["script", "pytest"]
    status, notes = offline_status(loaded.task)
    assert status == "via trusted pytest" and notes[0].startswith("step extend: offline-runnable via trusted pytest")
    expected = ("step-1::test.sh", "step-2::test_extend.py::test_both_lines_in_order")
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.safe_success and tuple(reference.verdict.to_dict()["outcomes"]) == expected, reference.failure_text()
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert noop.verdict.to_dict()["outcomes"] == {test: "failed" for test in expected}


def test_a_step_whose_grader_fails_is_a_harness_error_and_ends_the_episode(harness, tmp_path):
    task_dir = _variant(tmp_path, "[[steps]]", "[[steps]]")
    (task_dir / "steps" / "create" / "tests" / "test.sh").write_text("#!/bin/bash\necho cannot judge\nexit 3\n")
    outcome, _, _ = harness.play_fresh(LoadedTask(load_task_dir(task_dir), None), ReferenceAgent(), "broken")
    assert outcome.harness_error.startswith("verifier_error: test.sh ended without a usable reward (exit code 3)")
    assert outcome.harness_error.endswith("(in step 1, create)") and outcome.reward == 0.0
    steps = outcome.verdict.to_dict()["steps"]
    assert len(steps) == 1 and steps[0]["stopped"].startswith("its grader failed: verifier_error")
    assert outcome.verdict.to_dict()["outcomes"]["step-2::test.sh"] == "skipped" and len(outcome.commands) == 1


@pytest.mark.parametrize(
    "old, new, where, expected",
    [
        ('name = "create"', 'name = "../up"', "field 'steps[0].name'", "expected a folder name under steps/"),
        ('name = "extend"', 'name = "create"', "field 'steps[1].name'", "'create' is repeated"),
        ('name = "extend"', 'name = "absent"', "steps/absent", "missing: the folder of step 'absent'"),
        ('multi_step_reward_strategy = "mean"', 'multi_step_reward_strategy = "best"', "field 'multi_step_reward_strategy'", "expected one of mean, final"),
        ('name = "create"\n', 'name = "create"\nmin_reward = "high"\n', "field 'steps[0].min_reward'", "expected a number or a table"),
        ('[steps.verifier]\ntimeout_sec = 30.0', '[steps.verifier]\ntimeout_sec = -1', "field 'steps[0].verifier.timeout_sec'", "expected a positive number"),
    ],
)
def test_malformed_steps_name_the_field(tmp_path, old, new, where, expected):
    with pytest.raises(TaskFormatError) as info:
        load_task_dir(_variant(tmp_path, old, new))
    assert where in str(info.value) and expected in str(info.value), str(info.value)


def test_step_files_that_are_missing_or_cannot_be_placed_are_named(tmp_path):
    task_dir = _variant(tmp_path / "a", "[[steps]]", "[[steps]]")
    (task_dir / "steps" / "extend" / "instruction.md").unlink()
    with pytest.raises(TaskFormatError, match=r"steps/extend/instruction.md.*missing"):
        load_task_dir(task_dir)
    task_dir = _variant(tmp_path / "b", "[[steps]]", "[[steps]]")
    (task_dir / "tests" / "test.sh").unlink()
    with pytest.raises(TaskFormatError, match=r"step 'extend' has no grader \(steps/extend/tests/test.sh or tests/test.sh\)"):
        load_task_dir(task_dir)
    task_dir = _variant(tmp_path / "c", "[[steps]]", "[[steps]]")
    (task_dir / "steps" / "extend" / "environment").mkdir()
    with pytest.raises(TaskFormatError, match=r"steps/extend/environment.*a step has no environment of its own"):
        load_task_dir(task_dir)
    # A step's workdir/ (its files and setup hook) is placed: tests/unit/tasks/test_harbor_step_files.py.


def test_step_fields_are_honoured_refused_or_warned_by_name(tmp_path):
    extra = '[steps.agent]\ntimeout_sec = 60.0\nuser = "root"\nmodel = "big"\n'
    task_dir = _variant(tmp_path, "[steps.agent]\ntimeout_sec = 60.0\n", extra)
    (task_dir / "instruction.md").write_text("Not sent.\n")
    text = (task_dir / "task.toml").read_text().replace('name = "extend"', 'name = "extend"\ncolour = "blue"')
    (task_dir / "task.toml").write_text("multi_step_reward_mode = \"mean\"\n" + text)
    task = load_task_dir(task_dir)
    status, reasons = offline_status(task)
    assert status == "no" and reasons == [
        "steps[0].agent.user = 'root' (step create): the agent runs as the agent's user here (uid 1000), never as another user"
    ]
    assert task.notes == (
        "multi_step_reward_mode (before schema 1.3) is dropped, as Harbor drops it",
        "warning: unknown field 'steps[0].agent.model' (create) in task.toml (not read)",
        "warning: unknown field 'steps[1].colour' (extend) in task.toml (not read)",
        "instruction.md at the task's root is not sent: a multi-step task's instructions are its steps'",
    )


def test_a_two_step_task_through_the_plugin(tp):
    suite = tp.imported_suite(TWO_STEPS)
    contract = json.loads((suite / "contracts.jsonl").read_text())
    assert contract["task_id"] == "hs_two_steps" and tuple(contract["tests"]) == TESTS
    assert [p["path"] for p in contract["permitted"]] == ["steps.log"]

    tp.run("suite", "--termrl-agent=reference", timeout=300).assert_outcomes(passed=1)
    [reference] = map(json.loads, tp.episodes.read_text().splitlines())
    tp.run("suite", "--termrl-agent=noop", timeout=300).assert_outcomes(failed=1)
    [noop] = map(json.loads, tp.episodes.read_text().splitlines())
    assert (reference["agent"], noop["agent"]) == ("reference", "noop")
    assert reference["safe_success"] and (reference["tests_passed"], reference["tests_total"]) == (2, 2)
    assert [s["name"] for s in reference["verdict"]["steps"]] == ["create", "extend"] and reference["commands_used"] == 2
    assert not noop["safe_success"] and noop["verdict"]["outcomes"] == {test: "failed" for test in TESTS}
