"""The script graders: a task's own grading script decides, by the reward it writes or by its parsed output.

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
``/logs/artifacts`` is such a link too: what the script leaves there comes back signed
(:func:`artifacts_of`) and the plugin writes it into the run directory
(:mod:`..report.artifacts`).

The parsed grader (``grade_parsed``, the ``"parsed"`` line of ``verify.GRADERS``) is
Terminal-Bench's: ``run-tests.sh`` runs the same way, with ``$TEST_DIR=/tests`` holding the
task's tests and the script itself, and its verdict is the parser that ``parser_name``
names (:mod:`.parsers`) applied to the script's own output, signed on the same channel.
Each test the parser finds is one of the episode's tests (partial credit, the frozen
inventory); output without a summary is the grader's failure (``verifier_error``) unless
the script ran out of time. What the parser reads is what the script printed, so code of
the agent's that the script runs in the same process or terminal can print status lines
too, as in Terminal-Bench itself; the reward file of a reward grader has the same limit.

``verify.run_hidden_tests`` sends a task here when it asks for a script grader (the
``"script"`` and ``"parsed"`` lines of ``verify.GRADERS``), so callers that hold a Task
need not know which kind it has.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ..report.verdict_record import ParsedVerdictRecord, ScriptVerdictRecord
from ..sandbox.base import SandboxBackend, TrustedMount
from ..tasks.model import Task
from .parsers import PARSERS, NoSummary, parser_problem
from .trusted import GradedHome, run_signed, runner_argv, runner_mounts
from .verdict import TestOutcome, Verdict

SCRIPT_RUNNER = "script_runner.py"
TESTS_AT = "/tests"
LOGS_AT = "/logs"
REWARD_DIR_INSIDE = "/tmp/termrl-logs/verifier"
SCRIPT_TEST_ID = "test.sh"
DEFAULT_TIMEOUT_S = 300.0
MAX_TIMEOUT_S = 1800.0
PARSED_OUTPUT_BYTES = 2 * 1024 * 1024
"""How much of a parsed grader's output (its end) is signed and parsed."""
OUTPUT_TAIL_CHARS = 1500
"""How much of a grader script's output (its end) the episode record keeps."""


@dataclass
class ScriptVerdict(Verdict):
    """A Verdict whose one test is the script, with the native reward it wrote."""

    native_reward: float | None = None
    threshold: float = 1.0
    reward_source: str | None = None
    reward_detail: dict | None = None
    exit_code: int | None = None
    output_tail: str = ""
    stood_in: list[str] = field(default_factory=list)
    """The installs the offline stand-ins met (pip, uv, uvx, apt-get, uv's installer), one line each."""

    @property
    def fraction(self) -> float:
        """The native reward as the partial credit (clamped to [0, 1]); 0 when there is none."""
        if self.native_reward is None or self.error is not None:
            return 0.0
        return min(1.0, max(0.0, self.native_reward / self.threshold if self.threshold > 0 else self.native_reward))

    def to_record(self) -> ScriptVerdictRecord:
        return ScriptVerdictRecord(
            **self._record_fields(),
            native_reward=self.native_reward,
            threshold=self.threshold,
            reward_source=self.reward_source,
            reward_detail=dict(self.reward_detail or {}),
            exit_code=self.exit_code,
            output_tail=self.output_tail[-OUTPUT_TAIL_CHARS:],
            stood_in=list(self.stood_in),
        )


def script_of(task: Task) -> Path | None:
    """The grader script: the one the task names, else ``tests/test.sh`` when present."""
    if task.grader.script:
        return Path(task.grader.script)
    if task.tests_dir is not None and (task.tests_dir / SCRIPT_TEST_ID).is_file():
        return task.tests_dir / SCRIPT_TEST_ID
    return None


def _logs_folder(snap_dir: Path) -> Path:
    """A folder of links, mounted read-only at /logs: verifier/, agent/ and artifacts/ lead into the sandbox's /tmp."""
    logs = snap_dir / "logs"
    logs.mkdir()
    for name in ("verifier", "agent", "artifacts"):
        os.symlink(f"{Path(REWARD_DIR_INSIDE).parent}/{name}", logs / name)
    os.chmod(logs, 0o755)
    return logs


