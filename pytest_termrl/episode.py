"""The episode loop: agent turn -> one command in the shell (or keys into the terminal session) -> monitors -> limits -> stop -> verify.

Pure library code: the plugin, the training loop and scripts all run episodes through here,
by :func:`run_episode`. One episode is an :class:`Episode` (Harbor's trial shape): it holds what
it is played with and what it gathers (the commands, the transcript, the usage, the timings),
and its phases are methods; :class:`SingleStepEpisode` and :class:`MultiStepEpisode` are its
two players. How a failed one reads is :mod:`pytest_termrl.report.failure`'s.

A multi-step task (``Task.steps``) plays its steps in order in the one sandbox: the agent is
started on step 1's instruction (and reference, for the oracle agent) and plays until it
stops; the step's checks grade a snapshot of the home; then the agent is started afresh on
step 2's instruction in the same sandbox and shell, and so on, as Harbor runs one agent per
step in one environment. A step that brings files of its own (``TaskStep.files``, Harbor's
``steps/<name>/workdir/``) has them placed in the workdir before its agent begins, its
setup hook (``setup.sh`` among them) run there as the agent's user, then its own healthcheck
tried: the harness's doing, not the agent's, so the collateral oracle takes what they changed
into its baseline (``OracleFindings.rebaseline``); a step whose files cannot be placed, whose
hook fails or whose check never passes ends the episode there as a harness error, as Harbor
ends the trial. The command and time limits hold per step; the monitors watch every command
of every step. A step whose reward falls below its ``min_reward``, or whose grader fails,
ends the episode there. The verdict is every step's (``step-N::<test>``),
combined as :mod:`pytest_termrl.verifier.steps` says; the transcript holds the steps'
conversations one after another, and the usage every step's counts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, Sequence

from .agents.base import Agent, AgentContext, EpisodeLimits, Observation, Turn
from .faults import CLEAN
from .oracle.policy import OracleFindings
from .report.failure import failure_text
from .report.record import EndReason, EpisodeRecord, episode_id
from .sandbox.base import CommandResult, KeystrokeBatch, Sandbox, SandboxBackend
from .sandbox.placing import PlacementFailed, check_healthy, place_files, run_hook
from .settings import EpisodeSettings
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
class CommandRecord:
    command: str
    """The command as run; for a keystroke batch, its readable line (:meth:`KeystrokeBatch.text`)."""
    exit_code: int | None
    timed_out: bool
    shell_restarted: bool
    output_truncated: bool
    duration_s: float
    output: str
    keys: KeystrokeBatch | None = None
    """Set when this was keys typed into the terminal session, not a command in the shell."""

    def to_dict(self) -> dict:
        out: dict = {
            "command": self.command,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "shell_restarted": self.shell_restarted,
            "output_truncated": self.output_truncated,
            "duration_s": round(self.duration_s, 4),
        }
        if self.keys is not None:
            out["keys"] = list(self.keys.keys)
            out["wait_s"] = self.keys.max_wait_s
        return out


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
    contract: str | None = None
    """``inferred`` when the oracle judged by the policy inferred from the task (no frozen contract)."""

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
        """A short account of why the episode failed (:func:`pytest_termrl.report.failure.failure_text`)."""
        return failure_text(self)

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
            contract=self.contract,
        )
        record.take_monitor_fields(self.monitor_fields)
        return record


USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens", "tool_calls", "malformed_tool_calls")
"""The agent's counts an episode records."""


def _usage_counts(usage) -> dict[str, int]:
    return {key: getattr(usage, key) for key in USAGE_KEYS}


