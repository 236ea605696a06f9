"""The harness: everything one run shares (backend, settings, prompts), free of pytest.

The plugin's fixtures and the training loop both go through it, so an episode is played
the same way whether pytest or a trainer asked for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .agents.base import Agent, AgentContext, EpisodeLimits
from .episode import EpisodeMonitor, EpisodeOutcome, EpisodeSettings, EpisodeSpec, run_episode
from .sandbox.base import Sandbox, SandboxBackend
from .tasks.suite import LoadedTask


@dataclass
class Harness:
    backend: SandboxBackend
    settings: EpisodeSettings = field(default_factory=EpisodeSettings)
    prompts: dict[str, str] = field(default_factory=dict)
    """System prompt text by prompt name."""
    predictions: dict[str, str] = field(default_factory=dict)

    def new_sandbox(self, loaded: LoadedTask, label: str) -> Sandbox:
        """A sandbox with the task's environment in place and its setup run."""
        sandbox = self.backend.create(label)
        try:
            sandbox.prepare(loaded.task)
        except BaseException:
            sandbox.close()
            raise
        return sandbox

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
        monitors: list[EpisodeMonitor] = (),
    ) -> EpisodeOutcome:
        context = self.context(spec, loaded)
        settings = self.settings
        if context.limits is not settings.limits:
            settings = EpisodeSettings(context.limits, settings.command_timeout_s, settings.per_test_timeout_s)
        inventory = loaded.contract.tests if loaded.contract is not None else None
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
