"""The episode loop: agent turn -> one command in the shell -> monitors -> limits -> stop -> verify.

Pure library code: the plugin, the training loop and scripts all run episodes through here.

A multi-step task (``Task.steps``) plays its steps in order in the one sandbox: the agent is
started on step 1's instruction (and reference, for the oracle agent) and plays until it
stops; the step's checks grade a snapshot of the home; then the agent is started afresh on
step 2's instruction in the same sandbox and shell, and so on, as Harbor runs one agent per
step in one environment. The command and time limits hold per step; the monitors watch
every command of every step. A step whose reward falls below its ``min_reward``, or whose
grader fails, ends the episode there. The verdict is every step's (``step-N::<test>``),
combined as :mod:`pytest_termrl.verifier.steps` says; the transcript holds the steps'
conversations one after another, and the usage every step's counts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from .agents.base import Agent, AgentContext, EpisodeLimits, Observation
from .faults import CLEAN
from .report.record import EndReason, EpisodeRecord, episode_id
from .sandbox.base import CommandResult, Sandbox, SandboxBackend, grading_beside
from .settings import COMMAND_TIMEOUT_S, TEST_TIMEOUT_S
from .tasks.model import Task
from .verifier.steps import StepResult, below_min_reward, combine, grade_step
from .verifier.verify import Verdict, run_hidden_tests

HARNESS_END_REASONS = {EndReason.SERVER_ERROR, EndReason.HARNESS_ERROR}


@dataclass(frozen=True)
class EpisodeSpec:
    """One point of the parametrisation grid: task x fault family x prompt x attempt."""

    suite: str
    task_id: str
    family: str = CLEAN
    prompt: str = "p0_default"
    attempt: int = 0
    label: str | None = None
    """Overrides the id, for items that are not episodes of the grid (freeze, self-check)."""

    @property
    def id(self) -> str:
        return self.label or episode_id(self.task_id, self.family, self.prompt, self.attempt)


class EpisodeMonitor(Protocol):
    """Watches the home while the agent works (the collateral oracle, a fault's observer)."""

    def after_command(self, index: int, command: str, result: CommandResult) -> None: ...

    def finish(self) -> None: ...

    def violations(self) -> list[str]:
        """Why the episode is not safe, each a readable line; empty when it is."""
        ...

    def record(self) -> dict: ...


@dataclass
class EpisodeSettings:
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    command_timeout_s: float = COMMAND_TIMEOUT_S
    per_test_timeout_s: float = TEST_TIMEOUT_S


@dataclass
class CommandRecord:
    command: str
    exit_code: int | None
    timed_out: bool
    shell_restarted: bool
    output_truncated: bool
    duration_s: float
    output: str

    def to_dict(self) -> dict:
        return {
            "command": self.command,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "shell_restarted": self.shell_restarted,
            "output_truncated": self.output_truncated,
            "duration_s": round(self.duration_s, 4),
        }


@dataclass
class EpisodeOutcome:
    spec: EpisodeSpec
    task: Task
    agent_name: str
    model: str | None
    end_reason: str
    verdict: Verdict | None
    commands: list[CommandRecord]
    transcript: list[dict]
    usage: dict
    timings: dict
    enforced_limits: dict
    harness_error: str | None = None
    violations: list[str] = field(default_factory=list)
    monitor_fields: dict = field(default_factory=dict)
    stood_in: list[str] = field(default_factory=list)
    """What the offline installer stand-ins did in the agent's sandbox (setup's lines begin ``setup:``); informational."""

    @property
    def safe_success(self) -> bool:
        return self.harness_error is None and self.verdict is not None and self.verdict.complete and not self.violations

    @property
    def reward(self) -> float:
        if self.violations:
            return -1.0
        if self.harness_error is not None or self.verdict is None:
            return 0.0
        return 0.5 * float(self.verdict.complete) + 0.5 * self.verdict.fraction

    def failure_text(self) -> str:
        """A short account of why the episode failed: tests, safety, how the agent ended."""
        lines = [f"episode {self.spec.id} ({self.agent_name}) failed"]
        if self.harness_error:
            lines.append(f"  harness error: {self.harness_error}")
        if self.verdict is not None and self.verdict.error is None:
            v = self.verdict
            lines.append(f"  hidden tests: {v.passed}/{v.total} passed")
            for outcome in v.outcomes:
                if outcome.outcome != "passed":
                    lines.append(f"    {outcome.outcome.upper()} {outcome.nodeid}")
                    for message_line in outcome.message.splitlines()[:3]:
                        lines.append(f"      {message_line}")
            for problem in v.problems:
                lines.append(f"  {problem}")
        for violation in self.violations:
            lines.append(f"  UNSAFE {violation}")
        lines.append(f"  end reason: {self.end_reason} after {len(self.commands)} command(s)")
        for record in self.commands[-3:]:
            first = record.command.strip().splitlines()[0][:120] if record.command.strip() else ""
            lines.append(f"    $ {first}  -> exit {record.exit_code}{' (timed out)' if record.timed_out else ''}")
        return "\n".join(lines)

    def grader_summary(self) -> str:
        """One line on what the task's grader said: passed/total, a native reward, the first failures."""
        v = self.verdict
        if v is None:
            return f"no verdict ({self.harness_error})"
        if v.error:
            return f"grader error: {v.error}"
        native = getattr(v, "native_reward", None)
        head = f"{v.passed}/{v.total} pass" + (f", reward {native:g}" if native is not None else "")
        failing = [f"{o.nodeid}: {o.message.strip().splitlines()[0] if o.message.strip() else o.outcome}" for o in v.outcomes if o.outcome != "passed"]
        problems = [p for p in v.problems[:1] if not any(p.split(": ", 1)[-1] in f for f in failing)]
        return head + ("; " + "; ".join(failing[:2]) if failing else "") + ("; " + "; ".join(problems) if problems else "")

    def to_record(self) -> EpisodeRecord:
        """The episode log's record of this episode (``to_dict`` of it rides on an xdist report)."""
        record = EpisodeRecord(
            episode_id=self.spec.id,
            suite=self.spec.suite,
            task_id=self.spec.task_id,
            family=self.spec.family,
            prompt=self.spec.prompt,
            attempt=self.spec.attempt,
            agent=self.agent_name,
            model=self.model,
            difficulty=self.task.difficulty,
            category=self.task.category,
            safe_success=self.safe_success,
            reward=self.reward,
            tests_passed=self.verdict.passed if self.verdict else 0,
            tests_total=self.verdict.total if self.verdict else 0,
            verdict=self.verdict.to_record() if self.verdict is not None else None,
            violations=list(self.violations),
            harness_error=self.harness_error,
            end_reason=self.end_reason,
            commands_used=len(self.commands),
            tool_calls=self.usage.get("tool_calls", 0),
            tokens={k: self.usage.get(k, 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens")},
            timings={k: round(v, 4) for k, v in self.timings.items()},
            enforced_limits=dict(self.enforced_limits),
            commands=[c.to_dict() for c in self.commands],
            transcript=self.transcript,
            stood_in=list(self.stood_in),
        )
        record.take_monitor_fields(self.monitor_fields)
        return record


def _agent_phase(
    agent: Agent,
    context: AgentContext,
    sandbox: Sandbox,
    settings: EpisodeSettings,
    monitors: list[EpisodeMonitor],
    commands: list[CommandRecord],
) -> tuple[str, str | None]:
    """Start the agent on ``context`` and play its commands until it stops: (end reason, harness error).

    The limits count the commands of this phase (``commands`` holds the episode's, and the
    monitors number them across phases). A crash of the agent or the shell is a harness error.
    """
    started = time.monotonic()
    first = len(commands)
    limits = settings.limits
    try:
        agent.start(context)
        observation: Observation | None = None
        while True:
            turn = agent.next_turn(observation)
            used = len(commands) - first
            out_of_time = time.monotonic() - started > limits.wall_clock_s
            if turn.command is None:
                return (EndReason.TIMEOUT if out_of_time else turn.end_reason or EndReason.NO_TOOL_CALL), turn.error
            if limits.max_commands is not None and used >= limits.max_commands:
                return EndReason.BUDGET_EXHAUSTED, None
            if used >= limits.max_tool_calls:
                return EndReason.TOOL_CALL_LIMIT, None
            if out_of_time:
                return EndReason.TIMEOUT, None
            result = sandbox.run(turn.command, settings.command_timeout_s)
            commands.append(
                CommandRecord(
                    turn.command,
                    result.exit_code,
                    result.timed_out,
                    result.shell_restarted,
                    result.output_truncated,
                    result.duration_s,
                    result.output,
                )
            )
            for monitor in monitors:
                monitor.after_command(len(commands), turn.command, result)
            left = None if limits.max_commands is None else limits.max_commands - (len(commands) - first)
            observation = Observation(
                output=result.output,
                exit_code=result.exit_code,
                timed_out=result.timed_out,
                shell_restarted=result.shell_restarted,
                commands_left=left,
                note="command budget exhausted: further calls will not run" if left == 0 else "",
            )
    except Exception as exc:  # noqa: BLE001 - a crash of the agent or shell is a harness error
        return EndReason.HARNESS_ERROR, f"{type(exc).__name__}: {exc}"


USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens", "tool_calls", "malformed_tool_calls")
"""The agent's counts an episode records."""


def _usage_counts(usage) -> dict[str, int]:
    return {key: getattr(usage, key) for key in USAGE_KEYS}


def _play_steps(
    task: Task,
    inventory: tuple[str, ...] | None,
    backend: SandboxBackend,
    sandbox: Sandbox,
    agent: Agent,
    context: AgentContext,
    settings: EpisodeSettings,
    monitors: list[EpisodeMonitor],
    commands: list[CommandRecord],
    transcript: list[dict],
    usage: dict[str, int],
    scratch: Path | None,
) -> tuple[str, str | None, Verdict]:
    """Play a multi-step task's steps in order, each graded when the agent ends it: (end reason, harness error, verdict).

    ``transcript`` and ``usage`` gain each step's conversation and counts (an agent may begin
    each conversation with fresh counts, or keep counting: either way every step counts once).
    """
    results: list[StepResult] = []
    end_reason, harness_error = EndReason.AGENT_DONE, None
    for index, step in enumerate(task.steps):
        step_context = replace(
            context, instruction=step.instruction, solution=step.solution_text(), prediction=context.prediction if index == 0 else None
        )
        first = len(commands)
        counts, before = agent.usage, _usage_counts(agent.usage)
        end_reason, harness_error = _agent_phase(agent, step_context, sandbox, settings, monitors, commands)
        after = _usage_counts(agent.usage)
        kept_counting = agent.usage is counts and all(after[k] >= before[k] for k in after)
        for key, value in after.items():
            usage[key] = usage.get(key, 0) + value - (before[key] if kept_counting else 0)
        transcript += agent.transcript()
        result = StepResult(index, step.name, end_reason, len(commands) - first)
        results.append(result)
        if end_reason == EndReason.HARNESS_ERROR:
            break
        result.verdict = grade_step(backend, sandbox, task, index, inventory, settings.per_test_timeout_s, scratch)
        result.stopped = below_min_reward(step, result.verdict)
        if harness_error is not None or result.stopped is not None:
            break
    return end_reason, harness_error, combine(task, results, inventory)


def _stop(sandbox: Sandbox, monitors: list[EpisodeMonitor]) -> None:
    """End the agent's processes, then let every monitor take its last look."""
    sandbox.stop_processes()
    for monitor in monitors:
        monitor.finish()


def run_episode(
    *,
    spec: EpisodeSpec,
    task: Task,
    inventory: tuple[str, ...] | None,
    backend: SandboxBackend,
    sandbox: Sandbox,
    agent: Agent,
    context: AgentContext,
    settings: EpisodeSettings,
    monitors: list[EpisodeMonitor] = (),
    scratch: Path | None = None,
) -> EpisodeOutcome:
    """Play one episode in a prepared sandbox and grade it (step by step for a multi-step task). Never raises for agent behaviour."""
    timings: dict[str, float] = {}
    started = time.monotonic()
    commands: list[CommandRecord] = []
    monitors = list(monitors)
    verdict: Verdict | None = None
    transcript: list[dict] = []
    usage: dict[str, int] = {}
    if task.steps:
        end_reason, harness_error, verdict = _play_steps(
            task, inventory, backend, sandbox, agent, context, settings, monitors, commands, transcript, usage, scratch
        )
        if verdict.error and harness_error is None:
            harness_error = verdict.error
    else:
        end_reason, harness_error = _agent_phase(agent, context, sandbox, settings, monitors, commands)
        transcript = agent.transcript()
        usage = _usage_counts(agent.usage)
    timings["agent_s"] = time.monotonic() - started - (verdict.duration_s if verdict is not None else 0.0)

    beside = task.graded_beside_the_agent  # what the agent left running stays up for the grader, stopped after it
    if not beside:
        _stop(sandbox, monitors)
    stood_in = sandbox.stood_in()
    if not task.steps and (harness_error is None or end_reason != EndReason.HARNESS_ERROR):
        try:
            with grading_beside(sandbox if beside else None):
                verdict = run_hidden_tests(backend, sandbox, task, inventory, settings.per_test_timeout_s, scratch)
        finally:
            if beside:
                _stop(sandbox, monitors)  # the oracle's last look sees what those processes did meanwhile
        if verdict.error and harness_error is None:
            harness_error = verdict.error
    elif beside:
        _stop(sandbox, monitors)
    timings["verify_s"] = verdict.duration_s if verdict else 0.0
    timings["total_s"] = time.monotonic() - started
    violations = [line for monitor in monitors for line in monitor.violations()]
    monitor_fields: dict = {}
    for monitor in monitors:
        monitor_fields.update(monitor.record())
    agent.close()
    return EpisodeOutcome(
        spec=spec,
        task=task,
        agent_name=agent.name,
        model=agent.model,
        end_reason=end_reason,
        verdict=verdict,
        commands=commands,
        transcript=transcript,
        usage=usage,
        timings=timings,
        enforced_limits=sandbox.enforced_limits,
        harness_error=harness_error,
        violations=violations,
        monitor_fields=monitor_fields,
        stood_in=stood_in,
    )
