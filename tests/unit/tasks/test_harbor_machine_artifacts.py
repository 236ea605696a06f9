"""Harbor's declared ``artifacts`` and a separate verifier in tasks that run over the whole machine.

Built in each test from ``tests/data/harbor_fields/hb-root-verifier`` (a root task built from
``FROM python:3.12-slim``): ``artifacts = ["/app/status.txt", "/var/log/app/run.log"]``, one
outside the workdir, land in the episode's artifacts; with ``environment_mode = "separate"``
the grader passes only on the artifacts and fails where it could see another file the agent
wrote (the shared variant of the same task, the same agent, shows it would). Played in real
bwrap sandboxes; the reading and pruning are also checked on host folders.
"""

from __future__ import annotations

import base64
import os
import shutil
from pathlib import Path

import pytest

from pytest_termrl.agents.builtin import CommandsAgent
from pytest_termrl.errors import SandboxError
from pytest_termrl.sandbox.base import LayeredRoot
from pytest_termrl.tasks.importers import load_task_dir, offline_status
from pytest_termrl.tasks.suite import LoadedTask
from pytest_termrl.verifier import machine_artifacts

DATA = Path(__file__).resolve().parents[2] / "data" / "harbor_fields"
ARTIFACTS = 'artifacts = ["/app/status.txt", "/var/log/app/run.log"]\n'
GRADER = """#!/bin/bash
# Passes on the artifacts alone: any other file the agent wrote, in the workdir or not, fails it.
mkdir -p /var/lib/grader && id -u > /var/lib/grader/uid
echo "in /app: $(ls -A /app | tr '\\n' ' ')"
if [ "$(cat /app/status.txt 2>/dev/null)" = "ready" ] && [ "$(cat /var/log/app/run.log 2>/dev/null)" = "started" ] \\
   && [ ! -e /app/scratch.txt ] && [ ! -e /root/notes.txt ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
AGENT = [
    "echo ready > /app/status.txt",
    "mkdir -p /var/log/app && echo started > /var/log/app/run.log",
    "echo draft > /app/scratch.txt && echo mine > /root/notes.txt",
]

pytestmark = pytest.mark.usefixtures("import_cache")


def _task(tmp_path: Path, name: str, *, separate: bool, same_image: bool = True) -> Path:
    """hb-root-verifier with the two artifacts, the grader above and, when ``separate``, a verifier of its own."""
    task_dir = shutil.copytree(DATA / "hb-root-verifier", tmp_path / name)
    toml = task_dir / "task.toml"
    text = ARTIFACTS + toml.read_text()
    if separate:
        text = text.replace("[verifier]", '[verifier]\nenvironment_mode = "separate"')
        dockerfile = (task_dir / "environment" / "Dockerfile").read_text()
        (task_dir / "tests" / "Dockerfile").write_text(dockerfile if same_image else "FROM python:3.12-slim\nRUN mkdir -p /app\n")
    toml.write_text(text)
    (task_dir / "tests" / "test.sh").write_text(GRADER)
    return task_dir


def test_a_whole_machine_task_with_artifacts_or_a_separate_verifier_is_played(tmp_path):
    shared = load_task_dir(_task(tmp_path, "hb-shared", separate=False))
    assert shared.whole_machine and shared.artifacts == ("/app/status.txt", "/var/log/app/run.log")
    assert offline_status(shared) == ("yes", [])
    separate = load_task_dir(_task(tmp_path, "hb-separate", separate=True))
    assert separate.whole_machine and separate.verifier_mode == "separate" and offline_status(separate) == ("yes", [])
    assert separate.notes[-1].startswith("verifier.environment_mode = 'separate': the grader's machine is the image with /app/status.txt")


def test_a_separate_verifier_with_an_image_of_its_own_over_the_whole_machine_is_refused_by_name(tmp_path):
    task = load_task_dir(_task(tmp_path, "hb-own-image", separate=True, same_image=False))
    status, reasons = offline_status(task)
    assert status == "no" and any(r.startswith("verifier.environment_mode = 'separate' in a task that runs over the whole machine") for r in reasons), reasons


def test_the_artifacts_of_a_whole_machine_task_land_in_the_episodes_artifacts(tmp_path, harness):
    task = load_task_dir(_task(tmp_path, "hb-machine-artifacts", separate=False))
    outcome, oracle, _ = harness.play_fresh(LoadedTask(task, None), CommandsAgent(AGENT[:2]), "artifacts")
    assert outcome.verdict.complete, outcome.failure_text()
    assert not oracle.tracker.collateral  # reading them through the machine changed nothing of it
    assert base64.b64decode(outcome.verdict.artifacts["declared/app/status.txt"]) == b"ready\n"
    assert base64.b64decode(outcome.verdict.artifacts["declared/var/log/app/run.log"]) == b"started\n"
    assert outcome.verdict.artifacts_left_out == []


def test_a_separate_verifier_of_a_whole_machine_task_sees_the_image_and_the_artifacts_alone(tmp_path, harness):
    separate = load_task_dir(_task(tmp_path, "hb-machine-separate", separate=True))
    outcome, _, _ = harness.play_fresh(LoadedTask(separate, None), CommandsAgent(AGENT), "separate")
    assert outcome.verdict.native_reward == 1.0, outcome.verdict.to_dict()
    listed = outcome.verdict.output_tail.split()
    assert "status.txt" in listed and "scratch.txt" not in listed  # the harness's own decoys lie below, in the machine's lowers
    assert base64.b64decode(outcome.verdict.artifacts["declared/var/log/app/run.log"]) == b"started\n"
    shared = load_task_dir(_task(tmp_path, "hb-machine-shared", separate=False))
    seen, _, _ = harness.play_fresh(LoadedTask(shared, None), CommandsAgent(AGENT), "shared")
    assert seen.verdict.native_reward == 0.0 and "scratch.txt" in seen.verdict.output_tail  # the same grader, seeing it all


def test_a_separate_verifier_gets_a_link_as_a_link_nothing_behind_a_link_and_no_artifact_the_agent_removed(tmp_path, harness):
    """As on docker (tests/integration/test_docker_machine_artifacts.py): /app/status.txt, a link to the agent's
    /root/notes.txt, stays a link to nothing; /var/log/app, a link, is dropped with what lies behind it; /app/seed.txt,
    the image's and declared, is gone as the agent left it."""
    task_dir = _task(tmp_path, "hb-machine-separate-links", separate=True)
    for dockerfile in (task_dir / "environment" / "Dockerfile", task_dir / "tests" / "Dockerfile"):
        dockerfile.write_text(dockerfile.read_text() + "RUN echo seed > /app/seed.txt\n")
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace(ARTIFACTS, ARTIFACTS.replace('"]', '", "/app/seed.txt"]'), 1))
    (task_dir / "tests" / "test.sh").write_text(GRADER.replace('echo "in /app', 'echo "status: $(stat -c %F /app/status.txt | tr " " _) '
                                                                               'seed: $(ls /app/seed.txt 2>&1 | tr " " _)"\necho "in /app'))
    agent = ["echo ready > /root/notes.txt && ln -sfn /root/notes.txt /app/status.txt && rm /app/seed.txt",
             "mkdir -p /root/logs /var/log && echo started > /root/logs/run.log && ln -sfn /root/logs /var/log/app"]
    task = load_task_dir(task_dir)
    assert task.artifacts == ("/app/status.txt", "/var/log/app/run.log", "/app/seed.txt")
    outcome, _, _ = harness.play_fresh(LoadedTask(task, None), CommandsAgent(agent, with_reference=False), "links")
    assert outcome.verdict.native_reward == 0.0 and outcome.verdict.error is None, outcome.verdict.to_dict()
    assert "status: symbolic_link" in outcome.verdict.output_tail and "No_such_file" in outcome.verdict.output_tail, outcome.verdict.output_tail
    assert outcome.verdict.artifacts_left_out == ["/app/status.txt: a link, not followed",
                                                  "/var/log/app/run.log: a link on the way, not followed",
                                                  "/app/seed.txt: not there when the agent ended"]


