"""Terminal-Bench script graders: run-tests.sh is the grader, its output read by the parser parser_name names.

The fixture tasks are under tests/data/tb_graders: ``tb-underscore-tests`` (tests named
``*_test.py``, with an xfail), ``tb-c-build`` (run-tests.sh builds the agent's C program
before pytest runs against the binary) and ``tb-other-parser`` (a parser name there is no
parser for). Each is played for real in bwrap sandboxes: the reference must pass, the no-op
must fail, graded by the task's own run-tests.sh. The pytest parser is checked on the
output of real pytest runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_termrl.validity.admission import admit_paths
from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent
from pytest_termrl.validity.freeze import freeze_task
from pytest_termrl.tasks.importers import load_task_dir, offline_status
from pytest_termrl.tasks.suite import LoadedTask
from pytest_termrl.verifier.parsers import PARSERS, NoSummary, parser_problem
from pytest_termrl.verifier.parsers.pytest_summary import parse_line, parse_pytest_summary
from pytest_termrl.verifier.script_grader import ParsedVerdict, judge_parsed
from pytest_termrl.verifier.verify import run_hidden_tests

DATA = Path(__file__).resolve().parents[2] / "data" / "tb_graders"
IMPORTS = Path(__file__).resolve().parents[2] / "data" / "imports" / "runnable" / "terminal_bench"


pytestmark = pytest.mark.usefixtures("import_cache")  # imports land in a cache of this run's own




# -- the pytest parser, on real pytest output ------------------------------------------------------
def _real_pytest_output(tmp_path: Path, *flags: str) -> str:
    (tmp_path / "test_mixed.py").write_text(textwrap.dedent("""\
        import pytest

        def test_ok():
            assert True

        def test_bad():
            assert 1 == 2, "one is not two"

        @pytest.mark.skip(reason="not here")
        def test_skipped():
            pass

        @pytest.mark.xfail(reason="known")
        def test_expected_failure():
            assert False

        @pytest.mark.xfail(reason="fixed since")
        def test_unexpected_pass():
            assert True

        @pytest.fixture
        def broken():
            raise RuntimeError("fixture broke")

        def test_errors(broken):
            pass

        @pytest.mark.parametrize("n", [1, 2])
        def test_param(n):
            assert n == 1
    """))
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_mixed.py", *flags],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120,
    )
    return run.stdout


def test_the_pytest_parser_reads_every_status_as_terminal_bench_counts_it(tmp_path):
    found = {t.nodeid: t for t in parse_pytest_summary(_real_pytest_output(tmp_path, "-rA"))}
    assert {n: t.status for n, t in found.items()} == {
        "test_mixed.py::test_ok": "PASSED",
        "test_mixed.py::test_bad": "FAILED",
        "test_mixed.py:9": "SKIPPED",
        "test_mixed.py::test_expected_failure": "XFAIL",
        "test_mixed.py::test_unexpected_pass": "XPASS",
        "test_mixed.py::test_errors": "ERROR",
        "test_mixed.py::test_param[1]": "PASSED",
        "test_mixed.py::test_param[2]": "FAILED",
    }
    outcomes = {n: t.outcome for n, t in found.items()}
    assert sorted(n for n, o in outcomes.items() if o == "passed") == [
        "test_mixed.py:9", "test_mixed.py::test_expected_failure", "test_mixed.py::test_ok", "test_mixed.py::test_param[1]",
    ]
    assert "one is not two" in found["test_mixed.py::test_bad"].message
    assert found["test_mixed.py:9"].message == "not here"


def test_without_ra_pytest_lists_no_passed_lines_and_the_parser_sees_only_the_rest(tmp_path):
    found = {t.nodeid: t.status for t in parse_pytest_summary(_real_pytest_output(tmp_path))}
    assert "PASSED" not in found.values() and found["test_mixed.py::test_bad"] == "FAILED"


def test_output_without_a_summary_has_no_verdict():
    with pytest.raises(NoSummary):
        parse_pytest_summary("collected 3 items\n3 passed in 0.01s\n")
    assert parse_line("random text") is None and parse_line("PASSED") is None
    assert parse_line("\x1b[32mPASSED\x1b[0m t.py::test_a").nodeid == "t.py::test_a"


def test_a_test_with_a_failure_and_a_teardown_error_keeps_its_failure():
    output = "=== short test summary info ===\nFAILED t.py::test_a - assert 0\nERROR t.py::test_a - teardown\nPASSED t.py::test_b\n"
    assert [(t.nodeid, t.status) for t in parse_pytest_summary(output)] == [("t.py::test_a", "FAILED"), ("t.py::test_b", "PASSED")]


def test_unknown_parser_names_are_refused_by_name():
    assert sorted(PARSERS) == ["pytest"] and parser_problem("pytest") is None
    assert parser_problem("swebench") == "parser_name 'swebench' has no parser here (known: pytest)"


# -- judging the runner's body ---------------------------------------------------------------------
SUMMARY = "=== short test summary info ===\nPASSED t.py::test_a\nFAILED t.py::test_b - assert 1 == 2\nXFAIL t.py::test_c - known\n"


def test_judge_parsed_gives_partial_credit_and_holds_the_inventory():
    verdict = judge_parsed({"output": SUMMARY, "exit_code": 1}, None)
    assert isinstance(verdict, ParsedVerdict)
    assert (verdict.passed, verdict.total, verdict.complete) == (2, 3, False)
    assert verdict.to_dict()["statuses"] == {"t.py::test_a": "PASSED", "t.py::test_b": "FAILED", "t.py::test_c": "XFAIL"}
    assert verdict.to_dict()["grader"] == "parsed" and verdict.to_dict()["parser"] == "pytest"
    frozen = judge_parsed({"output": SUMMARY}, ("t.py::test_a", "t.py::test_c", "t.py::test_gone"))
    assert [o.outcome for o in frozen.outcomes] == ["passed", "passed", "missing"]
    assert any("did not run: t.py::test_gone" in p for p in frozen.problems)
    assert any("not in the inventory: t.py::test_b" in p for p in frozen.problems)


def test_a_script_without_a_summary_is_a_verifier_error_naming_it():
    verdict = judge_parsed({"output": "bash: uv: command not found\n", "output_tail": "bash: uv: command not found\n", "exit_code": 127}, None)
    assert verdict.error.startswith("verifier_error: run-tests.sh ended without a test summary for the 'pytest' parser (exit code 127)")
    assert "uv: command not found" in verdict.error
    timed_out = judge_parsed({"output": "", "timed_out": True}, None)
    assert timed_out.error is None and not timed_out.complete and "timed out" in timed_out.problems[0]


# -- classification at import ----------------------------------------------------------------------
def test_run_tests_scripts_that_are_more_than_pytest_become_parsed_graders():
    underscore = load_task_dir(DATA / "tb-underscore-tests")
    assert (underscore.grader.kind, underscore.grader.parser) == ("parsed", "pytest")
    assert underscore.grader.script == DATA / "tb-underscore-tests" / "run-tests.sh"
    build = load_task_dir(DATA / "tb-c-build")
    assert (build.grader.kind, build.backend, offline_status(build)) == ("parsed", "bwrap", ("yes", []))
    other = load_task_dir(DATA / "tb-other-parser")
    assert (other.grader.kind, other.grader.parser) == ("parsed", "swebench")


def test_a_plain_pytest_run_tests_keeps_the_trusted_pytest():
    task = load_task_dir(IMPORTS / "tb-csv-total")
    assert task.grader.kind == "pytest" and task.grader.parser is None and "offline-runnable via trusted pytest" in task.grader.note


def test_a_parsed_grader_that_installs_over_the_network_says_which_line(tmp_path):
    task_dir = shutil.copytree(DATA / "tb-c-build", tmp_path / "tb-net")
    (task_dir / "run-tests.sh").write_text("#!/bin/bash\npip install pytest scipy\ngcc -o /tmp/build/wc /app/wc.c\npytest $TEST_DIR/test_wc.py -rA\n")
    task = load_task_dir(task_dir)
    assert task.grader.kind == "parsed"
    assert offline_status(task) == (
        "no", ["network installs in its grader: line 2: pip install pytest scipy (pip install; offline: the package 'scipy' is not installed here)"]
    )


SHARED_SETUP = "#!/bin/bash\nsource $TEST_DIR/setup-uv-pytest.sh\n{between}\nbash $TEST_DIR/run-uv-pytest.sh\n"
"""A run-tests.sh that runs Terminal-Bench's own scripts, which its harness puts beside the tests and the task lacks."""


