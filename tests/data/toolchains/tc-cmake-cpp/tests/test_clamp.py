"""The hidden C++ checks, built with the agent's library by CMake and run one by one."""

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def checks(tmp_path_factory):
    source = tmp_path_factory.mktemp("clamp") / "src"
    shutil.copytree("/app", source, ignore=shutil.ignore_patterns("build"))
    shutil.copy(HERE / "checks.cpp", source / "checks.cpp")
    build = source.parent / "build"
    for argv in (["cmake", "-S", str(source), "-B", str(build), "-DCHECKS=checks.cpp"], ["cmake", "--build", str(build)]):
        result = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
    return build / "checks"


def check(binary, name):
    result = subprocess.run([str(binary), name], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, f"check {name} failed: {result.stderr}"


def test_inside(checks):
    check(checks, "inside")


def test_below(checks):
    check(checks, "below")


def test_above(checks):
    check(checks, "above")
