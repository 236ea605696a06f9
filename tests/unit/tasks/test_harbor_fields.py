"""Harbor task.toml fields that change a trial: honoured (workdir, network, resources, env, named rewards) or refused by name.

Fixture tasks under tests/data/harbor_fields: ``hb-workdir`` (``[environment] workdir``
outside /app, ``network_mode``, resources, ``[verifier] env`` and ``[solution] env``),
``hb-named-rewards`` (reward.json with ``correctness`` and ``style`` and no ``reward`` key)
and ``hb-refused-fields`` (another user, GPUs, unknown fields). The first
two are played in real bwrap sandboxes: the reference passes and the no-op fails.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_termrl.agents.builtin import CommandsAgent, NoopAgent, ReferenceAgent
from pytest_termrl.errors import SandboxError, TaskFormatError
from pytest_termrl.tasks.importers import load_task_dir, offline_status
from pytest_termrl.tasks.model import Resources
from pytest_termrl.tasks.suite import LoadedTask
from pytest_termrl.verifier.inside import script_runner

DATA = Path(__file__).resolve().parents[2] / "data" / "harbor_fields"


pytestmark = pytest.mark.usefixtures("import_cache")  # imports land in a cache of this run's own




def test_the_fields_of_a_task_outside_app_are_read():
    task = load_task_dir(DATA / "hb-workdir")
    assert task.workdir == "/workspace/project" and task.backend == "bwrap"
    assert (task.network_mode, task.allow_internet) == ("no-network", False)
    assert task.resources == Resources(cpus=2.0, memory_mb=1024, storage_mb=4096)
    assert dict(task.grader.env) == {"EXPECTED_TOTAL": "42"} and task.grader.timeout_s == 60.0 and task.agent_timeout_s == 120.0
    assert "(cd /workspace/project && export COLUMN=2 && bash /tmp/termrl-solution/solve.sh)" in task.solution_text()
    assert task.inputs == ("data.csv",) and offline_status(task) == ("yes", []) and task.notes == ()


def test_a_task_outside_app_passes_its_reference_and_fails_its_noop(harness):
    loaded = LoadedTask(load_task_dir(DATA / "hb-workdir"), None)
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.verdict.native_reward == 1.0 and reference.safe_success, reference.verdict.to_dict()
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert noop.verdict.native_reward == 0.0 and not noop.verdict.complete


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"correctness": 1, "performance": 0.5}', (0.5, None)),
        ('{"reward": 0.25, "correctness": 1}', (0.25, None)),
        ('{"correctness": 1, "style": 1, "note": "fine"}', (1.0, None)),
        ('{"verdict": "good"}', (None, "reward.json names no numeric reward")),
    ],
)
def test_named_rewards_pass_when_every_one_reaches_the_threshold(tmp_path, text, expected):
    (tmp_path / "reward.json").write_text(text)
    reward, source, _, problem = script_runner.read_reward(str(tmp_path))
    assert (reward, problem) == expected and source == "reward.json"


def test_named_rewards_in_real_episodes(harness):
    loaded = LoadedTask(load_task_dir(DATA / "hb-named-rewards"), None)
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.verdict.complete and reference.verdict.reward_detail == {"correctness": 1.0, "style": 1.0}
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert not noop.verdict.complete and noop.verdict.native_reward == 0.0
    # Correct but not executable: one named reward short of the threshold fails the task.
    half = CommandsAgent(["printf 'echo \"hello, $1\"\\n' > /app/greet.sh"])
    outcome, _, _ = harness.play_fresh(loaded, half, "half")
    assert outcome.verdict.reward_detail == {"correctness": 1.0, "style": 0.0} and not outcome.verdict.complete


def test_fields_that_cannot_be_honoured_are_refused_by_name_and_unknown_ones_warned():
    task = load_task_dir(DATA / "hb-refused-fields")
    status, reasons = offline_status(task)
    assert status == "no"
    assert task.user == "root" and task.verifier_user == "root" and task.whole_machine  # users are honoured now
    assert not any(".user" in r for r in reasons)
    assert any("environment.gpus = 1" in r for r in reasons) and task.backend == "docker"
    assert task.notes == (
        "warning: unknown field 'flavour' in task.toml (not read)",
        "warning: unknown field 'verifier.colour' in task.toml (not read)",
        "environment.allow_internet = false (deprecated) read as network_mode = 'no-network'",
    )
    assert task.network_mode == "no-network"


def _with_toml(tmp_path: Path, extra: str) -> Path:
    task_dir = shutil.copytree(DATA / "hb-named-rewards", tmp_path / "hb-variant")
    (task_dir / "task.toml").write_text((task_dir / "task.toml").read_text() + extra)
    return task_dir


@pytest.mark.parametrize(
    "extra, field, expected",
    [
        ('[environment]\nnetwork_mode = "internet"\n', "environment.network_mode", "expected one of public, no-network, allowlist"),
        ('[environment]\nworkdir = "project"\n', "environment.workdir", "expected an absolute path"),
        ('[environment]\nmemory = "lots"\n', "environment.memory", "expected a positive number of MiB"),
        ('[environment]\ncpus = -1\n', "environment.cpus", "expected a positive number"),
        ('[solution]\nenv = { N = 1 }\n', "solution.env", "expected a table of strings"),
    ],
)
def test_bad_field_values_name_the_field(tmp_path, extra, field, expected):
    with pytest.raises(TaskFormatError) as info:
        load_task_dir(_with_toml(tmp_path, extra))
    assert f"field '{field}'" in str(info.value) and expected in str(info.value)


def test_deprecated_sizes_and_public_network_are_recorded(tmp_path):
    task = load_task_dir(_with_toml(tmp_path, '[environment]\nmemory = "2G"\nstorage = "512M"\nnetwork_mode = "public"\n'))
    assert task.resources == Resources(cpus=None, memory_mb=2048, storage_mb=512)
    assert task.network_mode == "public" and "environment.network_mode = 'public': the agent has no network here" in task.notes


def test_the_build_timeout_is_the_setup_timeout(tmp_path):
    task = load_task_dir(_with_toml(tmp_path, "[environment]\nbuild_timeout_sec = 42\n"))
    assert task.setup_timeout_s == 42.0  # the setup stands for the image build on bwrap
    with pytest.raises(TaskFormatError, match="field 'environment.build_timeout_sec': expected a positive number"):
        load_task_dir(_with_toml(tmp_path / "bad", "[environment]\nbuild_timeout_sec = 0\n"))


def test_a_root_verifier_grades_as_root_and_writes_outside_the_workdir(harness):
    task = load_task_dir(DATA / "hb-root-verifier")
    # Harbor runs the agent as root when [agent] names no user: the image is built, and its agent is root too
    assert task.verifier_user == "root" and task.user == "root" and task.whole_machine
    assert task.image is not None and task.image.dockerfile == DATA / "hb-root-verifier" / "environment" / "Dockerfile"
    loaded = LoadedTask(task, None)
    reference, oracle, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.verdict.complete, reference.failure_text()
    assert not oracle.tracker.collateral
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert not noop.verdict.complete and noop.verdict.native_reward == 0.0


def test_a_generic_prebuilt_image_runs_as_root_over_the_whole_machine(tmp_path, harness):
    task_dir = shutil.copytree(DATA / "hb-root-verifier", tmp_path / "hb-generic-image")
    shutil.rmtree(task_dir / "environment")
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace("[verifier]", '[environment]\ndocker_image = "ubuntu:24.04"\nworkdir = "/app"\n\n[verifier]'))
    task = load_task_dir(task_dir)
    assert task.user == "root" and task.whole_machine and task.backend == "bwrap" and task.image.dockerfile is None
    reference, _, _ = harness.play_fresh(LoadedTask(task, None), ReferenceAgent(), "reference")
    assert reference.verdict.complete, reference.failure_text()


def test_a_verifier_user_the_dockerfile_made_grades_the_task(tmp_path, harness):
    """[verifier] user names an account the image's own Dockerfile made (useradd): the grader runs as that account."""
    task_dir = shutil.copytree(DATA / "hb-root-verifier", tmp_path / "hb-made-grader")
    (task_dir / "environment" / "Dockerfile").write_text("FROM python:3.12-slim\nRUN useradd -m -u 1500 grader\nWORKDIR /app\n")
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace('user = "root"', 'user = "grader"'))
    (task_dir / "tests" / "test.sh").write_text(
        '#!/bin/bash\n[ "$(id -un):$(id -u)" = "grader:1500" ] && [ "$(cat /app/status.txt 2>/dev/null)" = "ready" ] '
        '&& echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n')
    task = load_task_dir(task_dir)
    assert task.verifier_user == "grader"
    reference, _, _ = harness.play_fresh(LoadedTask(task, None), ReferenceAgent(), "reference")
    assert reference.verdict.complete, reference.failure_text()