def _shared_scripts_task(tmp_path: Path, between: str) -> Path:
    task_dir = shutil.copytree(IMPORTS / "tb-csv-total", tmp_path / "tb-shared")
    (task_dir / "run-tests.sh").write_text(SHARED_SETUP.format(between=between))
    return task_dir


def test_a_run_tests_of_terminal_benchs_shared_scripts_is_read_with_them_and_keeps_the_trusted_pytest(tmp_path):
    task = load_task_dir(_shared_scripts_task(tmp_path, "uv add pyyaml"))
    assert task.grader.kind == "pytest", task.grader
    assert ("run-tests.sh, with Terminal-Bench's run-uv-pytest.sh and setup-uv-pytest.sh read in, needs the network: "
            "line 2: apt-get update") in task.grader.note


@pytest.mark.parametrize("between, kind", [("uv add pyyaml", "pytest"), ("wc -l /app/sales.csv", "parsed")])
def test_a_task_of_terminal_benchs_shared_scripts_passes_with_its_reference_and_fails_with_the_noop(harness, tmp_path, between, kind):
    """Graded by the trusted pytest, or by run-tests.sh itself running the two scripts from $TEST_DIR, as Terminal-Bench
    puts them there."""
    loaded = LoadedTask(load_task_dir(_shared_scripts_task(tmp_path, between)), None)
    assert loaded.task.grader.kind == kind
    if kind == "parsed":
        assert sorted(p.name for p in loaded.task.tests_dir.iterdir()) == ["run-uv-pytest.sh", "setup-uv-pytest.sh", "test_outputs.py"]
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.verdict.complete, reference.verdict.to_dict()
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert noop.verdict.error is None and not noop.verdict.complete, noop.verdict.to_dict()


