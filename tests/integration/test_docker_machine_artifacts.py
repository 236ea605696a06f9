"""Harbor's declared ``artifacts`` of a whole-machine task on the docker backend, on a real local engine.

The same task tests/unit/tasks/test_harbor_machine_artifacts.py plays on bwrap: the artifacts
(one outside the workdir) are read below the container's merged folder and land in the
episode's artifacts. A separate verifier grades the machine as the harness laid the task out
(an image committed before the setup script) with the artifacts alone put in: the reference
passes, the no-op fails, another file the agent wrote is not there, an artifact the agent
deleted is gone, and a link is carried as a link, never followed (:mod:`.docker.machine_apart`).
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest

from pytest_termrl.agents.builtin import CommandsAgent, NoopAgent, ReferenceAgent
from pytest_termrl.harness import Harness
from pytest_termrl.tasks.importers import load_task_dir
from pytest_termrl.tasks.suite import LoadedTask

DATA = Path(__file__).resolve().parents[1] / "data" / "harbor_fields"
ARTIFACTS = ("/app/status.txt", "/var/log/app/run.log")
AGENT = ["echo ready > /app/status.txt", "mkdir -p /var/log/app && echo started > /var/log/app/run.log"]
GRADER = """#!/bin/bash
# Passes on the artifacts alone: any other file the agent wrote, in the workdir or not, fails it.
echo "in /app: $(ls -A /app | tr '\\n' ' ')"
echo "status: $(stat -c %F /app/status.txt 2>&1 | tr ' ' _) seed: $(cat /app/seed.txt 2>&1 | tr ' ' _)"
echo "folder: $(stat -c %u:%g:%a /var/log/app 2>&1 | tr ' ' _)"
if [ "$(id -u)" = 0 ] && [ "$(cat /app/status.txt 2>/dev/null)" = "ready" ] && [ "$(cat /var/log/app/run.log 2>/dev/null)" = "started" ] \\
   && [ ! -e /app/scratch.txt ] && [ ! -e /root/notes.txt ] && [ ! -e /app/seed.txt ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""

pytestmark = pytest.mark.usefixtures("docker_engine", "import_cache")


def _task(tmp_path: Path, name: str, *, separate: bool, artifacts: tuple[str, ...] = ARTIFACTS, grader: str | None = None) -> Path:
    """hb-root-verifier with ``artifacts`` declared, /app/seed.txt in its image, ``grader`` as its test.sh (None: its own),
    and a verifier of its own when ``separate``."""
    task_dir = shutil.copytree(DATA / "hb-root-verifier", tmp_path / name)
    dockerfile = task_dir / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN echo seed > /app/seed.txt\n")
    toml = task_dir / "task.toml"
    text = f"artifacts = {list(artifacts)!r}\n".replace("'", '"') + toml.read_text()
    if separate:
        text = text.replace("[verifier]", '[verifier]\nenvironment_mode = "separate"')
        shutil.copy(dockerfile, task_dir / "tests" / "Dockerfile")
    toml.write_text(text)
    if grader is not None:
        (task_dir / "tests" / "test.sh").write_text(grader)
    return task_dir


@pytest.fixture(scope="module")
def harness(local_docker_backend):
    return Harness(backend=local_docker_backend)


def test_the_artifacts_of_a_whole_machine_task_land_in_the_episodes_artifacts(tmp_path, harness):
    task = load_task_dir(_task(tmp_path, "hb-docker-artifacts", separate=False))
    outcome, _, _ = harness.play_fresh(LoadedTask(task, None), CommandsAgent(AGENT), "artifacts")
    assert outcome.verdict.complete, outcome.failure_text()
    assert base64.b64decode(outcome.verdict.artifacts["declared/app/status.txt"]) == b"ready\n"
    assert base64.b64decode(outcome.verdict.artifacts["declared/var/log/app/run.log"]) == b"started\n"


def test_a_separate_verifiers_reference_passes_and_its_noop_fails(tmp_path, harness, local_docker_backend):
    task = load_task_dir(_task(tmp_path, "hb-docker-separate-ref", separate=True, artifacts=("/app/status.txt",)))
    assert task.whole_machine and task.verifier_mode == "separate"
    reference, _, _ = harness.play_fresh(LoadedTask(task, None), ReferenceAgent(), "separate-ref")
    assert reference.verdict.complete and reference.verdict.native_reward == 1.0, reference.verdict.to_dict()
    noop, _, _ = harness.play_fresh(LoadedTask(task, None), NoopAgent(), "separate-noop")
    assert not noop.verdict.complete and noop.verdict.native_reward == 0.0, noop.verdict.to_dict()
    assert noop.verdict.error is None, noop.verdict.error  # graded, not a harness error
    held = local_docker_backend.api.images(filters={"label": f"termrl.run={local_docker_backend.run_id}"})
    assert held == []  # the prepared machines' images went with their sandboxes


def _sees_the_prepared_machine_and_the_artifacts_alone(tmp_path: Path, harness: Harness) -> None:
    artifacts = (*ARTIFACTS, "/app/seed.txt")
    agent = [*AGENT, "echo draft > /app/scratch.txt && echo mine > /root/notes.txt && rm /app/seed.txt",
             "chown 1000:1000 /var/log/app && chmod 750 /var/log/app"]
    separate = load_task_dir(_task(tmp_path, "hb-docker-separate", separate=True, artifacts=artifacts, grader=GRADER))
    outcome, _, _ = harness.play_fresh(LoadedTask(separate, None), CommandsAgent(agent), "separate")
    assert outcome.verdict.native_reward == 1.0, outcome.verdict.to_dict()
    listed = outcome.verdict.output_tail.split()
    assert "status.txt" in listed and "scratch.txt" not in listed and "seed.txt" not in listed
    assert "folder: 1000:1000:750" in outcome.verdict.output_tail  # the artifact's folder as the agent left it, owners inside
    assert base64.b64decode(outcome.verdict.artifacts["declared/var/log/app/run.log"]) == b"started\n"
    shared = load_task_dir(_task(tmp_path, "hb-docker-shared", separate=False, artifacts=artifacts, grader=GRADER))
    seen, _, _ = harness.play_fresh(LoadedTask(shared, None), CommandsAgent(agent), "shared")
    assert seen.verdict.native_reward == 0.0 and "scratch.txt" in seen.verdict.output_tail  # the same grader, seeing it all


def test_a_separate_verifier_sees_the_prepared_machine_and_the_artifacts_alone(tmp_path, harness):
    """/app/seed.txt of the image is declared and removed: gone for the grader; scratch and notes are not declared."""
    _sees_the_prepared_machine_and_the_artifacts_alone(tmp_path, harness)


def test_a_separate_verifier_on_an_engine_that_remaps_user_namespaces(tmp_path):
    """The same on the second engine: the folders' owners are read on the host through dockremap's range."""
    from conftest import USERNS_DOCKER_HOST, engine_problem, remapped_docker_backend, require_service

    from pytest_termrl.sandbox import SandboxSettings

    require_service(engine_problem(USERNS_DOCKER_HOST), "the engine that remaps user namespaces")
    backend = remapped_docker_backend(SandboxSettings())
    try:
        assert backend.machine_support().id_base > 0
        _sees_the_prepared_machine_and_the_artifacts_alone(tmp_path, Harness(backend=backend))
    finally:
        backend.close()


def test_a_separate_verifier_gets_a_link_as_a_link_and_nothing_behind_a_link(tmp_path, harness):
    """/app/status.txt is a link to the agent's /root/notes.txt (not carried): the grader finds a link to nothing; the
    folder of /var/log/app/run.log is a link: not carried, and not read for the episode's artifacts either."""
    agent = ["echo ready > /root/notes.txt && ln -sfn /root/notes.txt /app/status.txt",
             "mkdir -p /root/logs /var/log && echo started > /root/logs/run.log && ln -sfn /root/logs /var/log/app"]
    task = load_task_dir(_task(tmp_path, "hb-docker-separate-links", separate=True, grader=GRADER))
    outcome, _, _ = harness.play_fresh(LoadedTask(task, None), CommandsAgent(agent, with_reference=False), "links")
    assert outcome.verdict.native_reward == 0.0 and outcome.verdict.error is None, outcome.verdict.to_dict()
    assert "status: symbolic_link" in outcome.verdict.output_tail, outcome.verdict.output_tail
    assert outcome.verdict.artifacts_left_out == ["/app/status.txt: a link, not followed",
                                                  "/var/log/app/run.log: a link on the way, not followed"], outcome.verdict.to_dict()
