"""Harbor's declared ``artifacts`` of a whole-machine task on the docker backend, on a real local engine.

The same task tests/unit/tasks/test_harbor_machine_artifacts.py plays on bwrap: the artifacts
(one outside the workdir) are read below the container's merged folder and land in the
episode's artifacts. A separate verifier is not graded on docker: its snapshot is a committed
image, whose agent layer cannot be replaced by the artifacts, and the verdict says so.
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest

from pytest_termrl.agents.builtin import CommandsAgent
from pytest_termrl.harness import Harness
from pytest_termrl.tasks.importers import load_task_dir
from pytest_termrl.tasks.suite import LoadedTask

DATA = Path(__file__).resolve().parents[1] / "data" / "harbor_fields"
AGENT = ["echo ready > /app/status.txt", "mkdir -p /var/log/app && echo started > /var/log/app/run.log"]

pytestmark = pytest.mark.usefixtures("docker_engine", "import_cache")


def _task(tmp_path: Path, name: str, *, separate: bool) -> Path:
    """hb-root-verifier with ``/app/status.txt`` and ``/var/log/app/run.log`` declared, and a verifier of its own when ``separate``."""
    task_dir = shutil.copytree(DATA / "hb-root-verifier", tmp_path / name)
    toml = task_dir / "task.toml"
    text = 'artifacts = ["/app/status.txt", "/var/log/app/run.log"]\n' + toml.read_text()
    if separate:
        text = text.replace("[verifier]", '[verifier]\nenvironment_mode = "separate"')
        shutil.copy(task_dir / "environment" / "Dockerfile", task_dir / "tests" / "Dockerfile")
    toml.write_text(text)
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


def test_a_separate_verifier_is_a_harness_error_that_names_why(tmp_path, harness):
    task = load_task_dir(_task(tmp_path, "hb-docker-separate", separate=True))
    outcome, _, _ = harness.play_fresh(LoadedTask(task, None), CommandsAgent(AGENT), "separate")
    assert not outcome.verdict.complete and "committed image" in outcome.verdict.error, outcome.verdict.to_dict()
