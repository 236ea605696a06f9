"""The harness: everything one run shares (backend, settings, prompts), free of pytest.

The plugin's fixtures and the training loop both go through it, so an episode is played
the same way whether pytest or a trainer asked for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, NamedTuple, Sequence

from .agents.base import Agent, AgentContext, EpisodeLimits
from .agents.builtin import load_predictions
from .episode import EpisodeMonitor, EpisodeOutcome, EpisodeSettings, EpisodeSpec, run_episode
from .faults import CLEAN, FAMILIES, FaultError, FaultMonitor, FaultState, inject_into
from .oracle.decoys import plant_decoys
from .oracle.monitor import CollateralMonitor
from .oracle.inferred import home_relative, inferred_permissions
from .oracle.policy import Permission, Policy, rooted
from .oracle.record_monitor import RecordMonitor
from .sandbox.base import Sandbox, SandboxBackend, SandboxSettings, make_backend
from .sandbox.layout import default_workroot
from .settings import COMMAND_TIMEOUT_S, OUTPUT_CAP_CHARS, TEST_TIMEOUT_S, TermrlOptions
from .tasks.model import Task
from .tasks.suite import LoadedTask

if TYPE_CHECKING:
    from .trajectories.model import RecordedTrial


Oracle = CollateralMonitor | RecordMonitor
"""The collateral oracle of an episode: over the home (:class:`CollateralMonitor`) or the whole machine's change record."""


