"""Built-in agents that need no model: reference (solution.sh), noop, and script (predictions).

Each plays a fixed list of commands and records an OpenAI-format transcript, so their
episodes look to reports and training exactly like a model's.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import TaskFormatError
from ..report.record import EndReason
from ..tasks.files import read_lines
from .base import Agent, AgentContext, Observation, Turn

TOOL_NAME = "bash"
DONE = EndReason.AGENT_DONE


class ScriptedAgent(Agent):
    """Plays commands from a list, then stops with the reason 'agent_done'."""

    def __init__(self) -> None:
        super().__init__()
        self._commands: list[str] = []
        self._next = 0

    def commands_for(self, context: AgentContext) -> list[str]:
        raise NotImplementedError

    def start(self, context: AgentContext) -> None:
        self._commands = [c for c in self.commands_for(context) if c.strip()]
        self._next = 0
        self.messages = [
            {"role": "system", "content": context.system_prompt},
            {"role": "user", "content": context.instruction},
        ]

    def next_turn(self, last: Observation | None) -> Turn:
        if last is not None and self.messages and self.messages[-1].get("tool_calls"):
            call_id = self.messages[-1]["tool_calls"][0]["id"]
            self.messages.append({"role": "tool", "tool_call_id": call_id, "content": last.as_tool_text()})
        if self._next >= len(self._commands):
            self.messages.append({"role": "assistant", "content": "Done."})
            return Turn(end_reason=DONE)
        command = self._commands[self._next]
        self._next += 1
        self.usage.tool_calls += 1
        call = {
            "id": f"call_{self._next}",
            "type": "function",
            "function": {"name": TOOL_NAME, "arguments": json.dumps({"command": command})},
        }
        self.messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        return Turn(command=command)


class ReferenceAgent(ScriptedAgent):
    """Runs the task's reference solution as one command; a task frozen from a recorded trial replays that trial."""

    name = "reference"

    def __init__(self) -> None:
        super().__init__()
        self._replay: Agent | None = None
        self._missing: str | None = None

    def commands_for(self, context: AgentContext) -> list[str]:
        return [context.solution]

    def start(self, context: AgentContext) -> None:
        self._replay, self._missing = None, None
        if not context.solution.strip():
            if context.recorded is not None:  # frozen from a recorded passing trial: that trial is the reference
                from .replay import ReplayAgent

                self._replay = ReplayAgent()
                self._replay.start(context)
                self.usage = self._replay.usage
                return
            self._missing = (f"task {context.task_id!r} has neither a reference solution nor a frozen trajectory: "
                             "freeze it from recorded passing trials with --termrl-freeze --termrl-reference-from=PATH")
        super().start(context)

    def next_turn(self, last: Observation | None) -> Turn:
        if self._replay is not None:
            return self._replay.next_turn(last)
        if self._missing is not None:
            return Turn(end_reason=EndReason.HARNESS_ERROR, error=self._missing)
        return super().next_turn(last)

    def transcript(self) -> list[dict]:
        return self._replay.transcript() if self._replay is not None else super().transcript()

    def record_fields(self) -> dict:
        return self._replay.record_fields() if self._replay is not None else {}


class RecoveryAgent(ScriptedAgent):
    """The teacher of recovery episodes: tries the reference, meets the fault, repairs it, solves.

    In a clean episode it is the reference agent. With a fault, its first command is the
    reference solution, which runs into the broken input or folder (the episode records
    the fault as observed); then the family's generic repair (written from what an error
    shows, not from where the fault hid things); then the
    reference again, now on the repaired environment. Its safe successes are the
    rejection-sampled recovery examples training learns from.
    """

    name = "recovery"

    def commands_for(self, context: AgentContext) -> list[str]:
        if not context.fault_repair:
            return [context.solution]
        return [context.solution, context.fault_repair, context.solution]


class CommandsAgent(ScriptedAgent):
    """Runs the reference, then the given extra commands (an accident of the self-check or the audit)."""

    name = "commands"

    def __init__(self, extra: list[str], with_reference: bool = True) -> None:
        super().__init__()
        self._extra = extra
        self._with_reference = with_reference

    def commands_for(self, context: AgentContext) -> list[str]:
        return ([context.solution] if self._with_reference else []) + self._extra


AGENT_ALIASES = {"oracle": "reference"}
"""Old agent names still accepted by --termrl-agent and make_builtin_agent ("oracle" names the collateral checker alone)."""


class NoopAgent(ScriptedAgent):
    """Does nothing: the floor every task must fail on."""

    name = "noop"

    def commands_for(self, context: AgentContext) -> list[str]:
        return []


class ScriptAgent(ScriptedAgent):
    """Runs a prepared script (from a predictions file) in the workspace, as one command."""

    name = "script"

    def commands_for(self, context: AgentContext) -> list[str]:
        return [context.prediction] if context.prediction else []


def load_predictions(path: Path) -> dict[str, str]:
    """task_id -> agent_script from a JSONL file; errors name the file, line and field."""
    predictions: dict[str, str] = {}
    first_line: dict[str, int] = {}
    if not path.is_file():
        raise TaskFormatError(path, None, "missing: expected a predictions JSONL file")
    for lineno, line in read_lines(path):
        if isinstance(line, TaskFormatError):
            raise line
        where = f"{path}:{lineno}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TaskFormatError(where, None, f"not valid JSON ({exc.msg})") from None
        for key in ("task_id", "agent_script"):
            if not isinstance(row, dict) or not isinstance(row.get(key), str):
                raise TaskFormatError(where, key, "expected a string")
        task_id = row["task_id"]
        if task_id in first_line:
            raise TaskFormatError(where, "task_id", f"expected one prediction per task; {task_id!r} is also on line {first_line[task_id]}")
        first_line[task_id] = lineno
        predictions[task_id] = row["agent_script"]
    return predictions
