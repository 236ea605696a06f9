"""The shipped conformance suite as a backend author runs it: ``pytest --pyargs
pytest_termrl.sandbox.conformance --termrl-sandbox=NAME``, from a folder of their own.

The suite's tests themselves run here for every backend through tests/unit/sandbox/test_isolation.py,
test_shell.py, test_verifier.py and test_verifier_hardening.py.
"""

from __future__ import annotations

import json

import pytest

SUITE = "pytest_termrl.sandbox.conformance"

# One test of each module, so a run stays short: isolation, the shell, the verifier, its hardening.
SUBSET = " or ".join(
    (
        "test_can_write_home_and_tmp",
        "test_state_carries_over",
        "test_the_answer_alone_passes",
        "test_git_settings_of_the_agents_repository_run_no_code_in_the_verifier",
    )
)

RECORDING_CONFTEST = '''
import json
from pathlib import Path

from pytest_termrl.sandbox.bwrap.backend import BwrapBackend

LOG = Path(__file__).with_name("backends.jsonl")


def record(**event):
    with LOG.open("a") as handle:
        handle.write(json.dumps(event) + "\\n")


class RecordingBackend(BwrapBackend):
    """bwrap under a name the registry does not know, telling what it made and when it closed."""

    name = "recording"

    def create(self, label):
        record(event="create", backend=id(self), label=label)
        return super().create(label)

    def close(self):
        record(event="close", backend=id(self))
        super().close()


def pytest_termrl_make_sandbox(config, name, settings, workroot):
    if name != "recording":
        return None
    backend = RecordingBackend(settings, workroot)
    record(event="made", backend=id(backend), workroot=workroot, command_timeout_s=settings.command_timeout_s)
    return backend
'''


def run_suite(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makeini("[pytest]\n")
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v", "--pyargs", SUITE, "-k", SUBSET, *args, timeout=600)


def test_the_suite_runs_for_a_backend_named_on_the_command_line(pytester):
    result = run_suite(pytester, "--termrl-sandbox=bwrap")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        [
            "*test_isolation.py::test_can_write_home_and_tmp PASSED*",
            "*test_shell.py::test_state_carries_over PASSED*",
            "*test_verifier.py::test_the_answer_alone_passes PASSED*",
            "*test_verifier_hardening.py::test_git_settings_of_the_agents_repository_run_no_code_in_the_verifier PASSED*",
        ]
    )


def test_a_backend_from_a_conftest_hook_is_the_one_tested(pytester):
    # The registry has no backend called "recording": only the conftest's hook can make one.
    pytester.makeconftest(RECORDING_CONFTEST)
    result = run_suite(pytester, "--termrl-sandbox=recording")
    result.assert_outcomes(passed=4)
    events = [json.loads(line) for line in (pytester.path / "backends.jsonl").read_text().splitlines()]
    made = [e for e in events if e["event"] == "made"]
    # One backend per make_sandbox call (isolation, shell), one for the verifier module and one
    # for the hardening module; the hook is asked with no work root.
    assert len(made) == 4 and all(e["workroot"] is None for e in made), events
    assert sorted(e["command_timeout_s"] for e in made) == [10.0, 10.0, 20, 20]
    labels = sorted(e["label"] for e in events if e["event"] == "create")
    assert "rw" in labels and "shell" in labels and any(label.startswith("verify-") for label in labels), labels
    # Every backend the suite made was closed, and only those.
    assert sorted(e["backend"] for e in events if e["event"] == "close") == sorted(e["backend"] for e in made)
