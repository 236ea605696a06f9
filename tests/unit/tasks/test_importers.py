"""Importers: Terminal-Bench, Harbor and DockerLess tasks loaded as the same Task, and admitted.

The task folders are under tests/data/imports: ``runnable`` (well-formed, offline-runnable
here), ``unrunnable`` (well-formed, but needing an image, the network or a reference) and
``malformed`` (each broken in one named way). Loading is checked field by field; the
admission runs real episodes in real bwrap sandboxes (the no-op must fail, the reference
must pass, graded by each task's own grader), and the script grader is checked against
rewards a grader script writes, fails to write, or has rewritten behind its back.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from pytest_termrl.validity.admission import admit_paths, admit_task, main as admission_main
from pytest_termrl.sandbox.layout import workdir_alias
from pytest_termrl.agents.builtin import CommandsAgent, NoopAgent, ReferenceAgent
from pytest_termrl.errors import SandboxError, TaskFormatError
from pytest_termrl.tasks.contracts import hash_task_files
from pytest_termrl.tasks.importers import detect_format, load_any, load_task_dir, offline_status, scan
from pytest_termrl.tasks.importers.dockerfile import plan_dockerfile
from pytest_termrl.tasks.importers.reference import solution_wrapper
from pytest_termrl.tasks.importers.scripts import analyse_script, split_segments
from pytest_termrl.tasks.importers.dockerless import load_dockerless
from pytest_termrl.tasks.model import Task
from pytest_termrl.tasks.suite import LoadedTask
from pytest_termrl.verifier.inside import script_runner
from pytest_termrl.verifier.script_grader import ScriptVerdict, judge
from pytest_termrl.verifier.verify import run_hidden_tests

DATA = Path(__file__).resolve().parents[2] / "data" / "imports"
RUNNABLE, UNRUNNABLE, MALFORMED = DATA / "runnable", DATA / "unrunnable", DATA / "malformed"


pytestmark = pytest.mark.usefixtures("import_cache")  # imports land in a cache of this run's own




def by_id(path: Path) -> dict[str, Task]:
    tasks, problems = scan(path)
    assert not problems, problems
    return {t.id: t for t in tasks}


# -- detection and dispatch -----------------------------------------------------------------
def test_detect_format_tells_each_layout_apart():
    assert detect_format(RUNNABLE / "terminal_bench" / "tb-csv-total") == "terminal_bench"
    assert detect_format(RUNNABLE / "harbor" / "hb-word-freq") == "harbor"
    assert detect_format(RUNNABLE / "dockerless" / "rows.jsonl") == "dockerless"
    assert detect_format(Path(__file__).resolve().parents[3] / "task_suites" / "core" / "log_error_counts") == "native"
    assert detect_format(RUNNABLE) is None
    assert detect_format(Path(__file__).resolve().parents[3] / "task_suites" / "core" / "contracts.jsonl") is None


def test_load_any_reads_every_format_in_one_folder(tmp_path):
    suite = tmp_path / "mixed"
    shutil.copytree(RUNNABLE / "terminal_bench" / "tb-csv-total", suite / "tb-csv-total")
    shutil.copytree(RUNNABLE / "harbor" / "hb-word-freq", suite / "hb-word-freq")
    shutil.copy(RUNNABLE / "dockerless" / "rows.jsonl", suite / "rows.jsonl")
    shutil.copytree(Path(__file__).resolve().parents[3] / "task_suites" / "core" / "log_error_counts", suite / "log_error_counts")
    tasks = load_any(suite)
    assert sorted((t.id, t.source.format) for t in tasks) == [
        ("dl_commit_count", "dockerless"), ("dl_count_errors", "dockerless"), ("dl_make_executable", "dockerless"),
        ("hb_word_freq", "harbor"), ("log_error_counts", "native"), ("tb_csv_total", "terminal_bench"),
    ]
    assert all(isinstance(t, Task) for t in tasks)


def test_load_any_raises_on_the_first_malformed_task_and_scan_keeps_the_rest():
    with pytest.raises(TaskFormatError):
        load_any(MALFORMED / "terminal_bench")
    tasks, problems = scan(MALFORMED / "dockerless")
    assert sorted(t.id for t in tasks) == ["dl_net_setup", "dl_ok"]
    assert len(problems) == 8


def test_importing_never_writes_into_the_task_directory():
    task_dir = RUNNABLE / "harbor" / "hb-repo-tag"
    before = hash_task_files(task_dir)
    task = load_task_dir(task_dir)
    assert hash_task_files(task_dir) == before
    assert task.root == task_dir
    assert task.source.import_cache not in (task_dir, *task_dir.parents)


def test_the_cache_is_reused_and_follows_the_task_contents(tmp_path):
    task_dir = shutil.copytree(RUNNABLE / "terminal_bench" / "tb-csv-total", tmp_path / "tb-csv-total")
    first, again = load_task_dir(task_dir), load_task_dir(task_dir)
    assert first.source.import_cache == again.source.import_cache
    (task_dir / "solution.sh").write_text("mkdir -p /app/reports && echo 1234.50 > /app/reports/total.txt\n")
    changed = load_task_dir(task_dir)
    assert changed.source.import_cache != first.source.import_cache
    assert "echo 1234.50" in changed.solution_text()


# -- Terminal-Bench ---------------------------------------------------------------------------
def test_terminal_bench_task_fields():
    task = load_task_dir(RUNNABLE / "terminal_bench" / "tb-csv-total")
    assert task.id == "tb_csv_total" and task.source.id == "tb-csv-total"
    assert task.source.format == "terminal_bench"
    assert task.instruction.startswith("The file /app/sales.csv has a header row")
    assert (task.difficulty, task.category, task.tags) == ("easy", "data_processing", ("csv", "awk"))
    assert task.workdir == "/app"
    assert task.inputs == ("sales.csv",)
    assert task.tests_dir == RUNNABLE / "terminal_bench" / "tb-csv-total" / "tests"
    assert task.agent_timeout_s == 360.0 and task.grader.timeout_s == 60.0
    # The image's files, without the task's own (task.yaml, tests, solution, ...).
    env = sorted(p.relative_to(task.environment_dir).as_posix() for p in task.environment_dir.rglob("*") if p.is_file())
    assert env == ["notes/README.txt", "sales.csv"]
    # RUN steps: tmux/asciinema are Terminal-Bench's own; the mkdir is replayed in the workdir.
    setup = task.setup_script.read_text()
    assert "cd /app && mkdir -p reports" in setup and "apt-get" not in setup
    assert any("tmux asciinema" in step for step in task.dropped_steps)
    # The reference runs as its own bash script in /app, not sourced into the agent's shell.
    solution = task.solution_text()
    assert "(cd /app && bash /tmp/termrl-solution/solve.sh)" in solution
    assert "awk -F, 'NR > 1" in solution
    assert (task.grader.kind, task.backend) == ("pytest", "bwrap")
    assert offline_status(task)[0] == "via trusted pytest"
    assert "run-tests.sh needs the network" in task.grader.note


def test_terminal_bench_compound_run_steps_are_replayed_whole():
    task = load_task_dir(RUNNABLE / "terminal_bench" / "tb-git-history")
    setup = task.setup_script.read_text()
    assert "for i in 1 2 3 4 5; do" in setup and "done )" in setup
    assert task.dropped_steps and task.image.needs_docker == ()
    assert offline_status(task) == ("yes", [])


def test_terminal_bench_solution_yaml_becomes_the_reference(tmp_path):
    task_dir = shutil.copytree(RUNNABLE / "terminal_bench" / "tb-csv-total", tmp_path / "tb-yaml")
    (task_dir / "solution.sh").unlink()
    (task_dir / "solution.yaml").write_text(
        "- command: mkdir -p /app/reports\n  min_timeout_sec: 1\n- command: echo 1234.50 > /app/reports/total.txt\n"
    )
    text = load_task_dir(task_dir).solution_text()
    assert "mkdir -p /app/reports\necho 1234.50 > /app/reports/total.txt" in text


def test_terminal_bench_tasks_that_cannot_run_offline_say_why():
    tasks = by_id(UNRUNNABLE / "terminal_bench")
    postgres = tasks["tb_postgres_report"]
    assert postgres.backend == "docker"
    status, reasons = offline_status(postgres)
    assert status == "no"
    text = "\n".join(reasons)
    # Only the real blockers: the base the host cannot stand in for and the second service (a package a step
    # installs is named by that step when a task is built, never guessed at load)
    assert "postgresql-client-16" not in text
    assert "FROM postgres:16" in text
    assert "2 services (client, db)" in text
    scipy = tasks["tb_scipy_fit"]
    assert offline_status(scipy) == ("no", ["the tests import scipy, which the trusted toolchain lacks"])
    assert offline_status(tasks["tb_no_solution"]) == ("no", ["missing reference solution"])


@pytest.mark.parametrize(
    "name, where, expected",
    [
        ("tb-bad-yaml", "task.yaml", "not valid YAML at line 3"),
        ("tb-no-instruction", "task.yaml: field 'instruction'", "expected a non-empty string"),
        ("tb-no-tests", "tests", "missing: expected the tests as tests/test_*.py"),
        ("tb-bad-copy", "Dockerfile:3: field 'COPY'", "source 'data.txt' does not exist"),
        ("tb-bad-difficulty", "task.yaml: field 'difficulty'", "expected a string"),
        ("tb-bad-solution-yaml", "solution.yaml: field '[1].command'", "expected a non-empty string"),
    ],
)
def test_malformed_terminal_bench_tasks_name_the_file_and_field(name, where, expected):
    with pytest.raises(TaskFormatError) as info:
        load_task_dir(MALFORMED / "terminal_bench" / name)
    message = str(info.value)
    assert f"{name}/{where}" in message and expected in message


# -- Harbor ------------------------------------------------------------------------------------
def test_harbor_task_fields_and_script_grader():
    task = load_task_dir(RUNNABLE / "harbor" / "hb-word-freq")
    assert (task.id, task.source.format, task.workdir) == ("hb_word_freq", "harbor", "/app")
    assert (task.difficulty, task.category, task.tags) == ("easy", "text_processing", ("text", "counting"))
    assert task.source.original_category == "text processing"
    assert task.grader.kind == "script" and task.grader.reward_threshold == 1.0
    assert str(task.grader.script).endswith("hb-word-freq/tests/test.sh")
    assert task.grader.timeout_s == 120.0 and task.agent_timeout_s == 300.0
    assert task.inputs == ("poem.txt",)
    solution = task.solution_text()
    # solution/ travels with solve.sh, and /solution/ points at it.
    assert "cat > /tmp/termrl-solution/count.py" in solution
    assert "python3 /tmp/termrl-solution/count.py /app/poem.txt" in solution
    assert offline_status(task) == ("yes", [])


def test_harbor_pytest_shaped_grader_runs_with_the_trusted_pytest():
    task = load_task_dir(RUNNABLE / "harbor" / "hb-repo-tag")
    assert task.grader.kind == "pytest"
    assert task.title == "Tag the parser fix as v2.1" and task.source.id == "termrl-fixtures/hb-repo-tag"
    status, notes = offline_status(task)
    assert status == "via trusted pytest" and "test.sh needs the network" in notes[0]


def test_harbor_verifier_env_and_grader_tooling():
    task = load_task_dir(RUNNABLE / "harbor" / "hb-config-json")
    assert task.grader.kind == "script"
    assert dict(task.grader.env) == {"APP_ENV": "grading"}
    assert any("pytest==8.3.3" in step for step in task.dropped_steps)
    assert sorted(p.name for p in task.environment_dir.rglob("*") if p.is_file()) == ["settings.bak", "settings.ini"]


def test_harbor_tasks_that_cannot_run_offline_say_why():
    tasks = by_id(UNRUNNABLE / "harbor")
    status, reasons = offline_status(tasks["hb_remote_grader"])
    assert status == "no" and reasons[0].startswith("network installs in its grader: line 2: curl")
    prebuilt = tasks["hb_prebuilt_image"]
    assert prebuilt.backend == "docker" and prebuilt.image.docker_image == "harbor-prebuilt:task-650750c3ca77eaea"


@pytest.mark.parametrize(
    "name, where, expected",
    [
        ("hb-no-test-sh", "tests/test.sh", "a Harbor task's grader is tests/test.sh"),
        ("hb-bad-toml", "task.toml", "not valid TOML"),
        ("hb-no-instruction", "instruction.md", "missing: the task's instruction"),
        ("hb-no-environment", "environment/Dockerfile", "needs environment/Dockerfile or [environment] docker_image"),
        ("hb-bad-verifier-env", "task.toml: field 'verifier.env'", "expected a table of strings"),
        ("hb-negative-timeout", "task.toml: field 'agent.timeout_sec'", "expected a positive number"),
    ],
)
def test_malformed_harbor_tasks_name_the_file_and_field(name, where, expected):
    with pytest.raises(TaskFormatError) as info:
        load_task_dir(MALFORMED / "harbor" / name)
    message = str(info.value)
    assert f"{name}/{where}" in message and expected in message


# -- DockerLess -------------------------------------------------------------------------------
def test_dockerless_rows_become_native_task_directories():
    tasks, errors = load_dockerless(RUNNABLE / "dockerless" / "rows.jsonl")
    assert errors == []
    found = {t.id: t for t in tasks}
    assert sorted(found) == ["dl_commit_count", "dl_count_errors", "dl_make_executable"]
    count = found["dl_count_errors"]
    assert count.source.format == "dockerless" and count.source.path.endswith("rows.jsonl:1")
    assert (count.root / "task.toml").is_file() and count.root.name == "dl_count_errors"
    assert count.inputs == ("logs/app.log",) and count.category == "logs"
    assert (count.environment_dir / "logs" / "old" / "app.log.1").read_text() == "2024-04-30 ERROR old\n"
    assert [p.name for p in count.tests_dir.iterdir()] == ["test_outputs.py"]
    # Flat "dockerless.setup" / "dockerless.files" keys, a dict of test files.
    commits = found["dl_commit_count"]
    assert commits.setup_script.read_text().startswith("cd /home/user || exit 1\nset -e\nmkdir -p work")
    assert (commits.environment_dir / "work" / "NOTES.txt").is_file()
    assert [p.name for p in commits.tests_dir.iterdir()] == ["test_count.py"]
    # Modes and base64 contents.
    exe = found["dl_make_executable"]
    assert oct((exe.environment_dir / "bin" / "tool.sh").stat().st_mode & 0o777) == "0o644"
    blob = exe.environment_dir / "data" / "blob.bin"
    assert blob.read_bytes() == bytes(range(16)) and blob.stat().st_mode & 0o777 == 0o600
    assert exe.setup_script is None


def test_malformed_dockerless_rows_name_the_line_and_field_and_the_rest_load():
    tasks, errors = load_dockerless(MALFORMED / "dockerless" / "bad_rows.jsonl")
    messages = {int(e.path.rsplit(":", 1)[1]): str(e) for e in errors}
    assert "not valid JSON" in messages[1]
    assert "field 'tests'" in messages[2]
    assert "field 'dockerless.files['../etc/passwd']'" in messages[3]
    assert "field 'dockerless.files['a.txt'].mode'" in messages[4]
    assert "field 'dockerless.files': expected an object" in messages[5]
    assert "field 'id'" in messages[6]
    assert "expected a JSON object" in messages[7]
    assert "duplicate task id 'dl_ok' (first on line 9)" in messages[10]
    assert sorted(t.id for t in tasks) == ["dl_net_setup", "dl_ok"]
    net = next(t for t in tasks if t.id == "dl_net_setup")
    assert offline_status(net)[0] == "no" and "its setup needs the network" in offline_status(net)[1][0]


# -- the pieces ---------------------------------------------------------------------------------
def test_script_analysis_sorts_lines():
    findings = analyse_script(textwrap.dedent("""\
        #!/bin/bash
        set -e
        apt-get update && apt-get install -y curl
        source $HOME/.local/bin/env
        uvx -p 3.13 -w pytest==8.4.1 pytest /tests/test_state.py -rA
        if [ $? -eq 0 ]; then
          echo 1 > /logs/verifier/reward.txt
        fi
        make -C /app check
    """))
    assert [line.split(":")[0] for line in findings.network] == ["line 3", "line 5"]
    assert findings.pytest == ["line 5: uvx -p 3.13 -w pytest==8.4.1 pytest /tests/test_state.py -rA"]
    assert findings.rewards == ["line 7: echo 1 > /logs/verifier/reward.txt"]
    assert findings.other == ["line 9: make -C /app check"]


def test_split_segments_respects_quotes():
    assert split_segments("a && b 'c && d'; e \"f;g\"") == ["a", "b 'c && d'", "e \"f;g\""]


def test_dockerfile_plan_blockers(tmp_path):
    (tmp_path / "ctx").mkdir()
    ctx = tmp_path / "ctx"
    (ctx / "a.txt").write_text("a\n")
    (ctx / "skip.log").write_text("x\n")
    (ctx / ".dockerignore").write_text("*.log\n")
    dockerfile = ctx / "Dockerfile"
    dockerfile.write_text(textwrap.dedent("""\
        FROM node:20 AS build
        FROM python:3.12-slim
        RUN apt-get install -y definitely-not-a-real-tool-xyz
        ADD https://example.com/data.tgz /app/
        WORKDIR /srv
        WORKDIR app
        COPY . ./
        COPY a.txt /etc/a.txt
        ENV MODE=prod DEBUG=0
    """))
    plan = plan_dockerfile(dockerfile, ctx, {"Dockerfile"})
    assert plan.workdir == "/srv/app" and plan.env == {"MODE": "prod", "DEBUG": "0"}
    text = "\n".join(plan.blockers)
    assert "multi-stage build" in text
    assert "installs definitely-not-a-real-tool-xyz over the network (apt)" in text
    assert "ADD https://example.com/data.tgz (downloads over the network)" in text
    assert "copies a.txt to /etc/a.txt, outside the workdir /srv/app" in text
    assert sorted(rel for _, rel in plan.copies) == [".dockerignore", "a.txt"]


def test_solution_wrapper_keeps_text_readable_and_binary_exact():
    text = solution_wrapper("echo hi\n", "/app", "x", {"data.bin": b"\x00\x01", "notes.txt": b"a\n"})
    assert "cat > /tmp/termrl-solution/notes.txt <<'__TERMRL_EOF__'\na\n__TERMRL_EOF__" in text
    assert "base64 -d > /tmp/termrl-solution/data.bin" in text
    assert text.index("solve.sh <<") > text.index("notes.txt <<")


def test_workdir_alias_refuses_system_folders():
    assert workdir_alias("/home/user") is None and workdir_alias("/home/user/project") is None
    assert workdir_alias("/app") == "/app" and workdir_alias("/workspace/repo/") == "/workspace/repo"
    for bad in ("/", "/usr/local/app", "/etc", "/tmp/x", "relative"):
        with pytest.raises(SandboxError):
            workdir_alias(bad)


# -- the reward a grader script writes ----------------------------------------------------------
@pytest.mark.parametrize(
    "files, expected",
    [
        ({"reward.txt": "1\n"}, (1.0, "reward.txt", None)),
        ({"reward.txt": "0.25", "reward.json": '{"reward": 1}'}, (0.25, "reward.txt", None)),
        ({"reward.json": '{"reward": 0.5, "accuracy": 0.9}'}, (0.5, "reward.json", None)),
        ({"reward.json": '{"score": 0.75}'}, (0.75, "reward.json", None)),
        ({"reward.json": "1.0"}, (1.0, "reward.json", None)),
        ({"reward.json": '{"a": 1, "b": 0.5}'}, (0.5, "reward.json", None)),
        ({"reward.json": '{"a": "good"}'}, (None, "reward.json", "reward.json names no numeric reward")),
        ({"reward.txt": "passed"}, (None, "reward.txt", "reward.txt does not hold a number: 'passed'")),
        ({"reward.txt": "nan"}, (None, "reward.txt", "reward.txt does not hold a number: 'nan'")),
        ({}, (None, None, "the script wrote no reward (/logs/verifier/reward.txt or reward.json)")),
    ],
)
def test_read_reward(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    reward, source, _, problem = script_runner.read_reward(str(tmp_path))
    assert (reward, source, problem) == expected


def test_read_reward_refuses_links_and_fifos(tmp_path):
    (tmp_path / "elsewhere").write_text("1\n")
    os.symlink(tmp_path / "elsewhere", tmp_path / "reward.txt")
    os.mkfifo(tmp_path / "reward.json")
    reward, _, _, problem = script_runner.read_reward(str(tmp_path))
    assert reward is None and "no reward" in problem


def test_judge_maps_the_reward_to_the_one_hidden_test():
    passed = judge({"reward": 1.0, "reward_source": "reward.txt", "exit_code": 0}, ("test.sh",))
    assert passed.complete and passed.fraction == 1.0 and passed.to_dict()["native_reward"] == 1.0
    partial = judge({"reward": 0.5, "reward_source": "reward.json", "exit_code": 1, "output_tail": "1 failed"}, None)
    assert not partial.complete and partial.fraction == 0.5
    assert partial.outcomes[0].outcome == "failed" and "reward 0.5 < 1" in partial.outcomes[0].message
    lowered = judge({"reward": 0.5}, None, threshold=0.5)
    assert lowered.complete
    missing = judge({"reward": None, "problem": "the script wrote no reward"}, None)
    assert not missing.complete and missing.outcomes[0].outcome == "error" and missing.problems
    wrong = judge({"reward": 1.0}, ("test_outputs.py::test_a",))
    assert not wrong.complete and "inventory" in wrong.problems[0]


# -- in the sandbox ------------------------------------------------------------------------------
def test_a_terminal_bench_task_runs_as_root_in_its_workdir_over_the_whole_machine(harness):
    task = load_task_dir(RUNNABLE / "terminal_bench" / "tb-csv-total")
    assert task.user == "root" and task.whole_machine
    sandbox = harness.new_sandbox(LoadedTask(task, None), "alias")
    try:
        result = sandbox.run("pwd; id -u; echo $HOME; ls -d /app/notes /app/reports /app/sales.csv; echo x > /app/probe; echo y > /etc/probe")
        assert result.output.splitlines() == ["/app", "0", "/root", "/app/notes", "/app/reports", "/app/sales.csv"]
        changed = sandbox.change_record().read().entries
        assert "/app/probe" in changed and "/etc/probe" in changed
    finally:
        sandbox.close()


def test_admission_of_the_runnable_fixtures(harness):
    results = {r.task_id: r for r in admit_paths(harness, [RUNNABLE])}
    assert sorted(results) == [
        "dl_commit_count", "dl_count_errors", "dl_make_executable", "hb_config_json", "hb_repo_tag",
        "hb_word_freq", "tb_csv_total", "tb_git_history",
    ]
    for result in results.values():
        assert result.admitted, result.to_dict()
        assert result.noop_fails and result.reference_passes and not result.reasons
    assert results["tb_csv_total"].offline == "via trusted pytest"
    assert results["hb_repo_tag"].offline == "via trusted pytest"
    assert results["hb_word_freq"].grader == "script" and results["hb_word_freq"].offline == "yes"
    assert "reward 1" in results["hb_config_json"].reference_detail


def test_admission_of_the_unrunnable_fixtures_says_why(harness):
    results = {r.task_id: r for r in admit_paths(harness, [UNRUNNABLE])}
    assert not any(r.admitted for r in results.values())
    postgres = results["tb_postgres_report"]
    assert postgres.reference_passes is None and "not run: the task needs its docker image" in postgres.reference_detail
    remote = results["hb_remote_grader"]
    assert remote.noop_fails is False and remote.reference_passes is False  # its grader cannot run here: a grader error, not a failing no-op
    assert any("network installs in its grader" in r for r in remote.reasons)
    assert any("the script wrote no reward" in r for r in remote.reasons)
    assert results["tb_no_solution"].reasons == ["missing reference solution"]
    assert results["tb_no_solution"].noop_fails is True
    assert any("No module named 'scipy'" in r for r in results["tb_scipy_fit"].reasons)


def test_admission_command_prints_a_row_per_task_and_fails_on_malformed(capsys):
    code = admission_main([str(MALFORMED / "harbor"), "--static"])
    out = capsys.readouterr().out
    assert code == 1
    for name in ("hb-bad-toml", "hb-no-test-sh", "hb-no-environment", "hb-no-instruction"):
        assert name in out
    assert "0 of 6 admitted" in out and "malformed: " in out


def _harbor_task(tmp_path: Path, test_sh: str, solve: str = "echo done > /app/out.txt\n", threshold: float | None = None) -> Task:
    root = tmp_path / "hb-custom"
    (root / "environment").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "solution").mkdir()
    toml = 'version = "1.0"\n[metadata]\ndifficulty = "easy"\n'
    if threshold is not None:
        toml += f"[verifier]\npass_threshold = {threshold}\n"
    (root / "task.toml").write_text(toml)
    (root / "instruction.md").write_text("Write done to /app/out.txt.\n")
    (root / "environment" / "Dockerfile").write_text("FROM python:3.12-slim\nWORKDIR /app\n")
    (root / "tests" / "test.sh").write_text(test_sh)
    (root / "solution" / "solve.sh").write_text(solve)
    return load_task_dir(root)


def test_script_grader_partial_reward_and_threshold(harness, tmp_path):
    script = "#!/bin/bash\nmkdir -p /logs/verifier\necho 0.5 > /logs/verifier/reward.txt\n"
    strict = _harbor_task(tmp_path / "a", script)
    outcome, _, _ = harness.play_fresh(LoadedTask(strict, None), ReferenceAgent(), "partial")
    assert isinstance(outcome.verdict, ScriptVerdict)
    assert outcome.verdict.native_reward == 0.5 and not outcome.verdict.complete and outcome.reward == 0.25
    lenient = _harbor_task(tmp_path / "b", script, threshold=0.5)
    outcome, _, _ = harness.play_fresh(LoadedTask(lenient, None), ReferenceAgent(), "lenient")
    assert outcome.verdict.complete and outcome.safe_success and outcome.reward == 1.0
    assert outcome.verdict.to_dict()["threshold"] == 0.5


def test_script_grader_sees_tests_logs_workdir_and_trusted_pytest(harness, tmp_path):
    script = textwrap.dedent("""\
        #!/bin/bash
        ok=1
        [ "$(pwd)" = /app ] || ok=0
        [ -f /tests/test.sh ] || ok=0
        [ "$(cat /app/out.txt)" = done ] || ok=0
        [ "$TEST_DIR" = /tests ] || ok=0
        pytest --version >/dev/null 2>&1 || ok=0
        touch /tests/forged 2>/dev/null && ok=0
        echo "$ok" > /logs/verifier/reward.txt
    """)
    task = _harbor_task(tmp_path, script)
    outcome, _, _ = harness.play_fresh(LoadedTask(task, None), ReferenceAgent(), "env")
    assert outcome.verdict.native_reward == 1.0, outcome.verdict.to_dict()
    noop, _, _ = harness.play_fresh(LoadedTask(task, None), NoopAgent(), "noop")
    assert noop.verdict.native_reward == 0.0 and not noop.verdict.complete


def test_a_process_left_running_cannot_rewrite_the_reward(harness, tmp_path):
    # The agent's program, run by the grader, forks a child that writes reward 1 after the
    # grader wrote 0; the runner kills it before reading the reward.
    solve = textwrap.dedent("""\
        cat > /app/run.sh <<'EOF'
        (sleep 1; echo 1 > /logs/verifier/reward.txt) >/dev/null 2>&1 &
        EOF
    """)
    script = "#!/bin/bash\nbash /app/run.sh\necho 0 > /logs/verifier/reward.txt\n"
    task = _harbor_task(tmp_path, script, solve=solve)
    outcome, _, _ = harness.play_fresh(LoadedTask(task, None), ReferenceAgent(), "rewrite")
    assert outcome.verdict.native_reward == 0.0 and not outcome.verdict.complete


def test_a_forged_result_on_the_channel_is_refused(harness, tmp_path, monkeypatch):
    task = _harbor_task(tmp_path, "#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n")
    loaded = LoadedTask(task, None)
    outcome, oracle, sandbox = harness.play_fresh(loaded, ReferenceAgent(), "forge", keep_open=True)
    try:
        backend = harness.backend
        real = backend.run_isolated

        def forged(request):
            run = real(request)
            envelope = json.loads(run.payload.decode())
            body = json.loads(envelope["body"])
            body["reward"] = 1.0
            envelope["body"] = json.dumps(body, sort_keys=True)
            return type(run)(run.returncode, json.dumps(envelope).encode(), run.log, run.timed_out)

        monkeypatch.setattr(backend, "run_isolated", forged)
        verdict = run_hidden_tests(backend, sandbox, task, None)
        assert verdict.error and "no authenticated result" in verdict.error
    finally:
        sandbox.close()


def test_setup_replayed_from_a_dockerfile_builds_the_history(harness):
    task = load_task_dir(RUNNABLE / "terminal_bench" / "tb-git-history")
    sandbox = harness.new_sandbox(LoadedTask(task, None), "history")
    try:
        result = sandbox.run("git -C /app/project log --format=%s | head -2; git -C project rev-list --count HEAD")
        assert result.output.splitlines() == ["Release 0.5", "Release 0.4", "5"]
        changelog = sandbox.run("cat /app/project/CHANGELOG.md").output  # the setup wrote it inside, as root
        assert changelog == "# Changelog\n\n" + "".join(f"- release 0.{i}\n" for i in range(1, 6))
    finally:
        sandbox.close()


def test_admit_task_reports_a_setup_that_fails(harness, tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({
        "id": "dl-broken-setup", "instruction": "x", "dockerless": {"setup": "exit 3"},
        "tests": "def test_x():\n    assert False\n", "solution": "true",
    }) + "\n")
    task = load_any(rows)[0]
    result = admit_task(harness, task)
    assert not result.admitted and result.offline == "no"
    assert any(r.startswith(("setup failed: SandboxError", "setup failed: SetupFailed")) and "code 3" in r for r in result.reasons), result.reasons


def test_commands_after_an_imported_reference_run_in_the_same_shell(harness):
    # The reference runs as a separate bash: its `set -euo pipefail` does not leak.
    task = load_task_dir(RUNNABLE / "terminal_bench" / "tb-csv-total")
    outcome, _, _ = harness.play_fresh(LoadedTask(task, None), CommandsAgent(["false; echo still-here; pwd"]), "after")
    assert outcome.commands[0].exit_code == 0
    assert outcome.commands[1].output.splitlines() == ["still-here", "/app"]


def test_only_the_solution_folder_itself_is_pointed_at_the_unpacked_reference():
    from pytest_termrl.tasks.importers.reference import SOLUTION_INSIDE, solution_wrapper

    script = "python3 /solution/helper.py\ncp /app/solution/solve.py /app/out.py\ncd /solution && ls\nX=/solution\necho /solutions/a\n"
    wrapped = solution_wrapper(script, "/app", "a Harbor task", rewrite_dir="/solution")
    assert f"python3 {SOLUTION_INSIDE}/helper.py" in wrapped and f"cd {SOLUTION_INSIDE} && ls" in wrapped and f"X={SOLUTION_INSIDE}\n" in wrapped
    assert "cp /app/solution/solve.py /app/out.py" in wrapped, "a solution/ folder of the task's own workdir is left alone"
    assert "echo /solutions/a" in wrapped