def test_no_link_is_followed_on_the_way_to_an_artifact(tmp_path):
    machine = tmp_path / "machine"
    (machine / "app").mkdir(parents=True)
    (machine / "app" / "status.txt").write_text("ready\n")
    (tmp_path / "secret.txt").write_text("host file\n")
    os.symlink(tmp_path, machine / "var")  # an absolute link: on the host it leads out of the machine
    os.symlink("/secret.txt", machine / "app" / "link.txt")
    (machine / "app" / "out").mkdir()
    (machine / "app" / "out" / "a.txt").write_text("a\n")
    os.symlink("/secret.txt", machine / "app" / "out" / "b.txt")
    kept: dict[str, str] = {}
    left_out: list[str] = []
    for source in ("/app/status.txt", "/var/secret.txt", "/app/link.txt", "/app/missing.txt", "/app/out"):
        machine_artifacts._read_one(str(machine), source, kept, left_out)
    assert kept == {"declared/app/status.txt": base64.b64encode(b"ready\n").decode(), "declared/app/out/a.txt": base64.b64encode(b"a\n").decode()}
    assert left_out == ["/var/secret.txt: a link on the way, not followed", "/app/link.txt: a link, not followed",
                        "/app/missing.txt: not there when the agent ended", "/app/out/b.txt: unreadable (Too many levels of symbolic links)"]


def test_the_agents_layer_is_pruned_to_the_artifacts_and_their_folders_lose_their_opaque_mark(tmp_path):
    upper = tmp_path / "upper"
    (upper / "app").mkdir(parents=True)
    (upper / "app" / "status.txt").write_text("ready\n")
    (upper / "app" / "scratch.txt").write_text("draft\n")
    (upper / "root").mkdir()
    (upper / "root" / "notes.txt").write_text("mine\n")
    (upper / "var" / "log" / "app").mkdir(parents=True)
    (upper / "var" / "log" / "app" / "run.log").write_text("started\n")
    os.setxattr(upper / "app", "trusted.overlay.opaque", b"y")
    task = load_task_dir(_task(tmp_path, "hb-prune", separate=True))
    root = LayeredRoot((("/", (upper, tmp_path / "image")),), 0, 0, 0, "root", "/root")
    removed = machine_artifacts.keep_only_artifacts(root, task)
    assert removed == ["/app/scratch.txt", "/root"]
    assert sorted(str(p.relative_to(upper)) for p in upper.rglob("*") if p.is_file()) == ["app/status.txt", "var/log/app/run.log"]
    assert "trusted.overlay.opaque" not in os.listxattr(upper / "app")
    with pytest.raises(SandboxError, match="committed image"):
        machine_artifacts.keep_only_artifacts(LayeredRoot((), 0, 0, 0, "root", "/root"), task)
    assert machine_artifacts.keep_only_artifacts(LayeredRoot((), 0, 0, 0, "root", "/root", artifacts_only=True), task) == []