@dataclass
class Harness:
    backend: SandboxBackend
    settings: EpisodeSettings = field(default_factory=EpisodeSettings)
    prompts: dict[str, str] = field(default_factory=dict)
    """System prompt text by prompt name."""
    predictions: dict[str, str] = field(default_factory=dict)
    salt: str = ""
    infer_unfrozen: bool = False
    """Judge an episode of a task without a contract by the policy inferred from the task (``--termrl-unfrozen``)."""
    recorded: "dict[str, list[RecordedTrial]]" = field(default_factory=dict)
    """Recorded trials by the task name they were recorded for, in folder order (the replay agent's)."""

    @classmethod
    def from_options(
        cls,
        options: TermrlOptions,
        *,
        supply_backend: Callable[[str, SandboxSettings], SandboxBackend | None] | None = None,
    ) -> Harness:
        """The run's harness as its options say: backend, limits, prompt texts, predictions and salt.

        ``supply_backend(name, settings)`` may make the backend (the plugin passes its
        ``pytest_termrl_make_sandbox`` hook); when it is absent or returns None, the backend
        table makes it. Either way the backend's stale runs are cleaned first. The caller
        closes ``harness.backend`` when the run ends.
        """
        tree = options.settings()
        backend = supply_backend(options.sandbox, tree.sandbox) if supply_backend is not None else None
        if backend is None:
            backend = make_backend(options.sandbox, tree.sandbox, default_workroot())
        backend.cleanup_stale()
        return cls(
            backend=backend,
            settings=tree.episode,
            prompts=options.prompt_texts,
            predictions=load_predictions(options.predictions) if options.predictions else {},
            salt=options.salt,
            recorded=_recorded(options),
            infer_unfrozen=options.unfrozen,
        )

    def new_sandbox(self, loaded: LoadedTask, label: str) -> Sandbox:
        """A sandbox with the task's environment in place and its setup run."""
        task = loaded.task  # a backend written for the home alone takes the label only: its create(label) still serves native tasks
        sandbox = self.backend.create(label, task) if task.whole_machine else self.backend.create(label)
        try:
            sandbox.prepare(loaded.task)
        except BaseException:
            sandbox.close()
            raise
        return sandbox

    def inject(self, loaded: LoadedTask, sandbox: Sandbox, family: str) -> FaultState | None:
        """Break the prepared environment as the family says, at the contract's frozen target."""
        if family == CLEAN:
            return None
        if loaded.contract is None:
            raise FaultError(f"{loaded.task.id}: no frozen contract, so no validated target for the fault family {family!r}")
        return inject_into(sandbox, family, loaded.contract.fault_targets[family], salt=self.salt)

    def watch(self, loaded: LoadedTask, sandbox: Sandbox, fault: FaultState | None = None, *, inferred: bool = False) -> Oracle:
        """Plant the task's decoys, take the baseline manifest and start the collateral oracle.

        Called after any fault was injected, so the fault's own changes are in the baseline,
        and repairing them is permitted. ``inferred``: a task with no contract is judged by
        the policy :mod:`.oracle.inferred` reads from the task (else nothing is permitted).
        """
        task = loaded.task
        permitted = loaded.contract.permitted if loaded.contract is not None else ()
        permissions = [*(Permission.from_dict(p) for p in permitted), *(fault.permissions() if fault else ())]
        record = sandbox.change_record()
        if inferred and loaded.contract is None:
            guessed = inferred_permissions(task)
            permissions += guessed if record is not None else home_relative(guessed, task.workdir)
        if record is not None:  # the whole machine: its change record, the contract's home-relative paths at the workdir
            return RecordMonitor.start(record, Policy(rooted(p, task.workdir) for p in permissions), list(sandbox.decoys))
        policy = Policy(permissions)
        outputs = [p["path"] for p in permitted]
        decoys = plant_decoys(sandbox.home, task.id, task.inputs, *sandbox.home_owner, avoid=outputs)
        # Where the backend can name the agent's processes (bwrap), the oracle follows kernel
        # events and a command costs what it changed; elsewhere every command walks the home.
        return CollateralMonitor.start(sandbox.home, policy, decoys, sandbox.agent_pids if sandbox.names_agent_processes else None)

    def context(self, spec: EpisodeSpec, loaded: LoadedTask) -> AgentContext:
        task = loaded.task
        limits = self.settings.limits
        if task.max_commands is not None and limits.max_commands is None:
            limits = EpisodeLimits(**{**limits.__dict__, "max_commands": task.max_commands})
        return AgentContext(
            task_id=task.id,
            instruction=task.instruction,
            system_prompt=self.prompts.get(spec.prompt, ""),
            prompt_name=spec.prompt,
            limits=limits,
            solution=task.solution_text(),
            prediction=self.predictions.get(task.id),
            recorded=self.recorded_trial(task, spec.attempt, spec.family) or frozen_reference(loaded),
        )

    def recorded_trial(self, task: Task, attempt: int, family: str = CLEAN) -> "RecordedTrial | None":
        """The recorded trial attempt ``attempt`` of ``task`` under ``family`` replays: the N-th of its name's trials
        recorded under that family, in folder order."""
        trials = [t for t in self.recorded.get(recorded_name(task, self.recorded), []) if t.family == family]
        return trials[attempt] if attempt < len(trials) else None

    def play(
        self,
        spec: EpisodeSpec,
        loaded: LoadedTask,
        sandbox: Sandbox,
        agent: Agent,
        oracle: Oracle | None = None,
        fault: FaultState | None = None,
        monitors: Sequence[EpisodeMonitor] = (),
        recorded: "RecordedTrial | None" = None,
    ) -> EpisodeOutcome:
        """Play one episode; the collateral oracle watches it (pass ``oracle`` to keep a handle).

        ``recorded``: the trial a replay agent plays, in place of the one the run's trajectories hold for the spec.

        With a fault, its monitor comes after the oracle: the oracle judges the home as the
        agent left it, then the fault monitor checks integrity and restores the input for grading.
        """
        context = self.context(spec, loaded)
        if recorded is not None:
            context = replace(context, recorded=recorded)
        if fault is not None:
            context = replace(context, fault_repair=FAMILIES[fault.family].generic_repair(fault))
        settings = self.settings
        if context.limits is not settings.limits:
            settings = EpisodeSettings(context.limits, settings.command_timeout_s, settings.test_timeout_s)
        inventory = loaded.contract.tests if loaded.contract is not None else None
        fault_monitors = [FaultMonitor(sandbox, fault)] if fault is not None else []
        inferred = self.infer_unfrozen and loaded.contract is None
        monitors = [oracle or self.watch(loaded, sandbox, fault, inferred=inferred), *fault_monitors, *monitors]
        outcome = run_episode(
            spec=spec,
            task=loaded.task,
            inventory=inventory,
            backend=self.backend,
            sandbox=sandbox,
            agent=agent,
            context=context,
            settings=settings,
            monitors=list(monitors),
        )
        if inferred:
            outcome.contract = "inferred"
        return outcome

    def play_fresh(self, loaded: LoadedTask, agent: Agent, label: str, *, keep_open: bool = False,
                   recorded: "RecordedTrial | None" = None) -> Played:
        """Play one clean episode in a sandbox of its own, labelled '<task>-<label>'.

        The sandbox is closed before this returns, unless ``keep_open`` (its processes
        stopped, for a caller that looks inside it and then closes it).
        """
        task_id = loaded.task.id
        spec = EpisodeSpec("fresh", task_id, CLEAN, label, 0, label=f"{task_id}-{label}")
        sandbox = self.new_sandbox(loaded, f"fresh-{task_id}-{label}")
        try:
            oracle = self.watch(loaded, sandbox)
            outcome = self.play(spec, loaded, sandbox, agent, oracle=oracle, recorded=recorded)
        except BaseException:
            sandbox.close()
            raise
        if not keep_open:
            sandbox.close()
            return Played(outcome, oracle, None)
        return Played(outcome, oracle, sandbox)


