"""The harness: everything one run shares (backend, settings, prompts), free of pytest.

The plugin's fixtures and the training loop both go through it, so an episode is played
the same way whether pytest or a trainer asked for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import NamedTuple

from .agents.base import Agent, AgentContext, EpisodeLimits
from .episode import EpisodeMonitor, EpisodeOutcome, EpisodeSettings, EpisodeSpec, run_episode
from .faults import FAMILIES, FaultMonitor, FaultState
from .oracle.decoys import plant_decoys
from .oracle.monitor import CollateralMonitor
from .oracle.policy import Permission, Policy
from .sandbox.base import Sandbox, SandboxBackend
from .tasks.suite import LoadedTask


@dataclass
class Harness:
    backend: SandboxBackend
    settings: EpisodeSettings = field(default_factory=EpisodeSettings)
    prompts: dict[str, str] = field(default_factory=dict)
    """System prompt text by prompt name."""
    predictions: dict[str, str] = field(default_factory=dict)
    salt: str = ""

    def new_sandbox(self, loaded: LoadedTask, label: str) -> Sandbox:
        """A sandbox with the task's environment in place and its setup run."""
        sandbox = self.backend.create(label)
        try:
            sandbox.prepare(loaded.task)
        except BaseException:
            sandbox.close()
            raise
        return sandbox

    def inject(self, loaded: LoadedTask, sandbox: Sandbox, family: str) -> FaultState | None:
        """Break the prepared environment as the family says, at the contract's frozen target."""
        if family == "clean":
            return None
        target = loaded.contract.fault_targets[family]
        s = sandbox.settings
        return FAMILIES[family].inject(sandbox.home, target, s.agent_uid, s.agent_gid, salt=self.salt)

    def watch(self, loaded: LoadedTask, sandbox: Sandbox, fault: FaultState | None = None) -> CollateralMonitor:
        """Plant the task's decoys, take the baseline manifest and start the collateral oracle.

        Called after any fault was injected, so the fault's own changes are in the baseline,
        and repairing them is permitted.
        """
        task = loaded.task
        permitted = loaded.contract.permitted if loaded.contract is not None else ()
        policy = Policy([*(Permission.from_dict(p) for p in permitted), *(fault.permissions() if fault else ())])
        outputs = [p["path"] for p in permitted]
        settings = sandbox.settings
        decoys = plant_decoys(sandbox.home, task.id, task.inputs, settings.agent_uid, settings.agent_gid, avoid=outputs)
        # Where the backend can name the agent's processes (bwrap), the oracle follows kernel
        # events and a command costs what it changed; elsewhere every command walks the home.
        return CollateralMonitor.start(sandbox.home, policy, decoys, getattr(sandbox, "agent_pids", None))

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
        )

    def play(
        self,
        spec: EpisodeSpec,
        loaded: LoadedTask,
        sandbox: Sandbox,
        agent: Agent,
        oracle: CollateralMonitor | None = None,
        fault: FaultState | None = None,
        monitors: list[EpisodeMonitor] = (),
    ) -> EpisodeOutcome:
        """Play one episode; the collateral oracle watches it (pass ``oracle`` to keep a handle).

        With a fault, its monitor comes after the oracle: the oracle judges the home as the
        agent left it, then the fault monitor checks integrity and restores the input for grading.
        """
        context = self.context(spec, loaded)
        if fault is not None:
            context = replace(context, fault_repair=FAMILIES[fault.family].generic_repair(fault))
        settings = self.settings
        if context.limits is not settings.limits:
            settings = EpisodeSettings(context.limits, settings.command_timeout_s, settings.per_test_timeout_s)
        inventory = loaded.contract.tests if loaded.contract is not None else None
        fault_monitors = [FaultMonitor(sandbox.home, fault)] if fault is not None else []
        monitors = [oracle or self.watch(loaded, sandbox, fault), *fault_monitors, *monitors]
        return run_episode(
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

    def play_fresh(self, loaded: LoadedTask, agent: Agent, label: str, *, keep_open: bool = False) -> Played:
        """Play one clean episode in a sandbox of its own, labelled '<task>-<label>'.

        The sandbox is closed before this returns, unless ``keep_open`` (its processes
        stopped, for a caller that looks inside it and then closes it).
        """
        task_id = loaded.task.id
        spec = EpisodeSpec("fresh", task_id, "clean", label, 0, label=f"{task_id}-{label}")
        sandbox = self.new_sandbox(loaded, f"fresh-{task_id}-{label}")
        try:
            oracle = self.watch(loaded, sandbox)
            outcome = self.play(spec, loaded, sandbox, agent, oracle=oracle)
        except BaseException:
            sandbox.close()
            raise
        if not keep_open:
            sandbox.close()
            return Played(outcome, oracle, None)
        return Played(outcome, oracle, sandbox)


class Played(NamedTuple):
    """What :meth:`Harness.play_fresh` hands back: the outcome, its collateral oracle, the sandbox if kept open."""

    outcome: EpisodeOutcome
    oracle: CollateralMonitor
    sandbox: Sandbox | None


def default_harness(
    backend_name: str = "bwrap",
    prompts: list[str] | tuple[str, ...] = (),
    *,
    limits: EpisodeLimits | None = None,
    command_timeout_s: float = 30.0,
    output_cap: int = 3000,
    per_test_timeout_s: float = 20.0,
) -> Harness:
    """A harness with the plugin's defaults: a backend by name (its stale runs cleaned), prompt texts by name.

    Prompts are looked up in ./prompts, then the repository's; the default prompt falls back
    to its built-in text. Scripts and training use this; the plugin builds its own from options.
    """
    from .agents.prompts import resolve_prompt
    from .sandbox import SandboxSettings, make_backend
    from .sandbox.layout import default_workroot

    texts = dict(resolve_prompt(value) for value in prompts)
    backend = make_backend(backend_name, SandboxSettings(command_timeout_s=command_timeout_s, output_cap_chars=output_cap), default_workroot())
    backend.cleanup_stale()
    return Harness(
        backend=backend,
        settings=EpisodeSettings(limits or EpisodeLimits(), command_timeout_s, per_test_timeout_s),
        prompts=texts,
    )
