"""Harbor's declared ``artifacts`` and ``[verifier] environment_mode = "separate"``.

Fixture ``tests/data/harbor_fields/hb-separate-verifier``: the agent counts the lines of an
input file into ``/app/report.txt``, the one declared artifact; the verifier's own
environment (``tests/Dockerfile``) gets that file alone. Played in real bwrap sandboxes; the
declared artifacts also come back with the verdict in either mode.
"""

from __future__ import annotations

import base64
import os
import shutil
from pathlib import Path

import pytest

from pytest_termrl.agents.builtin import CommandsAgent, NoopAgent, ReferenceAgent
from pytest_termrl.errors import TaskFormatError
from pytest_termrl.tasks.importers import load_task_dir, offline_status
from pytest_termrl.tasks.suite import LoadedTask
from pytest_termrl.verifier import declared_artifacts

TASK = Path(__file__).resolve().parents[2] / "data" / "harbor_fields" / "hb-separate-verifier"

pytestmark = pytest.mark.usefixtures("import_cache")


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    task_dir = shutil.copytree(TASK, tmp_path / "hb-variant")
    toml = task_dir / "task.toml"
    assert old in toml.read_text()
    toml.write_text(toml.read_text().replace(old, new, 1))
    return task_dir


def test_the_mode_and_the_artifacts_are_read():
    task = load_task_dir(TASK)
    assert (task.verifier_mode, task.artifacts, task.backend, task.grader.kind) == ("separate", ("/app/report.txt",), "bwrap", "script")
    assert offline_status(task) == ("yes", [])
    assert task.notes == ("verifier.environment_mode = 'separate': the grader sees /app/report.txt of the workdir (tests/Dockerfile: FROM python:3.12-slim)",)


def test_the_separate_verifier_sees_the_artifacts_alone(harness):
    loaded = LoadedTask(load_task_dir(TASK), None)
    extra = CommandsAgent(["wc -l < /app/notes.txt > /app/report.txt", "echo draft > /app/scratch.txt"])
    outcome, _, _ = harness.play_fresh(loaded, extra, "extra")
    assert outcome.verdict.native_reward == 1.0, outcome.verdict.to_dict()
    assert "in /app: report.txt \n" in outcome.verdict.output_tail  # not notes.txt, not scratch.txt
    assert base64.b64decode(outcome.verdict.artifacts["declared/app/report.txt"]) == b"3\n"
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert noop.verdict.native_reward == 0.0 and noop.verdict.output_tail.startswith("in /app: \n")
    assert noop.verdict.artifacts_left_out == ["/app/report.txt: not there when the agent ended"]


def test_a_shared_verifier_sees_the_whole_workdir_and_keeps_the_artifacts(harness, tmp_path):
    task = load_task_dir(_variant(tmp_path, 'environment_mode = "separate"', 'environment_mode = "shared"'))
    assert task.verifier_mode == "shared" and task.notes == ()
    reference, _, _ = harness.play_fresh(LoadedTask(task, None), ReferenceAgent(), "reference")
    assert reference.safe_success and {"notes.txt", "report.txt"} <= set(reference.verdict.output_tail.split())
    assert base64.b64decode(reference.verdict.artifacts["declared/app/report.txt"]) == b"3\n"


@pytest.mark.parametrize(
    "old, new, field, expected",
    [
        ('environment_mode = "separate"', 'environment_mode = "apart"', "verifier.environment_mode", "expected one of shared, separate"),
        ('artifacts = ["/app/report.txt"]', 'artifacts = "/app/report.txt"', "artifacts", "expected a list of absolute paths"),
        ('artifacts = ["/app/report.txt"]', 'artifacts = ["report.txt"]', "artifacts[0]", "expected an absolute path"),
        ('artifacts = ["/app/report.txt"]', 'artifacts = [{ destination = "x" }]', "artifacts[0]", "a table whose 'source' is one"),
    ],
)
def test_bad_values_name_the_field(tmp_path, old, new, field, expected):
    with pytest.raises(TaskFormatError) as info:
        load_task_dir(_variant(tmp_path, old, new))
    assert f"field '{field}'" in str(info.value) and expected in str(info.value)


def test_a_table_entry_names_its_source(tmp_path):
    task = load_task_dir(_variant(tmp_path, 'artifacts = ["/app/report.txt"]', 'artifacts = [{ source = "/app/report.txt" }]'))
    assert task.artifacts == ("/app/report.txt",)


def test_what_cannot_run_here_is_refused_by_name(tmp_path):
    outside = load_task_dir(_variant(tmp_path / "a", 'artifacts = ["/app/report.txt"]', 'artifacts = ["/var/log/report.txt"]'))
    assert offline_status(outside)[1] == [
        "artifacts[0] = '/var/log/report.txt': outside the workdir /app, the only part of the agent's environment kept here"
    ]
    bare = _variant(tmp_path / "b", "[metadata]", "[metadata]")
    os.unlink(bare / "tests" / "Dockerfile")
    status, reasons = offline_status(load_task_dir(bare))
    assert status == "no" and reasons[0].startswith("verifier.environment_mode = 'separate' with neither tests/Dockerfile nor")
    custom = _variant(tmp_path / "c", "[metadata]", "[metadata]")
    (custom / "tests" / "Dockerfile").write_text("FROM gcc:13\nWORKDIR /tests\n")
    task = load_task_dir(custom)
    assert task.backend == "docker" and "the separate verifier's image: " in task.image.needs_docker[-1] and "FROM gcc:13" in task.image.needs_docker[-1]


def test_no_link_is_followed_out_of_the_copy(tmp_path):
    home = tmp_path / "home"
    (home / "out").mkdir(parents=True)
    secret = tmp_path / "secret.txt"
    secret.write_text("host file\n")
    os.symlink(secret, home / "report.txt")
    os.symlink(tmp_path, home / "linked")
    task = load_task_dir(_variant(tmp_path / "t", 'artifacts = ["/app/report.txt"]', 'artifacts = ["/app/report.txt", "/app/linked/secret.txt"]'))
    kept, left_out = declared_artifacts.collect(home, task)
    assert kept == {} and left_out[1] == "/app/linked/secret.txt: a link on the way (linked), not followed"
    assert left_out[0] == "/app/report.txt: a link on the way (report.txt), not followed"
    removed = declared_artifacts.keep_only_artifacts(home, task)
    assert removed == ["linked", "out"] and sorted(os.listdir(home)) == ["report.txt"] and secret.exists()


def test_a_prebuilt_verifier_image_is_refused_by_name(tmp_path):
    task_dir = _variant(tmp_path, 'environment_mode = "separate"', 'environment_mode = "separate"\n\n[verifier.environment]\ndocker_image = "example/grader:1"')
    os.unlink(task_dir / "tests" / "Dockerfile")
    status, reasons = offline_status(load_task_dir(task_dir))
    assert status == "no" and reasons == ["verifier.environment.docker_image = 'example/grader:1': the verifier's own prebuilt image is not run here"]
