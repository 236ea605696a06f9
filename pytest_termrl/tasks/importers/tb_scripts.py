"""Terminal-Bench's own test scripts, which a task's ``run-tests.sh`` may run from ``$TEST_DIR``.

Terminal-Bench's harness puts two scripts of its own beside a task's tests: one that sets
up uv and pytest in the working folder, one that runs pytest on ``test_outputs.py``. Many
tasks' ``run-tests.sh`` is just ``source $TEST_DIR/setup-uv-pytest.sh`` and ``bash
$TEST_DIR/run-uv-pytest.sh`` (with a ``uv add`` between), and the tasks do not ship them.
The importer reads such a script with the two inlined, so it is judged as what it does;
a script that stays the grader finds them in a copy of the tests folder.
"""

from __future__ import annotations

import re
from pathlib import Path

SETUP_UV_PYTEST = """#!/bin/bash
# Terminal-Bench's test set-up, as its harness provides it: curl, uv, and a uv project in the working folder with pytest.
apt-get update
apt-get install -y curl
curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh
source "$HOME/.local/bin/env"
uv init
uv add pytest==8.4.1
"""

RUN_UV_PYTEST = """#!/bin/bash
# Terminal-Bench's test run, as its harness provides it: pytest on the task's test_outputs.py, every outcome listed.
uv run pytest "$TEST_DIR/test_outputs.py" -rA
"""

SHARED = {"setup-uv-pytest.sh": SETUP_UV_PYTEST, "run-uv-pytest.sh": RUN_UV_PYTEST}
"""Each script's name in ``$TEST_DIR`` and what it does."""

_CALL = re.compile(r'^[ \t]*(?:source|\.|bash|sh)[ \t]+"?\$(?:TEST_DIR|\{TEST_DIR\})/([\w.-]+\.sh)"?[ \t]*$', re.M)


def missing_scripts(script_text: str, tests_dir: Path) -> dict[str, str]:
    """The shared scripts ``run-tests.sh`` runs from ``$TEST_DIR`` that the task's tests folder does not hold."""
    return {name: SHARED[name] for name in _CALL.findall(script_text)
            if name in SHARED and not (tests_dir / name).exists()}


def inlined(script_text: str, tests_dir: Path) -> str:
    """``run-tests.sh`` with each call of a missing shared script replaced by the script's commands."""
    missing = missing_scripts(script_text, tests_dir)

    def body(match: re.Match) -> str:
        name = match.group(1)
        if name not in missing:
            return match.group(0)
        return "\n".join(line for line in missing[name].splitlines() if line and not line.startswith("#"))

    return _CALL.sub(body, script_text)
