"""The pytest grader: a task's hidden test files, run by the trusted pytest, checked against the inventory.

The tests run in a fresh sandbox made from a snapshot of the home, under
:mod:`.runner` (plugin autoload off, isolated mode, no conftest from the workspace, a
per-test timeout); the per-test outcomes come back signed. The set of tests that ran
must equal the frozen inventory; a skipped, missing or erroring test fails the verdict.

A test file that does not collect through the grader's own fault (a syntax error in it, a
module only the trusted side could provide: the rule is :mod:`.blame`'s), or a pytest that
refuses to start on the tests folder (exit code 4: a conftest.py there that does not
import), is a harness error, ``verifier_error: FILE:LINE ...``, never the agent's failure.
"""

from __future__ import annotations

from pathlib import Path

from ..sandbox.base import SandboxBackend, TrustedMount
from ..tasks.model import Task
from .trusted import GradedHome, run_signed, runner_argv, runner_mounts
from .verdict import TestOutcome, Verdict

RUNNER = "runner.py"
TESTS_INSIDE = "/opt/termrl/tests"


def grade(backend: SandboxBackend, home: GradedHome, snap_dir: Path, task: Task, inventory: tuple[str, ...] | None, test_timeout_s: float) -> Verdict:
    """Run the task's test files on the home's copy and judge them against the inventory."""
    if task.tests_dir is None:
        return Verdict(error=f"task {task.id!r} has no hidden tests")
    mounts = [TrustedMount(task.tests_dir.resolve(), TESTS_INSIDE, staged=True), *runner_mounts()]
    if task.source.format in ("terminal_bench", "harbor"):
        # Their tests also find their own files at /tests (TEST_DIR), where those harnesses put them.
        mounts.append(TrustedMount(task.tests_dir.resolve(), "/tests", staged=True))
    budget = test_timeout_s * max(len(inventory or ()), 5) + 60
    argv = runner_argv(RUNNER, TESTS_INSIDE, str(test_timeout_s), task.tests_dir.name)
    body, problem = run_signed(backend, home, argv, mounts, budget, task.workdir, "the hidden tests")
    if body is None:
        return Verdict(error=problem)
    return judge(body, inventory)


VERIFIER_ERROR = "verifier_error"
USAGE_ERROR = 4
"""pytest's exit code when it cannot start: bad options, or a conftest.py that does not import."""


def failed(message: str) -> Verdict:
    """The verdict when grading itself raised: a harness error."""
    return Verdict(error=f"verifier failed: {message}")


def judge(body: dict, inventory: tuple[str, ...] | None) -> Verdict:
    """The verdict from the runner's authenticated body, against the inventory (or what was collected)."""
    outcomes_by_id: dict[str, str] = body.get("outcomes", {})
    messages: dict[str, str] = body.get("messages", {})
    expected = list(inventory) if inventory is not None else list(body.get("collected", []))
    verdict = Verdict()
    for nodeid in expected:
        outcome = outcomes_by_id.get(nodeid, "missing")
        verdict.outcomes.append(TestOutcome(nodeid, outcome, messages.get(nodeid, "")))
    missing = [n for n in expected if n not in outcomes_by_id]
    extra = sorted(set(outcomes_by_id) - set(expected))
    if missing:
        verdict.problems.append(f"tests in the inventory that did not run: {', '.join(missing)}")
    if extra:
        verdict.problems.append(f"tests that ran but are not in the inventory: {', '.join(extra)}")
    for error in body.get("collection_errors", []):
        verdict.problems.append(f"collection error in {error['nodeid'] or 'tests'}: {error['message']}")
    skipped = [o.nodeid for o in verdict.outcomes if o.outcome == "skipped"]
    if skipped:
        verdict.problems.append(f"skipped tests count as failures: {', '.join(skipped)}")
    grader_errors = [error["message"] for error in body.get("grader_errors", [])]
    if body.get("exit_code") == USAGE_ERROR and not outcomes_by_id:
        grader_errors.append("pytest could not start on the hidden tests (exit code 4: a conftest.py there does not import, or an option was refused)")
    if grader_errors:
        verdict.error = f"{VERIFIER_ERROR}: " + "; ".join(grader_errors)
    return verdict
