"""The wheel, not only the editable install, carries every file that runs inside a sandbox.

The wheel is built from this checkout and unpacked into a folder that alone provides
``pytest_termrl`` (``PYTHONPATH``, ahead of the editable install); from there the shipped
conformance suite runs on bwrap, its verifier tests running the wheel's own runners, and a
script-graded task whose grader asks uv for its tools is admitted, so the script runner and
the stand-in tools of the wheel ran inside the verifier's sandbox.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import DATA, REPO

INSIDE = (
    "pytest_termrl/verifier/inside/runner.py",
    "pytest_termrl/verifier/inside/script_runner.py",
    "pytest_termrl/verifier/inside/blame.py",
    "pytest_termrl/verifier/inside/channel.py",
    "pytest_termrl/verifier/inside/pytest_plugins/termrl_ctrf.py",
    "pytest_termrl/standins/inside/tools.py",
    "pytest_termrl/report/html/static/report.js",
    "pytest_termrl/report/html/static/report.css",
)
"""Files read or run by path, never imported by the package: only package data brings them."""


@pytest.fixture(scope="module")
def wheel_site(tmp_path_factory) -> Path:
    """The unpacked wheel, with the checkout's task suites beside the package (the conformance suite plays them)."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)],
                   check=True, capture_output=True, text=True)
    (wheel,) = out.glob("pytest_termrl-*.whl")
    site = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        missing = [name for name in INSIDE if name not in names]
        assert not missing, f"the wheel lacks {missing}: check package-data in pyproject.toml"
        archive.extractall(site)
    (site / "task_suites").symlink_to(REPO / "task_suites")
    return site


def _from_wheel(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def test_the_package_is_imported_from_the_wheel(wheel_site, tmp_path):
    proc = _from_wheel(wheel_site, "-c", "import pytest_termrl.verifier.trusted as t; print(t.RUNNERS_DIR); print(t.STANDINS_DIR)", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    runners, standins = proc.stdout.split()
    assert Path(runners) == wheel_site / "pytest_termrl" / "verifier" / "inside"
    assert Path(standins) == wheel_site / "pytest_termrl" / "standins" / "inside"


def test_the_conformance_suite_passes_from_the_wheel(wheel_site, tmp_path):
    proc = _from_wheel(wheel_site, "-m", "pytest", "--pyargs", "pytest_termrl.sandbox.conformance", "--termrl-sandbox=bwrap",
                       "-p", "no:cacheprovider", "-q", "-rs", cwd=tmp_path)
    tail = proc.stdout[-3000:]
    assert proc.returncode == 0, tail
    assert "skipped" not in tail.splitlines()[-1], tail
    assert " passed" in tail.splitlines()[-1], tail


def test_a_script_grader_with_installer_lines_is_admitted_from_the_wheel(wheel_site, tmp_path):
    task = DATA / "tb_graders" / "tb-uv-installs"
    proc = _from_wheel(wheel_site, "-m", "pytest_termrl.admission", str(task), "--json", str(tmp_path / "admission.json"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (row,) = json.loads((tmp_path / "admission.json").read_text())
    assert row["admitted"] and row["reference_passes"] and row["noop_fails"], row
    assert row["stood_in"], row