@dataclass(kw_only=True, eq=False)
class Episode:
    """One episode: what it is played with, what it gathers while played, and its phases.

    :meth:`play` runs the phases in order: :meth:`act` (the agent's part), :meth:`stop`,
    :meth:`grade`, then :meth:`outcome`. The two players, :class:`SingleStepEpisode` and
    :class:`MultiStepEpisode`, say how the agent acts and when the home is graded;
    :func:`player_for` picks the one a task needs.
    """

    spec: EpisodeSpec
    task: Task
    inventory: tuple[str, ...] | None
    """The contract's frozen test ids (None: the task's tests as they are)."""
    backend: SandboxBackend
    sandbox: Sandbox
    agent: Agent
    context: AgentContext
    settings: EpisodeSettings
    monitors: list[EpisodeMonitor] = field(default_factory=list)
    scratch: Path | None = None
    """Where the grader may keep its files (None: a temporary folder)."""

    commands: list[CommandRecord] = field(default_factory=list)
    """Every command the agent ran, all phases together (the monitors number them so)."""
    transcript: list[dict] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    end_reason: EndReason = EndReason.AGENT_DONE
    harness_error: str | None = None
    verdict: Verdict | None = None
    stood_in: list[str] = field(default_factory=list)

    def play(self) -> EpisodeOutcome:
        """Play the episode in its prepared sandbox and grade it. Never raises for agent behaviour."""
        started = time.monotonic()
        self.act()
        self.timings["agent_s"] = time.monotonic() - started - self._verify_s()
        beside = self.task.graded_beside_the_agent  # what the agent left running stays up for the grader, stopped after it
        if not beside:
            self.stop()
        self.stood_in = self.sandbox.stood_in()
        try:
            self.grade()
        finally:
            if beside:
                self.stop()  # the oracle's last look sees what those processes did meanwhile
        if self.verdict is not None and self.verdict.error and self.harness_error is None:
            self.harness_error = self.verdict.error
        self.timings["verify_s"] = self._verify_s()
        self.timings["total_s"] = time.monotonic() - started
        outcome = self.outcome()
        self.agent.close()
        return outcome

    def act(self) -> None:
        """The agent's part: sets ``end_reason`` and ``harness_error``, fills ``transcript`` and ``usage``."""
        raise NotImplementedError

    def grade(self) -> None:
        """Grade the home the agent left (sets ``verdict``); the agent's processes are still up when the task grades beside them."""
        raise NotImplementedError

    def agent_phase(self, context: AgentContext) -> tuple[EndReason, str | None]:
        """Start the agent on ``context`` and play its commands until it stops: (end reason, harness error).

        The limits count the commands of this phase (``commands`` holds the episode's, and the
        monitors number them across phases). A crash of the agent or the shell is a harness error.
        """
        started = time.monotonic()
        first = len(self.commands)
        limits = self.settings.limits
        try:
            self.agent.start(context)
            observation: Observation | None = None
            while True:
                turn = self.agent.next_turn(observation)
                used = len(self.commands) - first
                out_of_time = time.monotonic() - started > limits.wall_clock_s
                if turn.command is None and turn.keys is None:
                    return (EndReason.TIMEOUT if out_of_time else turn.end_reason or EndReason.NO_TOOL_CALL), turn.error
                if limits.max_commands is not None and used >= limits.max_commands:
                    return EndReason.BUDGET_EXHAUSTED, None
                if used >= limits.max_tool_calls:
                    return EndReason.TOOL_CALL_LIMIT, None
                if out_of_time:
                    return EndReason.TIMEOUT, None
                command, result, note = self._carry_out(turn)
                self.commands.append(
                    CommandRecord(
                        command,
                        result.exit_code,
                        result.timed_out,
                        result.shell_restarted,
                        result.output_truncated,
                        result.duration_s,
                        result.output,
                        turn.keys if turn.command is None else None,
                    )
                )
                for monitor in self.monitors:
                    monitor.after_command(len(self.commands), command, result)
                if self.sandbox.storage_exhausted():  # the upper layers are full: the machine cannot be worked on
                    return EndReason.STORAGE_LIMIT, None
                left = None if limits.max_commands is None else limits.max_commands - (len(self.commands) - first)
                if left == 0:
                    note = "; ".join(filter(None, [note, "command budget exhausted: further calls will not run"]))
                observation = Observation(
                    output=result.output,
                    exit_code=result.exit_code,
                    timed_out=result.timed_out,
                    shell_restarted=result.shell_restarted,
                    commands_left=left,
                    note=note,
                    terminal=turn.command is None,
                )
        except Exception as exc:  # noqa: BLE001 - a crash of the agent or shell is a harness error
            return EndReason.HARNESS_ERROR, f"{type(exc).__name__}: {exc}"

    def _carry_out(self, turn: Turn) -> tuple[str, CommandResult, str]:
        """Run the turn's command in the shell, or type its keys into the terminal session: (its line, result, a note)."""
        if turn.command is not None:
            return turn.command, self.sandbox.run(turn.command, self.settings.command_timeout_s), ""
        assert turn.keys is not None
        batch = replace(turn.keys, max_wait_s=min(turn.keys.max_wait_s, self.settings.command_timeout_s))
        if not self.sandbox.has_terminal:
            note = f"keys not typed: the {self.sandbox.backend_name} sandbox has no terminal session; use the bash tool"
            return batch.text(), CommandResult(output="", exit_code=None), note
        return batch.text(), self.sandbox.send_keys(batch), ""

    def stop(self) -> None:
        """End the agent's processes, then let every monitor take its last look."""
        self.sandbox.stop_processes()
        for monitor in self.monitors:
            monitor.finish()

    def outcome(self) -> EpisodeOutcome:
        """What the episode came to: the verdict, the monitors' findings and all it gathered."""
        monitor_fields: dict = dict(self.agent.record_fields())
        for monitor in self.monitors:
            monitor_fields.update(monitor.record())
        return EpisodeOutcome(
            spec=self.spec,
            task=self.task,
            agent_name=self.agent.name,
            model=self.agent.model,
            end_reason=self.end_reason,
            verdict=self.verdict,
            commands=self.commands,
            transcript=self.transcript,
            usage=self.usage,
            timings=self.timings,
            enforced_limits=self.sandbox.enforced_limits,
            harness_error=self.harness_error,
            violations=[line for monitor in self.monitors for line in monitor.violations()],
            monitor_fields=monitor_fields,
            stood_in=self.stood_in,
        )

    def _verify_s(self) -> float:
        return self.verdict.duration_s if self.verdict is not None else 0.0


