"""The interface every agent implements: the episode loop asks it for the next command.

An agent never touches the sandbox itself. The loop hands it what the shell returned and
gets back either one bash command to run or the reason it stopped.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..report.record import EndReason
from ..sandbox.base import KeystrokeBatch
from ..settings import EpisodeLimits  # noqa: F401  (the episode's limits, a section of the settings tree)

if TYPE_CHECKING:
    from ..trajectories.model import RecordedTrial


@dataclass(frozen=True)
class AgentContext:
    """What an agent learns about the episode before its first turn."""

    task_id: str
    instruction: str
    system_prompt: str
    prompt_name: str
    limits: EpisodeLimits
    solution: str = ""
    """The reference solution; only the oracle agent may read it."""
    prediction: str | None = None
    """A scripted agent's prepared script, if one was given for this task."""
    fault_repair: str | None = None
    """The injected fault's repair command (run in the home); only the recovery teacher reads it."""
    recorded: "RecordedTrial | None" = None
    """The recorded trial this episode replays (``--termrl-trajectories``); only the replay agent reads it."""


@dataclass(frozen=True)
class Observation:
    """What the shell returned for the agent's last command."""

    output: str
    exit_code: int | None
    timed_out: bool = False
    shell_restarted: bool = False
    commands_left: int | None = None
    note: str = ""
    """A harness message for the agent (budget exhausted, call not run, ...)."""
    terminal: bool = False
    """The screen of the terminal session after a keystroke batch (no exit code: nothing ended)."""

    def as_tool_text(self) -> str:
        """The text a model sees as the tool result."""
        parts = [self.output.rstrip("\n")] if self.output else []
        if self.terminal:
            if self.timed_out:
                parts.append("[the screen was still changing when the wait ended]")
        else:
            if self.timed_out:
                parts.append("[the command timed out and its processes were killed]")
            if self.shell_restarted:
                parts.append("[the shell was restarted; working directory and variables were restored]")
            parts.append(f"[exit code: {self.exit_code if self.exit_code is not None else 'none'}]")
        if self.commands_left is not None:
            parts.append(f"[commands left: {self.commands_left}]")
        if self.note:
            parts.append(f"[{self.note}]")
        return "\n".join(parts)


@dataclass
class Turn:
    """The agent's move: a command to run, keys to type into the terminal session, or the reason it stopped (then both are None)."""

    command: str | None = None
    keys: KeystrokeBatch | None = None
    end_reason: EndReason | None = None
    error: str | None = None
    """Set with end_reason 'server_error' and the like: a harness-side failure."""


@dataclass
class AgentUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    tool_calls: int = 0
    malformed_tool_calls: int = 0
    turns: list[dict] = field(default_factory=list)


class Agent(ABC):
    """One agent instance plays one episode."""

    name: str = "agent"
    model: str | None = None
    needs_model: bool = False
    """True for an agent played by a model behind an OpenAI-compatible endpoint (made with that endpoint)."""

    def __init__(self) -> None:
        self.usage = AgentUsage()
        self.messages: list[dict] = []

    @abstractmethod
    def start(self, context: AgentContext) -> None:
        """Prepare for a new episode."""

    @abstractmethod
    def next_turn(self, last: Observation | None) -> Turn:
        """Given what the previous command returned (None at the start), decide the next move."""

    def transcript(self) -> list[dict]:
        """The conversation as chat messages (OpenAI format), for reports and training."""
        return list(self.messages)

    def record_fields(self) -> dict:
        """What this agent adds to the episode's record (a replay's divergences); keys of :class:`EpisodeRecord`."""
        return {}

    def close(self) -> None:
        """Release what the agent holds (HTTP clients and the like)."""