def _tests_folder(task: Task, script: Path, snap_dir: Path) -> tuple[Path, str]:
    """(folder mounted at /tests, the script's path in it): the tests folder, or a copy with the script added.

    Harbor's test.sh lives in tests/; Terminal-Bench's run-tests.sh beside it, and its
    harness copies both into /tests, so that is what the script finds there.
    """
    assert task.tests_dir is not None  # _run_script checks
    tests_dir = task.tests_dir.resolve()
    try:
        return tests_dir, script.resolve().relative_to(tests_dir).as_posix()
    except ValueError:
        pass
    staged = snap_dir / "tests"
    shutil.copytree(tests_dir, staged, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    if not (staged / script.name).exists():
        shutil.copy2(script, staged / script.name)
    for folder in [staged, *(p for p in staged.rglob("*") if p.is_dir() and not p.is_symlink())]:
        os.chmod(folder, 0o755)
    return staged, script.name


def _run_script(backend: SandboxBackend, home: GradedHome, snap_dir: Path, task: Task, output_bytes: int = 0) -> tuple[dict | None, str]:
    """Run the task's grader script on the home's copy: (the runner's signed body, "") or (None, why not)."""
    spec = task.grader
    script = script_of(task)
    if script is None or task.tests_dir is None or not script.is_file():
        return None, f"task {task.id!r} has no grader script"
    folder, script_rel = _tests_folder(task, script, snap_dir)
    timeout = min(float(spec.timeout_s or DEFAULT_TIMEOUT_S), MAX_TIMEOUT_S)
    mounts = [TrustedMount(folder, TESTS_AT), TrustedMount(_logs_folder(snap_dir), LOGS_AT), *runner_mounts()]
    env = {str(k): str(v) for k, v in spec.env}
    argv = runner_argv(
        SCRIPT_RUNNER, f"{TESTS_AT}/{script_rel}", str(timeout), task.workdir, REWARD_DIR_INSIDE, json.dumps(env), str(output_bytes)
    )
    return run_signed(backend, home, argv, mounts, timeout + 60, task.workdir, "the grader script")


def artifacts_of(body: dict) -> dict:
    """The verdict fields of what the grader left in /logs/artifacts, from the runner's body."""
    files = body.get("artifacts") or {}
    return {
        "artifacts": {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {},
        "artifacts_left_out": [str(x) for x in body.get("artifacts_left_out") or []],
    }


def grade(backend: SandboxBackend, home: GradedHome, snap_dir: Path, task: Task, inventory: tuple[str, ...] | None, test_timeout_s: float) -> ScriptVerdict:
    """Run the task's grader script on the home's copy and judge the reward it wrote (no per-test timeout)."""
    threshold = float(task.grader.reward_threshold or 1.0)
    body, problem = _run_script(backend, home, snap_dir, task)
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
        stood_in=list(body.get("stood_in") or []),
        **artifacts_of(body),
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


# -- the parsed grader (Terminal-Bench's run-tests.sh and parser_name) ---------------------------
@dataclass
class ParsedVerdict(Verdict):
    """A Verdict whose tests are those the parser read from the script's output."""

    parser: str = "pytest"
    script: str = ""
    statuses: dict[str, str] = field(default_factory=dict)
    """The status word printed per test (PASSED, SKIPPED, XFAIL, FAILED, ERROR, XPASS)."""
    exit_code: int | None = None
    output_tail: str = ""
    stood_in: list[str] = field(default_factory=list)
    """The installs the offline stand-ins met, one line each."""

    def to_record(self) -> ParsedVerdictRecord:
        return ParsedVerdictRecord(
            **self._record_fields(), parser=self.parser, script=self.script, statuses=dict(self.statuses),
            exit_code=self.exit_code, output_tail=self.output_tail[-OUTPUT_TAIL_CHARS:], stood_in=list(self.stood_in),
        )


def grade_parsed(backend: SandboxBackend, home: GradedHome, snap_dir: Path, task: Task, inventory: tuple[str, ...] | None, test_timeout_s: float) -> ParsedVerdict:
    """Run the task's grader script on the home's copy and judge what its parser reads in the output."""
    parser = task.grader.parser or "pytest"
    script = script_of(task)
    name = script.name if script is not None else "run-tests.sh"
    refused = parser_problem(parser)
    if refused:
        return ParsedVerdict(parser=parser, script=name, error=f"verifier_error: {name}: {refused}")
    body, problem = _run_script(backend, home, snap_dir, task, PARSED_OUTPUT_BYTES)
    if body is None:
        return ParsedVerdict(parser=parser, script=name, error=problem)
    return judge_parsed(body, inventory, parser, name)


def failed_parsed(message: str) -> ParsedVerdict:
    """The verdict when parsed grading itself raised: a harness error."""
    return ParsedVerdict(error=f"script grader failed: {message}")


def judge_parsed(body: dict, inventory: tuple[str, ...] | None, parser: str = "pytest", script: str = "run-tests.sh") -> ParsedVerdict:
    """The verdict from the runner's body: the parser's per-test results, against the inventory."""
    tail = body.get("output_tail") or ""
    verdict = ParsedVerdict(
        parser=parser, script=script, exit_code=body.get("exit_code"), output_tail=tail, stood_in=list(body.get("stood_in") or []),
        **artifacts_of(body),
    )
    try:
        found = PARSERS[parser](body.get("output") or "")
    except NoSummary as exc:
        last = tail.strip().splitlines()[-1:]
        shown = f"; last output: {last[0][:300]}" if last else ""
        if body.get("timed_out"):
            verdict.problems.append(f"{script} timed out before printing a summary")
            verdict.outcomes.append(TestOutcome(script, "error", f"{script} timed out{shown}"))
        else:
            verdict.error = f"verifier_error: {script} ended without a test summary for the {parser!r} parser (exit code {body.get('exit_code')}): {exc}{shown}"
        return verdict
    by_id = {t.nodeid: t for t in found}
    expected = list(inventory) if inventory is not None else list(by_id)
    for nodeid in expected:
        test = by_id.get(nodeid)
        if test is None:
            verdict.outcomes.append(TestOutcome(nodeid, "missing", f"not in the summary {script} printed"))
            continue
        verdict.statuses[nodeid] = test.status
        message = test.message if test.outcome == "failed" else (f"{test.status}: {test.message}" if test.status != "PASSED" else "")
        verdict.outcomes.append(TestOutcome(nodeid, test.outcome, message[:2000]))
    missing = [n for n in expected if n not in by_id]
    extra = [n for n in by_id if n not in set(expected)]
    if missing:
        verdict.problems.append(f"tests in the inventory that did not run: {', '.join(missing)}")
    if extra:
        verdict.problems.append(f"tests that ran but are not in the inventory: {', '.join(extra)}")
    if body.get("timed_out"):
        verdict.problems.append(f"{script} timed out")
    if not expected:
        verdict.problems.append(f"the summary {script} printed lists no test")
    return verdict