# -- real episodes on bwrap ------------------------------------------------------------------------
@pytest.mark.parametrize("name, noop_passed", [("tb-underscore-tests", 1), ("tb-c-build", 2)])
def test_reference_passes_and_noop_fails_by_the_tasks_own_run_tests(harness, name, noop_passed):
    loaded = LoadedTask(load_task_dir(DATA / name), None)
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    verdict = reference.verdict
    assert isinstance(verdict, ParsedVerdict) and verdict.complete, verdict.to_dict()
    # Without a frozen contract, editing wc.c in place is a change nothing permitted yet.
    assert reference.safe_success == (name == "tb-underscore-tests")
    assert verdict.total == 3 and verdict.exit_code == 0
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert noop.verdict.error is None and not noop.verdict.complete
    assert noop.verdict.passed == noop_passed and noop.reward == pytest.approx(0.5 * noop_passed / 3)


def test_the_frozen_inventory_holds_for_a_parsed_grader(harness):
    loaded = LoadedTask(load_task_dir(DATA / "tb-c-build"), None)
    outcome, _, sandbox = harness.play_fresh(loaded, ReferenceAgent(), "inventory", keep_open=True)
    try:
        inventory = tuple(o.nodeid for o in outcome.verdict.outcomes)
        assert inventory == tuple(f"../tests/test_wc.py::{n}" for n in ("test_it_builds", "test_empty_input", "test_words_are_counted_once"))
        again = run_hidden_tests(harness.backend, sandbox, loaded.task, inventory)
        assert again.complete
        more = run_hidden_tests(harness.backend, sandbox, loaded.task, (*inventory, "../tests/test_wc.py::test_removed"))
        assert not more.complete and more.outcomes[-1].outcome == "missing"
    finally:
        sandbox.close()


