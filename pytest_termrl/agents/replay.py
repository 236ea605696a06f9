"""The replay agent: plays a recorded trial's calls as recorded and notes where the replay's output diverged.

Each recorded call is played as it was made: a bash call's command in the shell, a
keystroke call's keys into the terminal session (its wait ends when the prompt is back or
the screen has been quiet a moment, capped at the recorded duration), a completion call
ends the episode. A call of a tool this project does not know is not played; it is
counted as a divergence. After each played call the replay's output is compared with
the recorded observation (:mod:`.observation_match`); a divergence is kept with its step.
"""

from __future__ import annotations

import json

from ..report.record import EndReason
from ..sandbox.base import KeystrokeBatch
from ..trajectories.model import RecordedCall, RecordedTrial
from .base import Agent, AgentContext, Observation, Turn
from .observation_match import DIVERGENCE_BELOW, similarity

DEFAULT_KEYS_WAIT_S = 1.0
"""The wait after a keystroke call whose trajectory recorded no duration."""
SHOWN_CHARS = 400
"""How much of each side a divergence keeps."""


class ReplayAgent(Agent):
    """Plays ``AgentContext.recorded``: every call of one recorded trial, in order."""

    name = "replay"

    def __init__(self) -> None:
        super().__init__()
        self.trial: RecordedTrial | None = None
        self._calls: list[RecordedCall] = []
        self._next = 0
        self._last: RecordedCall | None = None
        self._pending_id: str | None = None
        self.divergences: list[dict] = []
        self.unplayed: list[dict] = []
        self.played_steps: list[int] = []
        """The recorded step of each played call, in order: command N of the episode was played_steps[N-1]."""

    def start(self, context: AgentContext) -> None:
        self.trial = context.recorded
        self._calls = list(self.trial.calls) if self.trial is not None else []
        self._next = 0
        self._last = None
        self._pending_id = None
        self.divergences, self.unplayed, self.played_steps = [], [], []
        self.messages = [
            {"role": "system", "content": context.system_prompt},
            {"role": "user", "content": (self.trial.instruction if self.trial and self.trial.instruction else context.instruction)},
        ]
        if self.trial is not None:
            self.model = self.trial.model

    def next_turn(self, last: Observation | None) -> Turn:
        if self.trial is None:
            return Turn(end_reason=EndReason.HARNESS_ERROR, error="no recorded trial for this task and attempt")
        if self._pending_id is not None and self._last is not None:
            got = last.as_tool_text() if last is not None else ""
            self.messages.append({"role": "tool", "tool_call_id": self._pending_id, "content": got})
            self._compare(self._last, last)
            self._pending_id = None
        while self._next < len(self._calls):
            call = self._calls[self._next]
            self._next += 1
            if call.kind == "done":
                self.messages.append({"role": "assistant", "content": "", "tool_calls": [_tool_call(call, "task_complete", {})]})
                self.messages.append({"role": "tool", "tool_call_id": _call_id(call), "content": "[the recorded agent declared the task complete]"})
                return Turn(end_reason=EndReason.AGENT_DONE)
            turn = self._turn(call)
            if turn is None:
                self.unplayed.append({"step": call.step, "call": _call_id(call), "function": call.function_name,
                                      "reason": "a tool this project does not play"})
                self.divergences.append({"step": call.step, "call": _call_id(call), "kind": "unplayed",
                                         "expected": _shown(call.observation), "got": "", "similarity": 0.0})
                continue
            self.usage.tool_calls += 1
            self.played_steps.append(call.step)
            self._last = call
            self._pending_id = _call_id(call)
            name, arguments = ("bash", {"command": call.command}) if turn.command is not None else (
                "send_keys", {"keys": list(call.keys), "wait_s": turn.keys.max_wait_s if turn.keys else None})
            self.messages.append({"role": "assistant", "content": "", "tool_calls": [_tool_call(call, name, arguments)]})
            return turn
        return Turn(end_reason=EndReason.NO_TOOL_CALL)

    def _turn(self, call: RecordedCall) -> Turn | None:
        if call.kind == "bash" and call.command is not None:
            return Turn(command=call.command)
        if call.kind == "keys":  # no keys at all: the recorded agent only waited for the screen
            wait = call.duration_s if call.duration_s is not None else DEFAULT_KEYS_WAIT_S
            return Turn(keys=KeystrokeBatch(tuple(call.keys), max_wait_s=max(wait, 0.0), settle=True))
        return None

    def _compare(self, call: RecordedCall, last: Observation | None) -> None:
        if call.observation is None or last is None:
            return
        got = last.output
        score = similarity(call.observation, got)
        if score < DIVERGENCE_BELOW:
            self.divergences.append({"step": call.step, "call": _call_id(call), "kind": str(call.kind),
                                     "expected": _shown(call.observation), "got": _shown(got), "similarity": round(score, 3)})

    def transcript(self) -> list[dict]:
        messages = list(self.messages)
        if self._pending_id is not None:
            messages.append({"role": "tool", "tool_call_id": self._pending_id, "content": "[the call was not run: the episode ended]"})
        return messages

    def record_fields(self) -> dict:
        trial = self.trial
        if trial is None:
            return {}
        return {"replay": {
            "trial": trial.trial,
            "source": str(trial.source),
            "format": str(trial.format),
            "recorded_reward": trial.recorded_reward,
            "calls": len(self._calls),
            "played": self.usage.tool_calls,
            "divergences": list(self.divergences),
            "unplayed": list(self.unplayed),
            "played_steps": list(self.played_steps),
        }}


def _call_id(call: RecordedCall) -> str:
    return call.call_id or f"step{call.step}"


def _tool_call(call: RecordedCall, name: str, arguments: dict) -> dict:
    return {"id": _call_id(call), "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _shown(text: str | None) -> str:
    if not text:
        return ""
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS // 2] + " … " + text[-SHOWN_CHARS // 2 :]
