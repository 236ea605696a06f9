"""The pytest_termrl_* hooks other plugins and conftest files implement to extend pytest-termrl.

Each says when it runs and on which process: under xdist, "the process that plays the
item" is a worker and "the controller" is the process that writes logs and summaries;
without xdist both are the one pytest process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from .agents.base import Agent
    from .episode import EpisodeSpec
    from .sandbox.base import SandboxBackend, SandboxSettings
    from .tasks.model import Task

hookspec = pluggy.HookspecMarker("pytest")


class TermrlHookSpecs:
    @hookspec(firstresult=True)
    def pytest_termrl_make_sandbox(
        self, config: "pytest.Config", name: str, settings: "SandboxSettings", workroot: "Path | None"
    ) -> "SandboxBackend | None":
        """Return the run's SandboxBackend, or None to defer to the registry (``name`` is --termrl-sandbox).

        Runs once per process that plays items (each xdist worker, or the single process),
        when the session-scoped ``termrl_harness`` fixture is first requested; the backend
        is closed at the end of that session. Also called by the backend conformance suite.
        """

    @hookspec(firstresult=True)
    def pytest_termrl_make_agent(self, config: "pytest.Config", spec: "EpisodeSpec", task: "Task") -> "Agent | None":
        """Return the Agent that plays this episode, or None to defer to --termrl-agent.

        Runs on the process that plays the item, once per episode, at fixture setup;
        the agent is closed after the episode.
        """

    @hookspec
    def pytest_termrl_episode_done(self, config: "pytest.Config", record: dict) -> None:
        """Called with the episode's record (``EpisodeRecord.to_dict()``) once it is graded.

        Runs on the process that played the episode (a worker under xdist), before the
        record travels to the controller on the test report.
        """

    @hookspec
    def pytest_termrl_modify_report(self, config: "pytest.Config", summary: dict) -> None:
        """Edit the run's summary in place before it is written as JSON and printed.

        Runs once, on the controller only, at the end of the session (run mode).
        """