def test_run_tests_sees_test_dir_the_tests_and_itself_at_slash_tests(harness, tmp_path):
    task_dir = shutil.copytree(DATA / "tb-c-build", tmp_path / "tb-env")
    (task_dir / "tests" / "test_env.py").write_text(textwrap.dedent("""\
        import os

        def test_layout():
            assert os.environ["TEST_DIR"] == "/tests"
            assert sorted(os.listdir("/tests")) == ["run-tests.sh", "test_env.py", "test_wc.py"]
            assert os.getcwd() == "/app"
    """))
    (task_dir / "run-tests.sh").write_text("#!/bin/bash\ntouch /tests/forged 2>/dev/null && echo forged\npytest $TEST_DIR/test_env.py -rA\n")
    outcome, _, _ = harness.play_fresh(LoadedTask(load_task_dir(task_dir), None), NoopAgent(), "env")
    assert outcome.verdict.complete, outcome.verdict.to_dict()
    assert "forged" not in outcome.verdict.output_tail


def test_a_run_tests_that_prints_no_summary_is_a_harness_error(harness, tmp_path):
    task_dir = shutil.copytree(DATA / "tb-c-build", tmp_path / "tb-silent")
    (task_dir / "run-tests.sh").write_text("#!/bin/bash\necho 'compiling...'\nexit 3\n")
    outcome, _, _ = harness.play_fresh(LoadedTask(load_task_dir(task_dir), None), ReferenceAgent(), "silent")
    assert outcome.verdict.error.startswith("verifier_error: run-tests.sh ended without a test summary"), outcome.verdict.to_dict()
    assert "exit code 3" in outcome.verdict.error and "compiling..." in outcome.verdict.error


def test_an_unknown_parser_is_refused_at_admission_and_by_the_verifier(harness):
    task = load_task_dir(DATA / "tb-other-parser")
    result = {r.task_id: r for r in admit_paths(harness, [DATA])}
    assert result["tb_other_parser"].reasons == [
        "parser_name 'swebench' has no parser here (known: pytest): the output of run-tests.sh cannot be read"
    ]
    assert result["tb_c_build"].admitted and result["tb_underscore_tests"].admitted and result["tb_uv_installs"].admitted
    assert result["tb_uv_installs"].stood_in[-1] == "uv run: ran pytest" and result["tb_c_build"].stood_in == []
    assert (result["tb_c_build"].grader, result["tb_c_build"].parser) == ("parsed", "pytest")
    outcome, _, _ = harness.play_fresh(LoadedTask(task, None), ReferenceAgent(), "refused")
    assert outcome.verdict.error == "verifier_error: run-tests.sh: parser_name 'swebench' has no parser here (known: pytest)"


# -- offline stand-ins for installers --------------------------------------------------------------
def test_a_typical_run_tests_runs_offline_through_the_stand_ins(harness):
    task = load_task_dir(DATA / "tb-uv-installs")
    assert (task.grader.kind, offline_status(task)) == ("parsed", ("yes", []))
    loaded = LoadedTask(task, None)
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.verdict.complete and reference.safe_success, reference.verdict.to_dict()
    assert reference.verdict.to_dict()["stood_in"] == [
        "apt-get update: nothing done",
        "apt-get install: curl",
        "substituted: uv-installer: curl https://astral.sh/uv/0.7.13/install.sh: uv's installer: the uv stand-in is already on PATH",
        "uv venv .tbench-testing",
        f"uv pip install: pytest==8.4.1 (present: pytest {pytest.__version__})",
        "uv run: ran pytest",
    ]
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert noop.verdict.error is None and (noop.verdict.passed, noop.verdict.total) == (0, 2)


