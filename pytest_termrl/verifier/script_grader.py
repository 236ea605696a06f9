"""The script grader: a task's own grading script (Harbor's tests/test.sh) decides, by its reward.

Like the pytest verifier it runs after the agent stops, on a snapshot of the home, in a
fresh sandbox, as the agent's user, with the result returned on the nonce-keyed channel of
:mod:`.runner` (the trusted wrapper is :mod:`.script_runner`). What differs is the verdict:
the script writes a reward to ``/logs/verifier/reward.txt`` or ``reward.json``, and the
episode's single hidden test ``test.sh`` passes when the reward reaches the task's
threshold (1.0 unless ``extra["grader_reward_threshold"]`` says otherwise).

Inside the verifier sandbox: the task's tests/ folder read-only at ``/tests`` (where Harbor
puts it), the home at the workdir, ``/logs`` a read-only folder whose ``verifier`` and
``agent`` are links into the sandbox's private /tmp (so the script can write its reward
while nothing outside the sandbox is writable), and ``pytest`` on PATH is the harness's.

``verify.run_hidden_tests`` sends a task here when it asks for its script grader, so
callers that hold a Task need not know which kind it has.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..sandbox.base import Sandbox, SandboxBackend, TrustedMount
from ..tasks.model import Task
from .verify import RUNNER, RUNNER_INSIDE, TestOutcome, Verdict, grade_snapshot, run_signed, trusted_toolchain

SCRIPT_RUNNER = Path(__file__).with_name("script_runner.py")
TESTS_AT = "/tests"
LOGS_AT = "/logs"
REWARD_DIR_INSIDE = "/tmp/termrl-logs/verifier"
SCRIPT_TEST_ID = "test.sh"
DEFAULT_TIMEOUT_S = 300.0
MAX_TIMEOUT_S = 1800.0


@dataclass
class ScriptVerdict(Verdict):
    """A Verdict whose one test is the script, with the native reward it wrote."""

    native_reward: float | None = None
    threshold: float = 1.0
    reward_source: str | None = None
    reward_detail: dict | None = None
    exit_code: int | None = None
    output_tail: str = ""

    @property
    def fraction(self) -> float:
        """The native reward as the partial credit (clamped to [0, 1]); 0 when there is none."""
        if self.native_reward is None or self.error is not None:
            return 0.0
        return min(1.0, max(0.0, self.native_reward / self.threshold if self.threshold > 0 else self.native_reward))

    def to_dict(self) -> dict:
        data = super().to_dict()
        data.update(
            grader="script",
            native_reward=self.native_reward,
            threshold=self.threshold,
            reward_source=self.reward_source,
            reward_detail=dict(self.reward_detail or {}),
            exit_code=self.exit_code,
            output_tail=self.output_tail[-1500:],
        )
        return data


def grader_of(task: Task) -> str:
    """'script' or 'pytest': ``extra["grader"]`` where an importer set it, else the task's field."""
    return (task.extra or {}).get("grader") or task.grader


def script_of(task: Task) -> Path | None:
    value = (task.extra or {}).get("grader_script")
    if value:
        return Path(value)
    if task.tests_dir is not None and (task.tests_dir / SCRIPT_TEST_ID).is_file():
        return task.tests_dir / SCRIPT_TEST_ID
    return None


def run_script_grader(
    backend: SandboxBackend,
    sandbox: Sandbox,
    task: Task,
    inventory: tuple[str, ...] | None,
    per_test_timeout_s: float = 20.0,
    scratch: Path | None = None,
) -> ScriptVerdict:
    """Snapshot the home and run the task's grader script on the copy (same signature as run_hidden_tests)."""
    return grade_snapshot(
        backend,
        sandbox,
        scratch,
        lambda home, snap_dir: _run(backend, home, snap_dir, task, inventory),
        lambda message: ScriptVerdict(error=f"script grader failed: {message}"),
    )


def _logs_folder(snap_dir: Path) -> Path:
    """A folder of links, mounted read-only at /logs: verifier/ and agent/ lead into the sandbox's /tmp."""
    logs = snap_dir / "logs"
    logs.mkdir()
    for name in ("verifier", "agent"):
        os.symlink(f"{Path(REWARD_DIR_INSIDE).parent}/{name}", logs / name)
    os.chmod(logs, 0o755)
    return logs


def _run(backend: SandboxBackend, home: Path, snap_dir: Path, task: Task, inventory) -> ScriptVerdict:
    extra = task.extra or {}
    threshold = float(extra.get("grader_reward_threshold") or 1.0)
    script = script_of(task)
    if script is None or task.tests_dir is None or not script.is_file():
        return ScriptVerdict(error=f"task {task.id!r} has no grader script", threshold=threshold)
    try:
        script_rel = script.resolve().relative_to(task.tests_dir.resolve()).as_posix()
    except ValueError:
        return ScriptVerdict(error=f"the grader script {script} is not inside the tests folder {task.tests_dir}", threshold=threshold)
    timeout = min(float(extra.get("verifier_timeout_s") or DEFAULT_TIMEOUT_S), MAX_TIMEOUT_S)
    mounts = [
        TrustedMount(task.tests_dir.resolve(), TESTS_AT),
        TrustedMount(_logs_folder(snap_dir), LOGS_AT),
        TrustedMount(RUNNER.parent.resolve(), RUNNER_INSIDE),
        *trusted_toolchain(),
    ]
    env = {str(k): str(v) for k, v in (extra.get("grader_env") or {}).items()}
    argv = [
        sys.executable, "-I", f"{RUNNER_INSIDE}/{SCRIPT_RUNNER.name}",
        f"{TESTS_AT}/{script_rel}", str(timeout), task.workdir, REWARD_DIR_INSIDE, json.dumps(env),
    ]
    body, problem = run_signed(backend, home, argv, mounts, timeout + 60, task.workdir, "the grader script")
    if body is None:
        return ScriptVerdict(error=problem, threshold=threshold)
    return judge(body, inventory, threshold)


def judge(body: dict, inventory: tuple[str, ...] | None, threshold: float = 1.0) -> ScriptVerdict:
    """The verdict from the runner's authenticated body: pass iff the reward reaches the threshold."""
    reward = body.get("reward")
    tail = body.get("output_tail") or ""
    verdict = ScriptVerdict(
        native_reward=reward,
        threshold=threshold,
        reward_source=body.get("reward_source"),
        reward_detail=body.get("reward_detail") or {},
        exit_code=body.get("exit_code"),
        output_tail=tail,
    )
    last_lines = "\n".join(tail.strip().splitlines()[-6:])
    if body.get("timed_out"):
        outcome, message = "error", "the grader script timed out"
    elif reward is None:
        outcome, message = "error", body.get("problem") or "no reward"
    elif reward >= threshold:
        outcome, message = "passed", ""
    else:
        outcome, message = "failed", f"reward {reward:g} < {threshold:g} ({body.get('reward_source')})"
    if outcome != "passed" and last_lines:
        message = f"{message}\n{last_lines}"
    verdict.outcomes.append(TestOutcome(SCRIPT_TEST_ID, outcome, message[:2000]))
    if outcome == "error":
        verdict.problems.append(f"{SCRIPT_TEST_ID}: {body.get('problem') or 'timed out'}")
    if inventory is not None and tuple(inventory) != (SCRIPT_TEST_ID,):
        verdict.problems.append(f"the inventory {list(inventory)} is not the script grader's [{SCRIPT_TEST_ID!r}]")
    return verdict