class SingleStepEpisode(Episode):
    """One agent phase on the task's instruction, then the hidden tests (unless the agent phase broke the harness)."""

    def act(self) -> None:
        self.end_reason, self.harness_error = self.agent_phase(self.context)
        self.transcript = self.agent.transcript()
        self.usage = _usage_counts(self.agent.usage)

    def grade(self) -> None:
        if self.harness_error is not None and self.end_reason == EndReason.HARNESS_ERROR:
            return
        self.verdict = run_hidden_tests(
            self.backend, self.sandbox, self.task, self.inventory, self.settings.test_timeout_s, self.scratch,
            beside_agent=self.task.graded_beside_the_agent,
        )


class MultiStepEpisode(Episode):
    """A multi-step task's steps in order in the one sandbox, each graded when the agent ends it.

    The verdict is the steps' combined (see the module's docstring); nothing is left to grade
    after the agent. ``transcript`` and ``usage`` gain each step's conversation and counts (an
    agent may begin each conversation with fresh counts, or keep counting: either way every
    step counts once).
    """

    def act(self) -> None:
        results: list[StepResult] = []
        for index, step in enumerate(self.task.steps):
            try:
                self.prepare_step(index)
            except PlacementFailed as exc:
                self.end_reason, self.harness_error = EndReason.HARNESS_ERROR, str(exc)
                results.append(StepResult(index, step.name, None, 0, stopped=str(exc)))
                break
            context = replace(
                self.context,
                instruction=step.instruction,
                solution=step.solution_text(),
                prediction=self.context.prediction if index == 0 else None,
            )
            first = len(self.commands)
            counts, before = self.agent.usage, _usage_counts(self.agent.usage)
            self.end_reason, self.harness_error = self.agent_phase(context)
            self._count_usage(counts, before)
            self.transcript += self.agent.transcript()
            result = StepResult(index, step.name, self.end_reason, len(self.commands) - first)
            results.append(result)
            if self.end_reason == EndReason.HARNESS_ERROR:
                break
            result.verdict = self.grade_step(index)
            result.stopped = below_min_reward(step, result.verdict)
            if self.harness_error is not None or result.stopped is not None:
                break
        self.verdict = combine(self.task, results, self.inventory)

    def grade(self) -> None:
        """Each step was graded as the agent ended it: nothing is left to grade."""

    def prepare_step(self, index: int) -> None:
        """Before step ``index``'s agent: its own files, setup hook and healthcheck, as the harness; the oracles take them in.

        First the files (the paths placed are taken into the baseline, anything else changed
        since the oracle last looked stays the agent's), then the hook, then the check (all
        they changed is taken in). Raises PlacementFailed naming the step.
        """
        step = self.task.steps[index]
        workdir, timeout_s = self.task.workdir, self.sandbox.settings.setup_timeout_s
        where = f"step {index + 1} ({step.name})"
        oracles = [monitor for monitor in self.monitors if isinstance(monitor, OracleFindings)]

        def taken_in(paths: tuple[str, ...] | None) -> None:
            for oracle in oracles:
                oracle.rebaseline(workdir, paths)

        if step.files is not None:
            taken_in(place_files(self.sandbox, step.files, workdir, timeout_s, f"{where}, steps/{step.name}/workdir/").paths)
        if step.setup_hook is not None:
            run_hook(self.sandbox, step.setup_hook, workdir, timeout_s, f"{where}: its setup hook steps/{step.name}/workdir/{step.setup_hook}")
            taken_in(None)
        if step.healthcheck is not None:
            check_healthy(self.sandbox, step.healthcheck, workdir, f"{where}: its healthcheck")
            taken_in(None)

    def grade_step(self, index: int) -> Verdict:
        """Grade a snapshot of the home with step ``index``'s checks."""
        return grade_step(
            self.backend, self.sandbox, self.task, index, self.inventory, self.settings.test_timeout_s, self.scratch
        )

    def _count_usage(self, counts, before: dict[str, int]) -> None:
        after = _usage_counts(self.agent.usage)
        kept_counting = self.agent.usage is counts and all(after[k] >= before[k] for k in after)
        for key, value in after.items():
            self.usage[key] = self.usage.get(key, 0) + value - (before[key] if kept_counting else 0)


def player_for(task: Task) -> type[Episode]:
    """The player of ``task``: a multi-step task's steps graded one by one, else one agent phase graded at the end."""
    return MultiStepEpisode if task.steps else SingleStepEpisode


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
    monitors: Sequence[EpisodeMonitor] = (),
    scratch: Path | None = None,
) -> EpisodeOutcome:
    """Play one episode in a prepared sandbox and grade it (step by step for a multi-step task). Never raises for agent behaviour."""
    return player_for(task)(
        spec=spec, task=task, inventory=inventory, backend=backend, sandbox=sandbox, agent=agent,
        context=context, settings=settings, monitors=list(monitors), scratch=scratch,
    ).play()
