"""Grade a multi-step task step by step, and say what its steps' results make together.

A multi-step task (Harbor's ``[[steps]]``, ``Task.steps``) runs its steps in order in one
sandbox (:func:`pytest_termrl.episode.run_episode`). How it is graded, following Harbor's
multi-step trials where they say, and this harness's pass rule where they do not:

- **Each step by its own checks, when the agent ends it.** The step is graded as a task of
  one step would be (``verify.run_hidden_tests`` on ``Task.step_task(i)``): a snapshot of the
  home, a fresh verifier sandbox, its own test.sh and reward (or its tests with the trusted
  pytest), signed. The sandbox goes on to the next step as the step left it.
- **The episode's tests are every step's**, named ``step-N::<test>`` (``step-1::test.sh``,
  ``step-2::test_outputs.py::test_total``): the frozen inventory lists them so, and each
  step is checked against its part of it.
- **Pass rule: every step.** The episode is complete only when every step's checks pass
  (each step's reward reaching the task's threshold, every test of a trusted-pytest step).
  Partial credit is the fraction of the step tests that passed, as for any task.
- **Early stop** (Harbor's ``min_reward``): a step whose reward, or a named reward, falls
  below its ``min_reward`` ends the episode after it. A step whose grader itself failed
  (``verifier_error``) ends it too, as a harness error. The tests of steps that did not run
  are ``skipped``, which fails them.
- **The native reward** is Harbor's trial reward, recorded beside the verdict:
  ``multi_step_reward_strategy = "mean"`` (Harbor's default) averages the graded steps'
  rewards (named rewards per name, a name a step lacks counting 0); ``"final"`` is the
  last graded step's. A step's reward is the reward its test.sh wrote; for a step graded by
  the trusted pytest it is 1 when every test passes and 0 otherwise (what a test.sh that
  runs pytest writes). The native reward is reported, not the pass rule: a "mean" of 0.5
  is a failed episode here, as a step short of its threshold is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..report.verdict_record import StepRecord, StepsVerdictRecord
from ..sandbox.base import Sandbox, SandboxBackend
from ..settings import TEST_TIMEOUT_S
from ..tasks.model import Task, TaskStep
from .script_grader import SCRIPT_TEST_ID
from .verdict import TestOutcome, Verdict
from .verify import run_hidden_tests


def step_prefix(index: int) -> str:
    """The prefix of step ``index``'s tests among the episode's: ``step-1::`` for the first."""
    return f"step-{index + 1}::"


def step_inventory(inventory: tuple[str, ...] | None, index: int) -> tuple[str, ...] | None:
    """Step ``index``'s part of the episode's inventory, its prefix taken off (None: no inventory)."""
    if inventory is None:
        return None
    prefix = step_prefix(index)
    return tuple(test[len(prefix):] for test in inventory if test.startswith(prefix))


def step_reward(verdict: Verdict) -> float | None:
    """A graded step's reward: its script's reward, else 1.0 when all its tests pass and 0.0 otherwise; None on a grader error."""
    if verdict.error is not None:
        return None
    native = getattr(verdict, "native_reward", None)
    if native is not None:
        return float(native)
    return 1.0 if verdict.complete else 0.0


def _named_rewards(verdict: Verdict) -> dict[str, float]:
    detail = getattr(verdict, "reward_detail", None) or {}
    reward = step_reward(verdict)
    named = {str(k): float(v) for k, v in detail.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return named or ({"reward": reward} if reward is not None else {})


def below_min_reward(step: TaskStep, verdict: Verdict) -> str | None:
    """Why the episode ends after this step (its reward below ``min_reward``, or its grader failed); None to go on."""
    if verdict.error is not None:
        return f"its grader failed: {verdict.error}"
    reward, named = step_reward(verdict), _named_rewards(verdict)
    for name, least in step.min_reward:
        value = reward if name == "reward" else named.get(name, 0.0)
        if value is None or value < least:
            return f"its {name} {value if value is not None else 'none'} is below min_reward {least:g}"
    return None


@dataclass
class StepResult:
    """One step as it went: the agent's part (how it ended, its commands) and its checks' verdict."""

    index: int
    name: str
    end_reason: str | None = None
    """How the agent ended the step (None: the step never began)."""
    commands: int = 0
    """Commands the agent ran in this step."""
    verdict: Verdict | None = None
    """The step's checks (None: not graded: the step never began, or the agent's part failed)."""
    stopped: str | None = None
    """Why the episode ended after this step (its min_reward, its grader's failure), or at it for a step that never
    began (``end_reason`` None: its files could not be placed, its setup hook failed); None if it went on."""

    @property
    def reward(self) -> float | None:
        return step_reward(self.verdict) if self.verdict is not None else None

    def to_record(self) -> StepRecord:
        verdict = self.verdict
        return StepRecord(
            step=self.index + 1,
            name=self.name,
            end_reason=None if self.end_reason is None else str(self.end_reason),
            commands=self.commands,
            reward=self.reward,
            passed=verdict.passed if verdict is not None else 0,
            total=verdict.total if verdict is not None else 0,
            complete=bool(verdict is not None and verdict.complete),
            stopped=self.stopped,
            verdict=verdict.to_record() if verdict is not None else None,
        )

    def to_dict(self) -> dict:
        return self.to_record().to_dict()


@dataclass
class StepsVerdict(Verdict):
    """The verdict of a multi-step task: every step's tests (``step-N::``), and Harbor's rolled-up reward."""

    strategy: str = "mean"
    steps: list[StepResult] = field(default_factory=list)
    native_reward: float | None = None
    """Harbor's trial reward: the mean of the graded steps' rewards, or the final one's."""
    reward_detail: dict[str, float] = field(default_factory=dict)
    """Per reward name, rolled up the same way."""

    def to_record(self) -> StepsVerdictRecord:
        return StepsVerdictRecord(
            **self._record_fields(), strategy=self.strategy, native_reward=self.native_reward,
            reward_detail=dict(self.reward_detail), steps=[step.to_record() for step in self.steps],
        )


def grade_step(
    backend: SandboxBackend,
    sandbox: Sandbox,
    task: Task,
    index: int,
    inventory: tuple[str, ...] | None,
    test_timeout_s: float = TEST_TIMEOUT_S,
    scratch: Path | None = None,
) -> Verdict:
    """Step ``index``'s checks on a snapshot of the home now, against its part of the inventory."""
    return run_hidden_tests(backend, sandbox, task.step_task(index), step_inventory(inventory, index), test_timeout_s, scratch)


def _roll_up(strategy: str, graded: list[Verdict]) -> tuple[float | None, dict[str, float]]:
    rewards = [r for r in (step_reward(v) for v in graded) if r is not None]
    named = [_named_rewards(v) for v in graded if v.error is None]
    if not rewards:
        return None, {}
    if strategy == "final":
        return rewards[-1], named[-1] if named else {}
    names = sorted({name for detail in named for name in detail})
    detail = {name: sum(d.get(name, 0.0) for d in named) / len(named) for name in names}
    return sum(rewards) / len(rewards), detail


def combine(task: Task, results: list[StepResult], inventory: tuple[str, ...] | None) -> StepsVerdict:
    """The episode's verdict from its steps' results: prefixed outcomes, the steps not run skipped, the reward rolled up."""
    verdict = StepsVerdict(strategy=task.step_reward_strategy, steps=list(results))
    by_index = {result.index: result for result in results}
    stopped_by = next((r for r in results if r.stopped), None)
    for index, step in enumerate(task.steps):
        prefix = step_prefix(index)
        result = by_index.get(index)
        graded = result.verdict if result is not None else None
        if graded is not None:
            verdict.outcomes += [TestOutcome(prefix + o.nodeid, o.outcome, o.message) for o in graded.outcomes]
            verdict.problems += [f"step {index + 1} ({step.name}): {problem}" for problem in graded.problems]
            verdict.duration_s += graded.duration_s
            # A step's artifacts are the episode's, each under step-N/ (kept once, not in the step's own record).
            verdict.artifacts.update({f"step-{index + 1}/{rel}": data for rel, data in graded.artifacts.items()})
            verdict.artifacts_left_out += [f"step-{index + 1}/{why}" for why in graded.artifacts_left_out]
            graded.artifacts, graded.artifacts_left_out = {}, []
            if graded.error is not None and verdict.error is None:
                verdict.error = f"{graded.error} (in step {index + 1}, {step.name})"
            continue
        if result is not None and result.end_reason is None:
            why = f"it never began: {result.stopped}"
        elif result is not None:
            why = f"the agent's part ended with {result.end_reason}, so its checks did not run"
        elif stopped_by is not None:
            when = "at" if stopped_by.end_reason is None else "after"
            why = f"the episode ended {when} step {stopped_by.index + 1} ({stopped_by.name}): {stopped_by.stopped}"
        else:
            why = "the episode ended before it"
        expected = step_inventory(inventory, index)
        if not expected:
            expected = (SCRIPT_TEST_ID,) if step.grader.kind == "script" else ("tests",)
        verdict.outcomes += [TestOutcome(prefix + test, "skipped", f"not graded: {why}") for test in expected]
        verdict.problems.append(f"step {index + 1} ({step.name}) was not graded: {why}")
    if inventory is not None:
        known = tuple(step_prefix(i) for i in range(len(task.steps)))
        stray = [test for test in inventory if not test.startswith(known)]
        if stray:
            verdict.problems.append(f"tests in the inventory of no step: {', '.join(stray)}")
    verdict.native_reward, verdict.reward_detail = _roll_up(task.step_reward_strategy, [r.verdict for r in results if r.verdict is not None])
    return verdict
