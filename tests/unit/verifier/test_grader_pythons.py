"""Graders that reach pytest and pip through their interpreter, and the import checks around them.

``python3 -m pytest`` is the trusted pytest in the verifier sandbox and ``python3 -m pip`` the
offline pip stand-in; anything else runs the system's python3. Fixture
``tests/data/harbor_fields/hb-python-m-pytest`` (its Dockerfile makes /app from /, its tests
import the agent's module) is played in real bwrap sandboxes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent
from pytest_termrl.tasks.importers import load_task_dir, offline_status
from pytest_termrl.tasks.importers.dockerfile import plan_dockerfile
from pytest_termrl.tasks.importers.scripts import missing_test_imports
from pytest_termrl.tasks.importers.standin_check import standin_problem
from pytest_termrl.tasks.suite import LoadedTask

TASK = Path(__file__).resolve().parents[2] / "data" / "harbor_fields" / "hb-python-m-pytest"

pytestmark = pytest.mark.usefixtures("import_cache")


def test_the_task_runs_on_bwrap_with_its_own_script():
    task = load_task_dir(TASK)
    assert (task.backend, task.grader.kind, task.workdir) == ("bwrap", "script", "/app")
    assert offline_status(task) == ("yes", []) and task.notes == ()


def test_python3_dash_m_pytest_is_the_trusted_pytest_and_python3_the_systems(harness):
    loaded = LoadedTask(load_task_dir(TASK), None)
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.verdict.native_reward == 1.0 and reference.safe_success, reference.verdict.to_dict()
    tail = reference.verdict.output_tail
    assert "PASSED ../tests/test_outputs.py::test_counts_words" in tail and "python3 itself still runs: 3" in tail
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert noop.verdict.native_reward == 0.0 and "ModuleNotFoundError: No module named 'wordcount'" in noop.verdict.output_tail


@pytest.mark.parametrize(
    "line, expected",
    [
        ("python3 -m pip install --break-system-packages -q pytest==9.0.3 2>/dev/null || true", None),
        ("python -m pip install pytest > /tmp/pip.log 2>&1", None),
        ("python3 -m pip install no-such-package-here", "the package 'no-such-package-here' is not installed here"),
        ("pip install -q no-such-package-here 2> /dev/null", "the package 'no-such-package-here' is not installed here"),
    ],
)
def test_pip_through_the_interpreter_is_the_stand_in(line, expected):
    assert standin_problem(line) == expected


def test_a_folder_made_outside_the_workdir_is_named(tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:24.04\nRUN mkdir -p /app /app/data\nRUN mkdir -p /srv/cache\nWORKDIR /app\n")
    plan = plan_dockerfile(tmp_path / "Dockerfile", tmp_path)
    assert plan.blockers == [f"{tmp_path / 'Dockerfile'}:3: makes /srv/cache, outside the workdir /app"]
    assert plan.setup == ["cd / && mkdir -p /app /app/data", "cd / && mkdir -p /srv/cache"]


def test_a_module_the_task_names_is_the_agents_not_a_missing_package(tmp_path):
    task_dir = shutil.copytree(TASK, tmp_path / "task")
    tests = task_dir / "tests"
    assert missing_test_imports(tests) == []  # wordcount.py: the instruction names it
    (tests / "test_more.py").write_text("import termrl_nowhere_module\n")
    assert missing_test_imports(tests) == ["termrl_nowhere_module"]


def test_an_unmet_pin_of_a_trusted_pytest_grader_is_noted(tmp_path):
    task_dir = shutil.copytree(TASK, tmp_path / "hb-pinned")
    (task_dir / "tests" / "test.sh").write_text(
        "#!/bin/bash\npip install pytest no-such-package-here==1.0\npytest /tests/test_outputs.py\n"
        "if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n"
    )
    task = load_task_dir(task_dir)
    assert task.grader.kind == "pytest" and offline_status(task)[0] == "via trusted pytest"
    assert task.grader.note.endswith(
        "not met offline, the trusted toolchain's versions serve instead: line 2: pip install pytest no-such-package-here==1.0 "
        "(pip install; offline: the package 'no-such-package-here' is not installed here)"
    )
