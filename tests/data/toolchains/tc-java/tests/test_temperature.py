"""The hidden Java checks, compiled with the agent's class and run one by one."""

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("temperature")
    for path in (Path("/app/Temperature.java"), HERE / "Checks.java"):
        shutil.copy(path, folder)
    result = subprocess.run(["javac", "-d", str(folder), str(folder / "Temperature.java"), str(folder / "Checks.java")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return folder


def check(classes, name):
    result = subprocess.run(["java", "-Xshare:off", "-cp", str(classes), "Checks", name], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"check {name} failed: {result.stderr}"


def test_freezing(classes):
    check(classes, "freezing")


def test_boiling(classes):
    check(classes, "boiling")


def test_minus_forty(classes):
    check(classes, "minus_forty")