def _with_run_tests(tmp_path: Path, script: str) -> LoadedTask:
    task_dir = shutil.copytree(DATA / "tb-uv-installs", tmp_path / "tb-variant")
    (task_dir / "run-tests.sh").write_text(script)
    return LoadedTask(load_task_dir(task_dir), None)


def test_uvx_runs_the_trusted_pytest(harness, tmp_path):
    loaded = _with_run_tests(tmp_path, "#!/bin/bash\ncp /app/slug.py /tmp/slug_under_test.py\nuvx -p 3.13 -w pytest==8.4.1 pytest $TEST_DIR/slug_test.py -rA\n")
    assert offline_status(loaded.task) == ("yes", [])
    outcome, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "uvx")
    assert outcome.verdict.complete and "uvx: ran pytest" in outcome.verdict.stood_in


@pytest.mark.parametrize(
    "install, reason",
    [
        ("pip install definitely-not-installed-pkg==1.0", "pip: the package 'definitely-not-installed-pkg' is not installed here and there is no network to fetch it"),
        ("pip3 install pluggy==0.1", "pip3: pluggy==0.1: pluggy "),
        ("apt-get install -y definitely-not-a-tool", "apt-get: the package 'definitely-not-a-tool' is not installed here (no 'definitely-not-a-tool' on PATH)"),
    ],
)
def test_an_install_of_what_is_absent_fails_with_one_line_naming_it(harness, tmp_path, install, reason):
    loaded = _with_run_tests(tmp_path, f"#!/bin/bash\n{install} || echo \"install failed: $?\"\ncp /app/slug.py /tmp/slug_under_test.py\npytest $TEST_DIR/slug_test.py -rA\n")
    status, reasons = offline_status(loaded.task)
    assert status == "no" and reasons[0].startswith(f"network installs in its grader: line 2: {install}")
    outcome, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "absent")
    lines = outcome.verdict.output_tail.splitlines()
    said = [line for line in lines if line.startswith("termrl offline stand-in:")]
    assert len(said) == 1 and reason in said[0], lines[:5]
    assert "install failed: 1" in lines
    assert any(line.startswith(f"{install.split()[0]}: refused: ") for line in outcome.verdict.stood_in)


def test_freezing_a_parsed_grader_task_records_its_per_test_inventory(harness):
    result = freeze_task(harness, LoadedTask(load_task_dir(DATA / "tb-c-build"), None))
    assert result.problems == []
    assert result.contract.tests == tuple(
        f"../tests/test_wc.py::{n}" for n in ("test_it_builds", "test_empty_input", "test_words_are_counted_once")
    )
    assert [p["path"] for p in result.contract.permitted] == ["/app/wc.c"]  # a Terminal-Bench task: the whole machine


def test_a_grader_that_runs_the_agents_code_around_pytests_summary_is_named():
    from pytest_termrl.tasks.importers.grader_trust import agent_code_around_summary

    script = textwrap.dedent("""\
        #!/bin/bash
        gcc --version
        apt-get install -y curl && echo "building"
        make -C /app all
        python3 $TEST_DIR/helper.py
        ./build/prog --self-test | tee /tmp/out
        pytest $TEST_DIR/test_outputs.py -rA
        bash report.sh
    """)
    found = agent_code_around_summary(script, "/app")
    assert [line.split(" pytest prints")[0] for line in found] == [
        "line 4 runs `make -C /app all` before",
        "line 6 runs `./build/prog --self-test` before",
        "line 8 runs `bash report.sh` after",
    ]
    assert agent_code_around_summary("make all\n", "/app") == ()  # no pytest: no summary to add to
    assert agent_code_around_summary("cd /app\npip install pytest\npytest /tests -rA\n", "/app") == ()
