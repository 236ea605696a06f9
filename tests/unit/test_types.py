"""The package passes mypy at the level pyproject.toml's [tool.mypy] sets (mypy is pinned in the test extra)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_package_passes_mypy():
    # No importorskip: a run without mypy fails here (pip install -e '.[test]' installs it).
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "pytest_termrl"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Success" in output, output
