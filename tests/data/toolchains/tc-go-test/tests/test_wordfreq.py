"""The hidden Go tests, run one by one with the agent's package (go test -run)."""

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wordfreq")
    for path in [*Path("/app").glob("*.go"), Path("/app/go.mod"), HERE / "wordfreq_test.go"]:
        shutil.copy(path, folder)
    return folder


def go_test(package, name):
    result = subprocess.run(["go", "test", "-count=1", "-run", f"^{name}$", "."], cwd=package, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_counts_each_word(package):
    go_test(package, "TestCountsEachWord")


def test_ignores_case(package):
    go_test(package, "TestIgnoresCase")


def test_empty(package):
    go_test(package, "TestEmpty")
