"""Every ``python -m pytest_termrl.<module>`` the docs name keeps working under that name, wherever its code lives."""

from __future__ import annotations

import subprocess
import sys

import pytest

DOCUMENTED = (
    "pytest_termrl.admission",
    "pytest_termrl.audit",
    "pytest_termrl.export",
    "pytest_termrl.report",
    "pytest_termrl.suitegen",
    "pytest_termrl.training",
    "pytest_termrl.sandbox.image",
    "pytest_termrl.agents.embedded",
)


@pytest.mark.parametrize("module", DOCUMENTED)
def test_the_documented_command_answers_help(module, tmp_path):
    proc = subprocess.run([sys.executable, "-m", module, "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage:" in proc.stdout.lower(), proc.stdout[:500]
