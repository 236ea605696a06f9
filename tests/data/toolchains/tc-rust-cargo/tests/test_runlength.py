"""The hidden Rust tests, run one by one against the agent's crate (cargo test --exact)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def crate(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runlength") / "crate"
    shutil.copytree("/app", folder, ignore=shutil.ignore_patterns("target"))
    (folder / "tests").mkdir(exist_ok=True)
    shutil.copy(HERE / "hidden.rs", folder / "tests" / "hidden.rs")
    return folder


def cargo_test(crate, name):
    env = {**os.environ, "CARGO_TARGET_DIR": str(crate / "target")}
    result = subprocess.run(["cargo", "test", "--offline", "--test", "hidden", "--", "--exact", name],
                            cwd=crate, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr


def test_single_runs(crate):
    cargo_test(crate, "single_runs")


def test_long_runs(crate):
    cargo_test(crate, "long_runs")


def test_empty(crate):
    cargo_test(crate, "empty")
