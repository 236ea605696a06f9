"""The task suites the verifier's conformance tests play: core and tbdl of a source checkout.

The suites are not part of the wheel; outside a checkout the modules that play them skip,
saying so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import pytest_termrl

SUITES = Path(pytest_termrl.__file__).resolve().parent.parent / "task_suites"
CORE = SUITES / "core"
TBDL = SUITES / "tbdl"


def require_task_suites() -> None:
    """Skip the calling test module (at import) unless the checkout's core and tbdl suites are there."""
    missing = [str(suite) for suite in (CORE, TBDL) if not (suite / "contracts.jsonl").is_file()]
    if missing:
        pytest.skip(f"these tests play tasks of a pytest-termrl source checkout; missing: {', '.join(missing)}", allow_module_level=True)


def solution_of(task_id: str) -> str:
    """The reference solution of a core task."""
    return (CORE / task_id / "solution.sh").read_text()