def _recorded(options: TermrlOptions) -> "dict[str, list[RecordedTrial]]":
    paths = [p for p in (options.trajectories, options.reference_from) if p is not None]
    if not paths:
        return {}
    from .trajectories.discover import read_recorded, trials_by_task

    trials = [trial for path in paths for trial in read_recorded(path)[0]]  # the controller says what was skipped, once  # the controller says what was skipped, once
    return trials_by_task(trials)


def frozen_reference(loaded: LoadedTask) -> "RecordedTrial | None":
    """The recorded trial a task without a written reference was frozen from (its contract's ``reference``), if any."""
    if loaded.contract is None or loaded.contract.reference is None:
        return None
    from .trajectories.model import RecordedTrial

    return RecordedTrial.from_dict(loaded.contract.reference)


def recorded_name(task: Task, names: "dict[str, list[RecordedTrial]] | set[str]") -> str:
    """The name ``task``'s trials were recorded under: its id, its own format's id, or its folder's name."""
    for name in (task.id, task.source.id, task.root.name):
        if name and name in names:
            return name
    return task.id


class Played(NamedTuple):
    """What :meth:`Harness.play_fresh` hands back: the outcome, its collateral oracle, the sandbox if kept open."""

    outcome: EpisodeOutcome
    oracle: Oracle
    sandbox: Sandbox | None


def default_harness(
    backend_name: str = "bwrap",
    prompts: list[str] | tuple[str, ...] = (),
    *,
    limits: EpisodeLimits | None = None,
    command_timeout_s: float = COMMAND_TIMEOUT_S,
    output_cap_chars: int = OUTPUT_CAP_CHARS,
    test_timeout_s: float = TEST_TIMEOUT_S,
) -> Harness:
    """A harness with the plugin's defaults: a backend by name (its stale runs cleaned), prompt texts by name.

    Prompts are looked up in ./prompts, then the repository's; the default prompt falls back
    to its built-in text. Scripts and training use this; it is :meth:`Harness.from_options`
    with the options these arguments name.
    """
    from .agents.prompts import resolve_prompt

    limits = limits or EpisodeLimits()
    options = TermrlOptions(
        sandbox=backend_name,
        prompt_texts=dict(resolve_prompt(value) for value in prompts),
        command_timeout_s=command_timeout_s,
        output_cap_chars=output_cap_chars,
        test_timeout_s=test_timeout_s,
        max_tool_calls=limits.max_tool_calls,
        max_generated_tokens=limits.max_generated_tokens,
        max_total_tokens=limits.max_total_tokens,
        max_commands=limits.max_commands,
        episode_timeout_s=limits.wall_clock_s,
    )
    return Harness.from_options(options)
