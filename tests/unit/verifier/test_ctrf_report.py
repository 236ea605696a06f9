"""Harbor's task template asks for ``pytest-json-ctrf``: the trusted pytest offers ``--ctrf`` itself.

Harbor's test.sh template runs ``uvx -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest
--ctrf /logs/verifier/ctrf.json ...``. Offline, the uvx stand-in runs the grader's trusted
pytest, whose shim loads ``termrl_ctrf``: the report is written as the plugin would, and a
test.sh that reads it (``hb-ctrf-report`` computes its reward from the report's summary)
runs unchanged, in a real bwrap verifier.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent
from pytest_termrl.tasks.importers import load_task_dir, offline_status
from pytest_termrl.tasks.importers.standin_check import standin_problem
from pytest_termrl.tasks.suite import LoadedTask

PLUGINS = Path(__file__).resolve().parents[3] / "pytest_termrl" / "verifier" / "inside" / "pytest_plugins"
TASK = Path(__file__).resolve().parents[2] / "data" / "harbor_fields" / "hb-ctrf-report"

pytestmark = pytest.mark.usefixtures("import_cache")


def test_the_report_gives_each_test_the_status_pytest_gave_it(tmp_path):
    (tmp_path / "test_mixed.py").write_text(textwrap.dedent("""
        import pytest

        @pytest.fixture
        def broken():
            raise RuntimeError("setup breaks")

        def test_passes():
            pass

        def test_fails():
            assert 1 == 2

        @pytest.mark.skip(reason="not here")
        def test_skipped():
            pass

        @pytest.mark.xfail(reason="known")
        def test_expected_failure():
            assert False

        @pytest.mark.xfail(strict=True, reason="should fail")
        def test_strict_unexpected_pass():
            pass

        def test_setup_error(broken):
            pass
    """))
    report = tmp_path / "logs" / "ctrf.json"  # its folder does not exist yet
    env = {**os.environ, "PYTHONPATH": str(PLUGINS), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "termrl_ctrf", "-p", "no:cacheprovider", "--ctrf", str(report),
                           "test_mixed.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout
    results = json.loads(report.read_text())["results"]
    assert results["tool"] == {"name": "pytest"}
    statuses = {t["name"].split("::")[1]: t["status"] for t in results["tests"]}
    assert statuses == {"test_passes": "passed", "test_fails": "failed", "test_skipped": "skipped",
                        "test_expected_failure": "skipped", "test_strict_unexpected_pass": "failed", "test_setup_error": "failed"}
    summary = results["summary"]
    assert {k: summary[k] for k in ("tests", "passed", "failed", "skipped", "pending", "other")} == {
        "tests": 6, "passed": 1, "failed": 3, "skipped": 2, "pending": 0, "other": 0}
    assert summary["start"] <= summary["stop"]
    failed = next(t for t in results["tests"] if t["name"].endswith("test_setup_error"))
    assert failed["message"] == "setup failed" and "setup breaks" in failed["trace"]


def test_without_the_option_no_report_is_written(tmp_path):
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    env = {**os.environ, "PYTHONPATH": str(PLUGINS), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "termrl_ctrf", "-p", "no:cacheprovider", "test_one.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["test_one.py"]


def test_the_importer_knows_the_stand_ins_meet_the_plugin_pin():
    line = "uvx -p 3.13 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest --ctrf /logs/verifier/ctrf.json /tests/t.py"
    assert standin_problem(line) is None
    assert standin_problem(line.replace("pytest-json-ctrf", "pytest-json-report")) == "the package 'pytest-json-report' is not installed here"
    task = load_task_dir(TASK)
    assert task.grader.kind == "script" and offline_status(task) == ("yes", [])


def test_the_template_grader_runs_unchanged_and_reads_its_report(harness):
    loaded = LoadedTask(load_task_dir(TASK), None)
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.verdict.native_reward == 1.0 and reference.safe_success, reference.verdict.to_dict()
    assert "uvx --with install: pytest==8.4.1 (present: pytest " in "\n".join(reference.verdict.stood_in)
    assert any("pytest-json-ctrf==0.3.5 (provided: the trusted pytest's own --ctrf report)" in line for line in reference.verdict.stood_in)
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert noop.verdict.native_reward == pytest.approx(1 / 3) and not noop.verdict.complete  # only the input check passes
