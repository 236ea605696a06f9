"""Export to Harbor: every task of the core suite written as a Harbor task directory, imported back, same verdicts.

``python -m pytest_termrl.export harbor SUITE OUT`` writes a Dockerfile FROM a base-image
argument with the environment files owned by the agent's user and the setup as a RUN
heredoc, solution/solve.sh, and tests/test.sh writing /logs/verifier/reward.txt. The
export is read back by the Harbor importer: every task loads, runs offline on bwrap and
is graded by its test.sh. Real episodes on bwrap then check one task of each family of
the core suite (and the hand-written tasks): the reference passes and the no-op fails,
as they do for the native task (the whole suite's round trip is the admission command
run on the export).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent
from pytest_termrl.export.__main__ import main as export_main
from pytest_termrl.export.harbor import export_suite, export_task
from pytest_termrl.errors import TaskFormatError
from pytest_termrl.tasks.importers import load_task_dir, offline_status, scan
from pytest_termrl.tasks.suite import LoadedTask

CORE = Path(__file__).parents[1] / "task_suites" / "core"
SAMPLE = (
    "confedit_00", "csvreshape_01", "dedup_02", "filemove_03", "gitchores_04", "jsonextract_05", "logagg_06", "logfilter_07",
    "permfix_00", "schedcheck_01", "snapshot_02", "sqlreport_03", "sumverify_04", "tarball_05", "templating_06", "textreport_07",
    "git_commit_configs", "log_error_counts", "perms_from_spec", "batch_rename_photos",
)


pytestmark = pytest.mark.usefixtures("import_cache")  # imports land in a cache of this run's own


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("harbor-export")
    written, problems = export_suite(CORE, out)
    assert problems == {}
    return out, written


def test_every_core_task_is_exported_and_imports_back_as_harbor(exported):
    out, written = exported
    native = {t.id: t for t in scan(CORE)[0]}
    assert sorted(p.name for p in written) == sorted(native) and len(written) >= 142
    tasks, problems = scan(out)
    assert problems == {}
    for task in tasks:
        original = native[task.id]
        assert task.source.format == "harbor" and task.grader.kind == "script", task.id
        assert (task.workdir, task.backend, offline_status(task)) == (original.workdir, "bwrap", ("yes", [])), task.id
        assert task.instruction == original.instruction.strip() and task.difficulty == original.difficulty
        tests = sorted(p.name for p in task.tests_dir.iterdir())
        assert tests == sorted([p.name for p in original.tests_dir.iterdir() if p.name != "__pycache__"] + ["test.sh"])


def test_the_exported_files(exported):
    out, _ = exported
    task_dir = out / "git_commit_configs"
    dockerfile = (task_dir / "environment" / "Dockerfile").read_text()
    assert dockerfile.startswith("ARG BASE_IMAGE=termrl-base:1\nFROM ${BASE_IMAGE}\n")
    assert "USER 1000:1000\nWORKDIR /home/user\nRUN <<'TERMRL_SETUP'\n#!/bin/bash\n" in dockerfile
    assert dockerfile.endswith("TERMRL_SETUP\n")
    toml = (task_dir / "task.toml").read_text()
    assert '[agent]\nuser = "user"' in toml and '[environment]\nworkdir = "/home/user"\nnetwork_mode = "no-network"' in toml
    test_sh = (task_dir / "tests" / "test.sh").read_text()
    assert "echo 1 > /logs/verifier/reward.txt" in test_sh and os.access(task_dir / "tests" / "test.sh", os.X_OK)
    with_files = out / "log_error_counts"
    assert "COPY --chown=1000:1000 home/ /home/user/" in (with_files / "environment" / "Dockerfile").read_text()
    original = CORE / "log_error_counts" / "environment"
    for path in original.rglob("*"):
        copy = with_files / "environment" / "home" / path.relative_to(original)
        assert stat.S_IMODE(copy.lstat().st_mode) == stat.S_IMODE(path.lstat().st_mode)
        if path.is_file():
            assert copy.read_bytes() == path.read_bytes()




@pytest.mark.parametrize("task_id", SAMPLE)
def test_the_round_trip_keeps_the_verdicts(exported, harness, task_id):
    out, _ = exported
    for root in (CORE / task_id, out / task_id):
        loaded = LoadedTask(load_task_dir(root), None)
        reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
        assert reference.verdict.complete and reference.harness_error is None, (root, reference.grader_summary())
        noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
        assert noop.verdict.error is None and not noop.verdict.complete, (root, noop.grader_summary())


def test_a_task_graded_by_its_own_script_is_not_exported(tmp_path):
    harbor_task = load_task_dir(Path(__file__).parent / "data" / "harbor_fields" / "hb-workdir")
    with pytest.raises(TaskFormatError) as info:
        export_task(harbor_task, tmp_path)
    assert "its grader is a 'script' grader of its own format" in str(info.value)


def test_the_export_command(tmp_path, capsys):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "log_error_counts").symlink_to(CORE / "log_error_counts")
    assert export_main(["harbor", str(suite), str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.strip() == f"1 tasks written to {tmp_path / 'out'}"
    assert (tmp_path / "out" / "log_error_counts" / "solution" / "solve.sh").read_text().startswith("#!/bin/bash\n")
