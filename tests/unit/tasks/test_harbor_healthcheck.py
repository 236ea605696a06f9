"""Harbor's ``[environment.healthcheck]``: read with Harbor's defaults, tried before the agent, a setup failure when it never passes.

The fixture ``tests/data/harbor_fields/hb-healthcheck`` uses its check as the pre-agent hook
tasks use it for: the check writes the task's input and passes on its second try, as a
service that is not up at first would. Played in real bwrap sandboxes and through the plugin.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent
from pytest_termrl.errors import SetupFailed, TaskFormatError
from pytest_termrl.sandbox.base import CommandResult
from pytest_termrl.sandbox.healthcheck import wait_healthy
from pytest_termrl.tasks.importers import load_task_dir, offline_status
from pytest_termrl.tasks.model import Healthcheck
from pytest_termrl.tasks.suite import LoadedTask

DATA = Path(__file__).resolve().parents[2] / "data"
TASK = DATA / "harbor_fields" / "hb-healthcheck"

pytestmark = pytest.mark.usefixtures("import_cache")


def _with_check(tmp_path: Path, table: str) -> Path:
    """hb-healthcheck with its ``[environment.healthcheck]`` table replaced by ``table``."""
    task_dir = shutil.copytree(TASK, tmp_path / "hb-check-variant")
    toml = task_dir / "task.toml"
    head = toml.read_text().split("[environment.healthcheck]")[0]
    toml.write_text(head + "[environment.healthcheck]\n" + table)
    return task_dir


def test_the_check_is_read_with_harbors_defaults(tmp_path):
    task = load_task_dir(TASK)
    assert task.backend == "bwrap" and offline_status(task) == ("yes", []) and task.notes == ()
    assert (task.healthcheck.interval_s, task.healthcheck.timeout_s, task.healthcheck.retries) == (0.2, 10.0, 3)
    bare = load_task_dir(_with_check(tmp_path, 'command = "true"\n')).healthcheck
    assert (bare.command, bare.interval_s, bare.timeout_s, bare.start_period_s, bare.start_interval_s, bare.retries) == (
        "true", 5.0, 30.0, 0.0, 5.0, 3
    )
    assert bare.source.endswith("task.toml [environment.healthcheck]")


@pytest.mark.parametrize(
    "table, field, expected",
    [
        ("interval_sec = 1\n", "command", "expected a non-empty shell command"),
        ('command = "  "\n', "command", "expected a non-empty shell command"),
        ('command = "true"\ninterval_sec = 0\n', "interval_sec", "expected a positive number of seconds"),
        ('command = "true"\ntimeout_sec = "5s"\n', "timeout_sec", "expected a positive number of seconds"),
        ('command = "true"\nstart_period_sec = -1\n', "start_period_sec", "expected a number of seconds, 0 or more"),
        ('command = "true"\nstart_interval_sec = nan\n', "start_interval_sec", "expected a positive number of seconds"),
        ('command = "true"\nretries = 0\n', "retries", "expected a whole number, at least 1"),
        ('command = "true"\nretries = 2.5\n', "retries", "expected a whole number, at least 1"),
    ],
)
def test_bad_check_values_name_the_field(tmp_path, table, field, expected):
    with pytest.raises(TaskFormatError) as info:
        load_task_dir(_with_check(tmp_path, table))
    assert f"field 'environment.healthcheck.{field}'" in str(info.value) and expected in str(info.value)


def test_an_unknown_check_field_is_warned_by_name(tmp_path):
    task = load_task_dir(_with_check(tmp_path, 'command = "true"\nshell = "zsh"\n'))
    assert task.notes == ("warning: unknown field 'environment.healthcheck.shell' in task.toml (not read)",)


class _Script:
    """A run function that answers from a list of exit codes and a clock that only sleeps move."""

    def __init__(self, codes: list[int]) -> None:
        self.codes, self.now, self.calls, self.sleeps = list(codes), 0.0, [], []

    def run(self, command: str, timeout_s: float) -> CommandResult:
        self.calls.append((command, timeout_s))
        return CommandResult(output=f"try {len(self.calls)}\n", exit_code=self.codes.pop(0))

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _wait(check: Healthcheck, codes: list[int]) -> tuple[_Script, int | SetupFailed]:
    script = _Script(codes)
    try:
        return script, wait_healthy(script.run, check, clock=lambda: script.now, sleep=script.sleep)
    except SetupFailed as error:
        return script, error


def test_retries_failures_in_a_row_make_it_unhealthy():
    check = Healthcheck("curl -f localhost:8000", interval_s=2, timeout_s=7, retries=3, source="t.toml [environment.healthcheck]")
    script, tries = _wait(check, [1, 1, 0])
    assert tries == 3 and script.sleeps == [2, 2] and script.calls[0] == ("bash -c 'curl -f localhost:8000'", 7)
    script, error = _wait(check, [1, 1, 1, 0])
    assert isinstance(error, SetupFailed) and error.stage == "healthcheck" and len(script.calls) == 3
    assert str(error).startswith(
        "healthcheck failed: t.toml [environment.healthcheck] command 'curl -f localhost:8000' never passed in 3 tries "
        "(the last exited with code 1); the last lines of its output:\n  | try 3"
    )


def test_failures_in_the_start_period_do_not_count():
    check = Healthcheck("test -e /tmp/up", interval_s=5, start_period_s=3, start_interval_s=1, retries=1)
    script, tries = _wait(check, [1, 1, 1, 0])  # three failures at t = 0, 1, 2 fall in the start period
    assert tries == 4 and script.sleeps == [1, 1, 1]
    script, error = _wait(check, [1, 1, 1, 1, 0])  # the first failure after it is the one retry
    assert isinstance(error, SetupFailed) and len(script.calls) == 4


def test_the_check_runs_before_the_agent_in_a_real_sandbox(harness):
    loaded = LoadedTask(load_task_dir(TASK), None)
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.verdict.native_reward == 1.0 and reference.safe_success, reference.verdict.to_dict()
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert noop.verdict.native_reward == 0.0 and not noop.safe_success


def test_a_check_that_never_passes_fails_the_setup_with_its_output(harness, tmp_path):
    task_dir = _with_check(tmp_path, 'command = "echo no service on 8000; exit 7"\ninterval_sec = 0.1\nretries = 2\n')
    loaded = LoadedTask(load_task_dir(task_dir), None)
    with pytest.raises(SetupFailed) as info:
        harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert str(info.value).startswith(
        f"healthcheck failed: {task_dir / 'task.toml'} [environment.healthcheck] command 'echo no service on 8000; exit 7' "
        "never passed in 2 tries (the last exited with code 7); the last lines of its output:\n  | no service on 8000"
    )


def test_a_check_that_hangs_is_cut_at_its_timeout(harness, tmp_path):
    task_dir = _with_check(tmp_path, 'command = "sleep 60"\ntimeout_sec = 1\ninterval_sec = 0.1\nretries = 1\n')
    with pytest.raises(SetupFailed, match=r"never passed in 1 tries \(the last did not finish within 1 s\)"):
        harness.play_fresh(LoadedTask(load_task_dir(task_dir), None), ReferenceAgent(), "reference")


def test_a_steps_own_check_is_read_with_harbors_defaults(tmp_path):
    task_dir = shutil.copytree(DATA / "harbor_steps" / "hs-two-steps", tmp_path / "hs-checked")
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text() + '\n[steps.healthcheck]\ncommand = "true"\nretries = 2\n')  # the last step's
    task = load_task_dir(task_dir)
    assert offline_status(task) == ("yes", []) and task.steps[0].healthcheck is None
    check = task.steps[1].healthcheck
    assert (check.command, check.retries, check.interval_s) == ("true", 2, Healthcheck("").interval_s)
    assert check.source.endswith("task.toml [steps[1].healthcheck]")
    # Tried before the step's agent, its changes the harness's: tests/unit/tasks/test_harbor_step_files.py.


def test_through_the_plugin_a_failing_check_is_a_setup_failure_on_record(tp):
    suite = tp.imported_suite(TASK)
    tp.run("suite", "--termrl-agent=reference", timeout=300).assert_outcomes(passed=1)
    [passed] = map(json.loads, tp.episodes.read_text().splitlines())
    assert passed["safe_success"]
    # The service was up when the task was frozen and is down now: the check fails at run time.
    toml = suite / TASK.name / "task.toml"
    toml.write_text(toml.read_text().replace("[ $n -ge 2 ]", "[ $n -ge 99 ]"))
    contract = json.loads((suite / "contracts.jsonl").read_text())
    contract["files"]["task.toml"] = hashlib.sha256(toml.read_bytes()).hexdigest()
    (suite / "contracts.jsonl").write_text(json.dumps(contract, sort_keys=True) + "\n")
    result = tp.run("suite", "--termrl-agent=reference", timeout=300)
    result.assert_outcomes(errors=1)
    assert "Traceback" not in result.stdout.str()
    [record] = map(json.loads, tp.episodes.read_text().splitlines())
    assert record["end_reason"] == "setup_failed" and not record["safe_success"]
    assert record["harness_error"].startswith("healthcheck failed: ") and "never passed in 3 tries" in record["harness_error"]
    # Freezing it again refuses the task, with the same reason.
    refreeze = tp.run("suite", "--termrl-freeze", timeout=300)
    refreeze.stdout.fnmatch_lines(["*healthcheck failed: *never passed in 3 tries*"])
