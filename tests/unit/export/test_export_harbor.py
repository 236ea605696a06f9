"""Export to Harbor: every task of the core suite written as a Harbor task directory, imported back, same verdicts.

``python -m pytest_termrl.export harbor SUITE OUT`` writes a Dockerfile FROM a base-image
argument with the environment files owned by the agent's user and the setup script
COPY'd and run, solution/solve.sh, and tests/test.sh writing /logs/verifier/reward.txt. The
export is read back by the Harbor importer: every task loads, runs offline on bwrap and
is graded by its test.sh. Real episodes on bwrap then check one task of each family of
the core suite (and the hand-written tasks): the reference passes and the no-op fails,
as they do for the native task (the whole suite's round trip is the admission command
run on the export).

Harbor tasks export too: a task graded by its own test.sh keeps it (with its ``[verifier]
env`` and pass threshold), and a multi-step task (tests/data/harbor_steps/hs-two-steps) is
written as ``[[steps]]`` with a folder per step; imported back it has the same steps,
instructions, checks and grader settings, and the plugin freezes it and passes its
reference. A task read by a parser (Terminal-Bench's run-tests.sh) is not exported.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent
from pytest_termrl.export.__main__ import main as export_main
from pytest_termrl.export.harbor import export_suite, export_task
from pytest_termrl.errors import TaskFormatError
from pytest_termrl.report.failure import grader_summary
from pytest_termrl.tasks.importers import load_task_dir, offline_status, scan
from pytest_termrl.tasks.suite import LoadedTask

CORE = Path(__file__).resolve().parents[3] / "task_suites" / "core"
DATA = Path(__file__).resolve().parents[2] / "data"
TWO_STEPS = DATA / "harbor_steps" / "hs-two-steps"
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
    assert dockerfile.endswith("USER 1000:1000\nWORKDIR /home/user\nCOPY --chown=1000:1000 termrl-setup.sh /tmp/termrl-setup.sh\n"
                               "RUN bash /tmp/termrl-setup.sh && rm -f /tmp/termrl-setup.sh\n")
    assert "<<" not in dockerfile, "no heredoc: an engine before Docker 23 cannot parse one offline"
    assert (task_dir / "environment" / "termrl-setup.sh").read_bytes() == (CORE / "git_commit_configs" / "setup.sh").read_bytes()
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
        assert reference.verdict.complete and reference.harness_error is None, (root, grader_summary(reference))
        noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
        assert noop.verdict.error is None and not noop.verdict.complete, (root, grader_summary(noop))


def test_a_task_read_by_a_parser_is_not_exported(tmp_path):
    parsed = load_task_dir(DATA / "tb_graders" / "tb-c-build")
    assert parsed.grader.kind == "parsed"
    with pytest.raises(TaskFormatError) as info:
        export_task(parsed, tmp_path)
    assert "its grader is a 'parsed' grader of its own format; only graders that write a reward" in str(info.value)
    assert not (tmp_path / parsed.id).exists()


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _step_fields(task):
    return [
        (s.name, s.instruction, s.grader.kind, s.grader.env, s.grader.timeout_s, s.grader.reward_threshold, s.agent_timeout_s,
         s.min_reward, _tree(s.tests_dir), s.solution_script is not None)
        for s in task.steps
    ]


def _variant(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    task_dir = shutil.copytree(TWO_STEPS, tmp_path / "hs-variant")
    toml = task_dir / "task.toml"
    for old, new in edits:
        assert old in toml.read_text()
        toml.write_text(toml.read_text().replace(old, new, 1))
    return task_dir


@pytest.mark.parametrize("edits", [
    (),
    (
        ('multi_step_reward_strategy = "mean"', 'multi_step_reward_strategy = "final"'),
        ('name = "create"\n', 'name = "create"\nmin_reward = 1.0\n'),
        ('name = "extend"', 'name = "extend"\nmin_reward = { correctness = 0.5, style = 1 }'),
        ("[verifier]\ntimeout_sec = 60.0", '[verifier]\ntimeout_sec = 60.0\npass_threshold = 0.75\nenv = { SHARED = "yes" }'),
    ),
], ids=["as-is", "every-field"])
def test_a_multi_step_task_round_trips(tmp_path, edits):
    original = load_task_dir(_variant(tmp_path / "in", *edits))
    target = export_task(original, tmp_path / "out")
    assert sorted(p.name for p in target.iterdir()) == ["environment", "steps", "task.toml"]
    for step in original.steps:
        folder = target / "steps" / step.name
        assert (folder / "instruction.md").read_text() == step.instruction + "\n"
        assert _tree(folder / "tests") == _tree(step.tests_dir) and os.access(folder / "tests" / "test.sh", os.X_OK)
        assert os.access(folder / "solution" / "solve.sh", os.X_OK)
    back = load_task_dir(target)
    assert back.source.format == "harbor" and back.notes == () and offline_status(back) == ("yes", [])
    assert (back.id, back.workdir, back.backend, back.setup_script) == (original.id, original.workdir, "bwrap", None)
    assert back.step_reward_strategy == original.step_reward_strategy and back.agent_timeout_s == original.agent_timeout_s
    assert _step_fields(back) == _step_fields(original)
    assert back.instruction == original.instruction and back.grader.kind == original.grader.kind
    if edits:
        assert [s.min_reward for s in back.steps] == [(("reward", 1.0),), (("correctness", 0.5), ("style", 1.0))]
        assert back.steps[0].grader.env == (("SHARED", "yes"), ("EXPECTED", "first")) and back.grader.reward_threshold == 0.75
        assert back.step_reward_strategy == "final"


def test_the_exported_steps_files(tmp_path):
    target = export_task(load_task_dir(TWO_STEPS), tmp_path)
    toml = (target / "task.toml").read_text()
    assert toml.startswith('version = "1.0"\nmulti_step_reward_strategy = "mean"\n')
    assert '[[steps]]\nname = "create"\n\n[steps.agent]\ntimeout_sec = 60.0\n\n[steps.verifier]\ntimeout_sec = 30.0\nenv = { "EXPECTED" = "first" }' in toml
    # The workdir /app is not in the base image: it is made and given to the agent's user.
    dockerfile = (target / "environment" / "Dockerfile").read_text()
    assert "USER root\n" in dockerfile and "WORKDIR /app\nRUN chown 1000:1000 .\nUSER 1000:1000\nWORKDIR /app\n" in dockerfile
    # Read back on bwrap, that chown is what the sandbox already is.
    assert any("chown 1000:1000 . (the workdir is the agent's user's already)" in d for d in load_task_dir(target).dropped_steps)


def test_a_multi_step_export_through_the_plugin(tp, tmp_path):
    suite = tp.path / "suite"
    written, problems = export_suite(TWO_STEPS.parent, suite)
    assert problems == {} and [p.name for p in written] == ["hs_two_steps"]
    (suite / "contracts.jsonl").write_text("")
    tp.run("suite", "--termrl-freeze", timeout=300).assert_outcomes(passed=1)
    contract = json.loads((suite / "contracts.jsonl").read_text())
    assert contract["task_id"] == "hs_two_steps" and tuple(contract["tests"]) == ("step-1::test.sh", "step-2::test.sh")
    tp.run("suite", "--termrl-agent=reference", timeout=300).assert_outcomes(passed=1)
    [reference] = map(json.loads, tp.episodes.read_text().splitlines())
    assert reference["safe_success"] and (reference["tests_passed"], reference["tests_total"]) == (2, 2)
    assert [s["name"] for s in reference["verdict"]["steps"]] == ["create", "extend"] and reference["commands_used"] == 2
    tp.run("suite", "--termrl-agent=noop", timeout=300).assert_outcomes(failed=1)
    [noop] = map(json.loads, tp.episodes.read_text().splitlines())
    assert noop["verdict"]["outcomes"] == {"step-1::test.sh": "failed", "step-2::test.sh": "failed"}


@pytest.mark.parametrize("name", ["hb-workdir", "hb-named-rewards"])
def test_a_task_graded_by_its_own_test_sh_round_trips(tmp_path, harness, name):
    original = load_task_dir(DATA / "harbor_fields" / name)
    back = load_task_dir(export_task(original, tmp_path))
    assert back.grader.kind == original.grader.kind == "script" and _tree(back.tests_dir) == _tree(original.tests_dir)
    assert (back.workdir, back.grader.env, back.grader.timeout_s, back.resources) == (
        original.workdir, original.grader.env, original.grader.timeout_s, original.resources,
    )
    assert offline_status(back) == ("yes", []) and back.notes == ()
    loaded = LoadedTask(back, None)
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.safe_success and reference.harness_error is None, reference.failure_text()
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert noop.verdict.error is None and not noop.verdict.complete


def test_the_export_command(tmp_path, capsys):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "log_error_counts").symlink_to(CORE / "log_error_counts")
    assert export_main(["harbor", str(suite), str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.strip() == f"1 tasks written to {tmp_path / 'out'}"
    assert (tmp_path / "out" / "log_error_counts" / "solution" / "solve.sh").read_text().startswith("#!/bin/bash\n")