def _agent_variant(tmp_path: Path, name: str, dockerfile: str, agent_user: str) -> Path:
    """hb-root-verifier with its own Dockerfile and ``[agent] user``."""
    task_dir = shutil.copytree(DATA / "hb-root-verifier", tmp_path / name)
    (task_dir / "environment" / "Dockerfile").write_text(dockerfile)
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text() + f"\n[agent]\nuser = {agent_user}\n")
    (task_dir / "tests" / "test.sh").write_text(
        '#!/bin/bash\n'
        '[ "$(cat /app/status.txt 2>/dev/null)" = "ready" ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n')
    return task_dir


def test_a_numeric_agent_user_needs_no_account_as_an_engine_runs_it(tmp_path, harness):
    task = load_task_dir(_agent_variant(tmp_path, "hb-uid", "FROM python:3.12-slim\nWORKDIR /app\nRUN chown 1000:1000 /app\n", "1000"))
    assert task.user == "1000"
    sandbox = harness.new_sandbox(LoadedTask(task, None), "uid")
    try:
        assert sandbox.run("id -u; echo ready > /app/status.txt && stat -c %u /app/status.txt").output.split() == ["1000", "1000"]
    finally:
        sandbox.close()


def test_a_named_agent_user_is_the_images_own_account_or_refused_by_name(tmp_path, harness):
    made = load_task_dir(_agent_variant(tmp_path, "hb-agent", "FROM python:3.12-slim\nRUN useradd -m -u 1200 agent\nWORKDIR /app\n"
                                                      "RUN chown agent /app\n", '"agent"'))
    reference, _, _ = harness.play_fresh(LoadedTask(made, None), ReferenceAgent(), "agent")
    assert reference.verdict.complete, reference.failure_text()
    missing = load_task_dir(_agent_variant(tmp_path, "hb-no-agent", "FROM python:3.12-slim\nWORKDIR /app\n", '"agent"'))
    with pytest.raises(SandboxError, match="its user 'agent'.*unable to find user agent"):
        harness.new_sandbox(LoadedTask(missing, None), "no-agent").close()
