"""Grade the agent's work: hidden tests in a fresh sandbox, results on an unforgeable channel."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..sandbox.base import Sandbox, SandboxBackend, TrustedMount
from ..tasks.model import Task

RUNNER = Path(__file__).with_name("runner.py")
TESTS_INSIDE = "/opt/termrl/tests"
RUNNER_INSIDE = "/opt/termrl/runner"


@dataclass
class TestOutcome:
    nodeid: str
    outcome: str
    message: str = ""


@dataclass
class Verdict:
    outcomes: list[TestOutcome] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Why the run does not count as complete beyond failed tests: missing, extra, skipped..."""
    error: str | None = None
    """Set when the verifier itself failed (a harness error: no trustworthy result)."""
    duration_s: float = 0.0

    @property
    def passed(self) -> int:
        return sum(o.outcome == "passed" for o in self.outcomes)

    @property
    def total(self) -> int:
        return len(self.outcomes)

    @property
    def complete(self) -> bool:
        return self.error is None and not self.problems and self.total > 0 and self.passed == self.total

    @property
    def fraction(self) -> float:
        return self.passed / self.total if self.total else 0.0

    def to_dict(self) -> dict:
        return {
            "passed": self.passed,
            "total": self.total,
            "complete": self.complete,
            "problems": list(self.problems),
            "error": self.error,
            "outcomes": {o.nodeid: o.outcome for o in self.outcomes},
            "duration_s": round(self.duration_s, 3),
        }


def trusted_toolchain() -> list[TrustedMount]:
    """The harness's own interpreter and site-packages, at their host paths, read-only."""
    prefixes = sorted({Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), Path(sys.prefix)})
    mounts = []
    for prefix in prefixes:
        if not any(prefix != other and other in prefix.parents for other in prefixes):
            mounts.append(TrustedMount(prefix, str(prefix)))
    return mounts


def run_hidden_tests(
    backend: SandboxBackend,
    sandbox: Sandbox,
    task: Task,
    inventory: tuple[str, ...] | None,
    per_test_timeout_s: float = 20.0,
    scratch: Path | None = None,
) -> Verdict:
    """Snapshot the home, run the task's tests on the copy, and check them against the inventory.

    A task graded by its own script (Harbor's tests/test.sh) goes to the script grader.
    """
    from .script_grader import grader_of, run_script_grader

    if grader_of(task) == "script":
        return run_script_grader(backend, sandbox, task, inventory, per_test_timeout_s, scratch)
    return grade_snapshot(
        backend,
        sandbox,
        scratch,
        lambda home, _snap_dir: _run(backend, home, task, inventory, per_test_timeout_s),
        lambda message: Verdict(error=f"verifier failed: {message}"),
    )


def grade_snapshot(
    backend: SandboxBackend,
    sandbox: Sandbox,
    scratch: Path | None,
    grade: Callable[[Path, Path], Verdict],
    failed: Callable[[str], Verdict],
) -> Verdict:
    """Copy the home, grade the copy with ``grade(home, snapshot folder)``, always remove it.

    Any exception is the harness's failure, turned into a verdict by ``failed``.
    """
    started = time.monotonic()
    snap_dir = (scratch or backend.workroot) / f"snap-{secrets.token_hex(6)}"
    try:
        verdict = grade(sandbox.snapshot(snap_dir), snap_dir)
    except Exception as exc:  # noqa: BLE001 - any failure here is the harness's, reported as such
        verdict = failed(f"{type(exc).__name__}: {exc}")
    finally:
        shutil.rmtree(snap_dir, ignore_errors=True)
    verdict.duration_s = time.monotonic() - started
    return verdict


def _run(backend: SandboxBackend, home: Path, task: Task, inventory, per_test_timeout_s: float) -> Verdict:
    if task.tests_dir is None:
        return Verdict(error=f"task {task.id!r} has no hidden tests")
    mounts = [
        TrustedMount(task.tests_dir.resolve(), TESTS_INSIDE),
        TrustedMount(RUNNER.parent.resolve(), RUNNER_INSIDE),
        *trusted_toolchain(),
    ]
    if task.source_format in ("terminal_bench", "harbor"):
        # Their tests also find their own files at /tests (TEST_DIR), where those harnesses put them.
        mounts.append(TrustedMount(task.tests_dir.resolve(), "/tests"))
    budget = per_test_timeout_s * max(len(inventory or ()), 5) + 60
    argv = [sys.executable, "-I", f"{RUNNER_INSIDE}/{RUNNER.name}", TESTS_INSIDE, str(per_test_timeout_s)]
    body, problem = run_signed(backend, home, argv, mounts, budget, task.workdir, "the hidden tests")
    if body is None:
        return Verdict(error=problem)
    return _judge(body, inventory)


def run_signed(backend: SandboxBackend, home: Path, argv: list[str], mounts: list[TrustedMount], timeout_s: float, cwd: str, what: str) -> tuple[dict | None, str]:
    """Run a trusted runner on a fresh key: (its authenticated body, "") or (None, why there is none)."""
    key = secrets.token_bytes(32)
    run = backend.run_isolated(home, argv, mounts, key, timeout_s=timeout_s, cwd=cwd)
    if run.timed_out:
        return None, f"{what} did not finish within {timeout_s:g} s"
    body = _authenticated_body(run.payload, key)
    if body is None:
        tail = run.log.strip().splitlines()[-5:]
        return None, f"no authenticated result came back from {what}: " + " | ".join(tail)
    return body, ""


def _authenticated_body(payload: bytes, key: bytes) -> dict | None:
    try:
        envelope = json.loads(payload.decode().strip().splitlines()[0])
        body, mac = envelope["body"], envelope["mac"]
    except (ValueError, KeyError, IndexError, TypeError, UnicodeDecodeError):
        return None
    expected = hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
    if not isinstance(mac, str) or not hmac.compare_digest(mac, expected):
        return None
    return json.loads(body)


def _judge(body: dict, inventory: tuple[str, ...] | None) -> Verdict:
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
    return verdict
