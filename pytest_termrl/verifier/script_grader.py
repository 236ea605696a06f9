"""The script grader: a task's own grading script (Harbor's tests/test.sh) decides, by its reward.

Like the pytest verifier it runs after the agent stops, on a snapshot of the home, in a
fresh sandbox, as the agent's user, with the result returned on the nonce-keyed channel of
:mod:`.channel` (the trusted wrapper is :mod:`.script_runner`). What differs is the verdict:
the script writes a reward to ``/logs/verifier/reward.txt`` or ``reward.json``, and the
episode's single hidden test ``test.sh`` passes when the reward reaches the task's
threshold (1.0 unless ``task.grader.reward_threshold`` says otherwise). A script that ends
without a usable reward (it crashed before writing one, or wrote no number) is the
grader's own failure, a harness error (``verifier_error``), as Harbor counts it; a script
that runs out of time is not (the agent's programs it runs may be what hangs).

Inside the verifier sandbox: the task's tests/ folder read-only at ``/tests`` (where Harbor
puts it), the home at the workdir, ``/logs`` a read-only folder whose ``verifier`` and
``agent`` are links into the sandbox's private /tmp (so the script can write its reward
while nothing outside the sandbox is writable), and ``pytest`` on PATH is the harness's.

``verify.run_hidden_tests`` sends a task here when it asks for its script grader (the
``"script"`` line of ``verify.GRADERS``), so callers that hold a Task need not know which
kind it has.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..sandbox.base import SandboxBackend, TrustedMount
from ..tasks.model import Task
from .trusted import run_signed, runner_argv, runner_mounts
from .verdict import TestOutcome, Verdict

SCRIPT_RUNNER = "script_runner.py"
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


def script_of(task: Task) -> Path | None:
    """The grader script: the one the task names, else ``tests/test.sh`` when present."""
    if task.grader.script:
        return Path(task.grader.script)
    if task.tests_dir is not None and (task.tests_dir / SCRIPT_TEST_ID).is_file():
        return task.tests_dir / SCRIPT_TEST_ID
    return None


def _logs_folder(snap_dir: Path) -> Path:
    """A folder of links, mounted read-only at /logs: verifier/ and agent/ lead into the sandbox's /tmp."""
    logs = snap_dir / "logs"
    logs.mkdir()
    for name in ("verifier", "agent"):
        os.symlink(f"{Path(REWARD_DIR_INSIDE).parent}/{name}", logs / name)
    os.chmod(logs, 0o755)
    return logs


def grade(backend: SandboxBackend, home: Path, snap_dir: Path, task: Task, inventory, per_test_timeout_s: float) -> ScriptVerdict:
    """Run the task's grader script on the home's copy and judge the reward it wrote (no per-test timeout)."""
    spec = task.grader
    threshold = float(spec.reward_threshold or 1.0)
    script = script_of(task)
    if script is None or task.tests_dir is None or not script.is_file():
        return ScriptVerdict(error=f"task {task.id!r} has no grader script", threshold=threshold)
    try:
        script_rel = script.resolve().relative_to(task.tests_dir.resolve()).as_posix()
    except ValueError:
        return ScriptVerdict(error=f"the grader script {script} is not inside the tests folder {task.tests_dir}", threshold=threshold)
    timeout = min(float(spec.timeout_s or DEFAULT_TIMEOUT_S), MAX_TIMEOUT_S)
    mounts = [TrustedMount(task.tests_dir.resolve(), TESTS_AT), TrustedMount(_logs_folder(snap_dir), LOGS_AT), *runner_mounts()]
    env = {str(k): str(v) for k, v in spec.env}
    argv = runner_argv(SCRIPT_RUNNER, f"{TESTS_AT}/{script_rel}", str(timeout), task.workdir, REWARD_DIR_INSIDE, json.dumps(env))
    body, problem = run_signed(backend, home, argv, mounts, timeout + 60, task.workdir, "the grader script")
    if body is None:
        return ScriptVerdict(error=problem, threshold=threshold)
    return judge(body, inventory, threshold)


def failed(message: str) -> ScriptVerdict:
    """The verdict when grading itself raised: a harness error."""
    return ScriptVerdict(error=f"script grader failed: {message}")


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
    if reward is None and not body.get("timed_out"):
        last = tail.strip().splitlines()[-1:] if tail.strip() else []
        verdict.error = (
            f"verifier_error: {SCRIPT_TEST_ID} ended without a usable reward (exit code {body.get('exit_code')}): "
            f"{body.get('problem') or 'no reward'}" + (f"; last output: {last[0][:300]}" if last else "")
        )
    if inventory is not None and tuple(inventory) != (SCRIPT_TEST_ID,):
        verdict.problems.append(f"the inventory {list(inventory)} is not the script grader's [{SCRIPT_TEST_ID!r}]")
    return verdict
