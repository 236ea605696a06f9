"""A Harbor agent that runs given shell commands: one in its set-up, one as its run (the Harbor integration tests' accident).

``-a scripted_agent:ScriptedAgent --ak setup_command='...' --ak command='...' [--ak run_user=root]`` with this
folder on ``PYTHONPATH``. Harbor calls ``setup`` in its agent set-up phase and ``run`` in
the agent's phase, so a test can tell whether the environment judges each as the agent's.
"""

from __future__ import annotations

from typing import Any

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext


class ScriptedAgent(BaseAgent):
    def __init__(self, *args: Any, command: str = "", setup_command: str = "", run_user: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.command = command
        self.setup_command = setup_command
        self.run_user = run_user or None

    @staticmethod
    def name() -> str:
        return "scripted"

    def version(self) -> str:
        return "1"

    async def setup(self, environment: BaseEnvironment) -> None:
        if self.setup_command:
            await environment.exec(self.setup_command, user="root")

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        if self.command:
            result = await environment.exec(self.command, user=self.run_user)
            (self.logs_dir / "scripted.txt").write_text(f"{result.return_code}\n{result.stdout}\n{result.stderr}\n")
