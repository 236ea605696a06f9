"""RecordedCall, RecordedTrial and Skipped: a recorded agent run read into one typed record, whatever its file.

A Harbor trial folder, a lone ATIF trajectory and a line of this project's episode log all
become a :class:`RecordedTrial` holding the agent's calls in the order it made them, each a
:class:`RecordedCall` of one kind (a shell command, a keystroke batch for the terminal
session, the agent declaring it is done, or a call this project cannot play). What could not
be read is a :class:`Skipped`: the path and one line naming the file and what was expected.

Every record is a dataclass whose ``to_dict`` gives plain builtins and whose ``from_dict``
reads that back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class CallKind(StrEnum):
    """What a recorded call does when it is played again; written as its plain string value."""

    BASH = "bash"
    """A command for the shell (``command``)."""
    KEYS = "keys"
    """Keys for the terminal session (``keys``), then a wait (``duration_s``)."""
    DONE = "done"
    """The agent declaring the task complete (Terminus' ``mark_task_complete``, OpenHands' ``finish``)."""
    UNKNOWN = "unknown"
    """A tool this project does not play (a file editor, a browser): ``function_name`` and ``arguments`` kept."""


class RecordFormat(StrEnum):
    """The kind of file a trial was read from."""

    HARBOR_TRIAL = "harbor-trial"
    ATIF = "atif"
    EPISODE_LOG = "episode-log"


@dataclass(frozen=True)
class RecordedCall:
    """One call of a recorded agent, as it was made and what it saw.

    ``keys`` are tmux ``send-keys`` arguments, one each (see ``sandbox.base.KeystrokeBatch``):
    a Terminus ``keystrokes`` string is one argument, a newline in it pressing Enter and a
    whole ``C-c`` being Ctrl-C; an empty ``keystrokes`` (Terminus waiting for output) is no key
    at all, only the wait.
    """

    step: int
    """Where it was made: the ATIF ``step_id``, or the 1-based command number of an episode log's record."""
    call_id: str | None
    """The ATIF ``tool_call_id``; None for an episode log's command (the log keeps no call ids)."""
    kind: CallKind
    command: str | None = None
    """The shell command, for a ``bash`` call."""
    keys: tuple[str, ...] = ()
    """The keys, for a ``keys`` call."""
    duration_s: float | None = None
    """The recorded wait: Terminus' ``duration``, an episode log's ``wait_s``; None where none was recorded."""
    observation: str | None = None
    """The recorded tool result's text (for Terminus, the screen after the step's last keys); None if none was recorded."""
    function_name: str | None = None
    """The tool's name as recorded (None for an episode log's command)."""
    arguments: dict = field(default_factory=dict)
    """The recorded arguments of an ``unknown`` call (empty for the others: their fields say it all)."""

    def to_dict(self) -> dict:
        return {
            "step": self.step,
            "call_id": self.call_id,
            "kind": str(self.kind),
            "command": self.command,
            "keys": list(self.keys),
            "duration_s": self.duration_s,
            "observation": self.observation,
            "function_name": self.function_name,
            "arguments": dict(self.arguments),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RecordedCall":
        return cls(
            step=int(data["step"]),
            call_id=data.get("call_id"),
            kind=CallKind(data["kind"]),
            command=data.get("command"),
            keys=tuple(data.get("keys") or ()),
            duration_s=data.get("duration_s"),
            observation=data.get("observation"),
            function_name=data.get("function_name"),
            arguments=dict(data.get("arguments") or {}),
        )


AttemptOrder = tuple[str, int, int]
"""(source path, attempt, line): sorts the trials of a task into the order they were played."""


@dataclass
class RecordedTrial:
    """One recorded run of an agent on one task: who played it, what it was told, its calls, its recorded reward.

    ``recorded_reward`` is the reward the run was given when it was recorded:

    - a Harbor trial's ``verifier_result.rewards["reward"]`` if present, else the single value of
      ``rewards`` when it holds one, else None (several rewards and none named ``reward``);
      ``verifier/reward.txt`` (or ``reward.json``) stands in when result.json has no rewards;
    - an episode log's 1.0 if the episode was a safe success, else 0.0 (its ``reward`` field
      is this project's shaped reward, kept in ``rewards["reward"]``);
    - None for a lone ATIF file (it records no grading).
    """

    trial: str
    """The trial's name (Harbor's ``trial_name``), or the episode log's ``episode_id``, or an ATIF file's session id."""
    source: str
    """The path read: the trial folder, the ATIF file, or the episode log."""
    format: RecordFormat
    task_name: str | None
    """Harbor's ``task_name``, or the episode log's ``task_id``; None where the file does not say (a lone ATIF file)."""
    task_path: str | None = None
    """config.json's ``task.path`` as written (relative to where Harbor ran); None where there is none."""
    recorded_reward: float | None = None
    rewards: dict = field(default_factory=dict)
    """Every reward recorded, by name."""
    exception: str | None = None
    """What ended the run abnormally, one line: ``Type: message`` (Harbor's ``exception_info``, a log's harness error)."""
    agent: str | None = None
    model: str | None = None
    instruction: str | None = None
    """The first user message as recorded (for Terminus, its prompt template around the task's instruction)."""
    calls: list[RecordedCall] = field(default_factory=list)
    attempt_order: AttemptOrder = ("", 0, 0)
    """Sorts the trials of one task: folder path for Harbor trials, then the log's ``attempt`` and line."""
    family: str = "clean"
    """The fault family the run was played under (an episode log's ``family``; Harbor trials are clean)."""

    def to_dict(self) -> dict:
        return {
            "trial": self.trial,
            "source": self.source,
            "format": str(self.format),
            "task_name": self.task_name,
            "task_path": self.task_path,
            "recorded_reward": self.recorded_reward,
            "rewards": dict(self.rewards),
            "exception": self.exception,
            "agent": self.agent,
            "model": self.model,
            "instruction": self.instruction,
            "calls": [c.to_dict() for c in self.calls],
            "attempt_order": list(self.attempt_order),
            "family": self.family,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RecordedTrial":
        order = data.get("attempt_order") or ("", 0, 0)
        return cls(
            trial=data["trial"],
            source=data["source"],
            format=RecordFormat(data["format"]),
            task_name=data.get("task_name"),
            task_path=data.get("task_path"),
            recorded_reward=data.get("recorded_reward"),
            rewards=dict(data.get("rewards") or {}),
            exception=data.get("exception"),
            agent=data.get("agent"),
            model=data.get("model"),
            instruction=data.get("instruction"),
            calls=[RecordedCall.from_dict(c) for c in data.get("calls") or ()],
            attempt_order=(str(order[0]), int(order[1]), int(order[2])),
            family=str(data.get("family") or "clean"),
        )


@dataclass(frozen=True)
class Skipped:
    """A recorded run that could not be read: the path, and one line naming the file and what was expected."""

    path: str
    reason: str

    def to_dict(self) -> dict:
        return {"path": self.path, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Skipped":
        return cls(path=data["path"], reason=data["reason"])

    def __str__(self) -> str:
        return self.reason


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line (its whitespace runs made single spaces), cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
