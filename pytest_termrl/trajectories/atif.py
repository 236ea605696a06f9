"""ATIF trajectory.json -> the agent's calls: each tool call classified, its recorded observation attached.

ATIF (Harbor's Agent Trajectory Interchange Format, ``harbor.models.trajectories``; the RFC is
Harbor's ``docs/rfcs/0001-trajectory-format.md``) as read here:

- root: ``schema_version`` ("ATIF-v1.0" .. "ATIF-v1.7"), ``session_id`` (v1.7 may give a
  ``trajectory_id`` instead), ``agent`` {``name``, ``version``, ``model_name``, ``extra``},
  ``steps``, ``notes``, ``final_metrics``, ``extra``; v1.7 may embed ``subagent_trajectories``
  (not read: the main agent's steps are what played the task);
- a step: ``step_id`` (from 1), ``source`` ("system" | "user" | "agent"), ``message``,
  ``model_name``, ``tool_calls`` [{``tool_call_id``, ``function_name``, ``arguments``}],
  ``observation`` {``results`` [{``source_call_id``, ``content``}]};
- a result's ``content`` is a string, or from v1.6 a list of content parts (``{"type":
  "text", "text": ...}``, images): the text parts are joined, images left out.

Another version is refused, not guessed at: every version so far changed what a field may
hold (v1.6 made ``content`` a list), so a later one read as a known one could replay the
wrong calls.

What a call is, by the tool names Harbor's agents write:

- Terminus 2 (``harbor/agents/terminus_2/terminus_2.py``) writes each command of a turn as
  ``bash_command`` with ``{"keystrokes": str, "duration": float}``: the keystrokes are sent
  to tmux as one ``send-keys`` argument (``"ls\\n"`` types and presses Enter, ``"C-c"`` is
  Ctrl-C, ``""`` only waits). A call with a ``keystrokes`` string is ``keys``; one with a
  ``keys`` list (tmux key arguments, this project's keystroke batches) is too. Terminus writes
  ``mark_task_complete`` ``{}`` when the model says it is done (twice: it asks for a
  confirmation), and one observation result without ``source_call_id`` per turn, the screen
  after the turn's last keys: that text goes to the turn's last call that is not ``done``.
- Shell tools with a ``command`` (or Codex' ``cmd``) argument are ``bash``: ``bash_command``
  (Harbor's mini-swe-agent converter), ``bash`` / ``Bash`` (Claude Code, this project's
  agent), ``execute_bash`` (OpenHands), ``exec_command`` / ``shell`` (Codex; a command given
  as an argv list ``["bash", "-lc", script]`` is the script), ``run_shell_command`` (Gemini
  CLI), ``run_command``.
- ``mark_task_complete``, ``task_complete`` and OpenHands' ``finish`` are ``done``.
- Anything else (a file editor, a browser, a bash tool without its command) is ``unknown``.

Results with a ``source_call_id`` go to the call of that ``tool_call_id`` in the same step;
the others (Terminus') to the step's last call that is not ``done``, else its last call.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from .files import load_object
from .model import CallKind, RecordedCall, RecordedTrial, RecordFormat, Skipped

ATIF_VERSIONS = tuple(f"ATIF-v1.{minor}" for minor in range(8))
"""The versions read: ATIF-v1.0 .. ATIF-v1.7."""
EXPECTED = f"an ATIF trajectory ({ATIF_VERSIONS[0]} .. {ATIF_VERSIONS[-1]})"
BASH_TOOLS = frozenset({"bash_command", "bash", "Bash", "execute_bash", "exec_command", "shell", "run_shell_command", "run_command"})
"""Tools whose ``command`` (or ``cmd``) argument is a shell command."""
DONE_TOOLS = frozenset({"mark_task_complete", "task_complete", "finish"})
"""Tools by which an agent declares the task complete."""
_SHELL_FLAGS = frozenset({"-c", "-lc", "-cl"})


def read_atif(path: Path) -> RecordedTrial | Skipped:
    """A lone ATIF file as a trial: named by its session id (else its file name), its task unknown."""
    data = load_object(path, EXPECTED)
    if isinstance(data, Skipped):
        return data
    return parse_atif(data, path)


def parse_atif(data: Mapping[str, Any], path: Path) -> RecordedTrial | Skipped:
    """The trial an ATIF trajectory records: its agent, model, first user message and calls (``format`` atif)."""
    version = data.get("schema_version")
    if version not in ATIF_VERSIONS:
        if version is None:
            return Skipped(str(path), f"no schema_version in {path}; expected {EXPECTED}")
        return Skipped(str(path), f"unknown ATIF version {version} in {path}; expected {ATIF_VERSIONS[0]} .. {ATIF_VERSIONS[-1]}")
    steps = data.get("steps")
    if not isinstance(steps, list) or not all(isinstance(s, Mapping) for s in steps):
        return Skipped(str(path), f"{path}: no list of step objects under 'steps'; expected {EXPECTED}")
    raw_agent = data.get("agent")
    agent: Mapping[str, Any] = raw_agent if isinstance(raw_agent, Mapping) else {}
    model = agent.get("model_name") or next((s.get("model_name") for s in steps if s.get("model_name")), None)
    trial = data.get("session_id") or data.get("trajectory_id") or path.stem
    return RecordedTrial(
        trial=str(trial),
        source=str(path),
        format=RecordFormat.ATIF,
        task_name=None,
        agent=agent.get("name"),
        model=model,
        instruction=first_user_message(steps),
        calls=calls_of(steps),
        attempt_order=(str(path), 0, 0),
    )


def first_user_message(steps: list) -> str | None:
    """The message of the first ``user`` step, as text; None if no user step is recorded."""
    for step in steps:
        if step.get("source") == "user":
            return content_text(step.get("message"))
    return None


def calls_of(steps: list) -> list[RecordedCall]:
    """Every tool call of every step, in order, each with the observation recorded for it."""
    calls: list[RecordedCall] = []
    for step in steps:
        step_id = int(step.get("step_id") or 0)
        made = [classify(step_id, c) for c in step.get("tool_calls") or () if isinstance(c, Mapping)]
        seen: dict[int, list[str]] = {}
        for result in _results(step):
            text = content_text(result.get("content"))
            if text is None:
                continue
            at = _call_for(made, result.get("source_call_id"))
            if at is not None:
                seen.setdefault(at, []).append(text)
        calls.extend(_with_observation(call, seen.get(i)) for i, call in enumerate(made))
    return calls


def classify(step_id: int, tool_call: Mapping[str, Any]) -> RecordedCall:
    """One ATIF tool call as a recorded call of its kind (see the module's table)."""
    raw_name = tool_call.get("function_name")
    name = None if raw_name is None else str(raw_name)
    raw_id = tool_call.get("tool_call_id")
    call_id = None if raw_id is None else str(raw_id)
    args = _arguments(tool_call.get("arguments"))
    if name in DONE_TOOLS:
        return RecordedCall(step_id, call_id, CallKind.DONE, function_name=name)
    duration = _seconds(args.get("duration", args.get("duration_sec", args.get("wait_s"))))
    keystrokes = args.get("keystrokes")
    if isinstance(keystrokes, str):
        keys = (keystrokes,) if keystrokes else ()
        return RecordedCall(step_id, call_id, CallKind.KEYS, keys=keys, duration_s=duration, function_name=name)
    listed = args.get("keys")
    if isinstance(listed, list) and all(isinstance(k, str) for k in listed):
        return RecordedCall(step_id, call_id, CallKind.KEYS, keys=tuple(listed), duration_s=duration, function_name=name)
    if name in BASH_TOOLS:
        command = _command(args.get("command", args.get("cmd")))
        if command is not None:
            return RecordedCall(step_id, call_id, CallKind.BASH, command=command, function_name=name)
    return RecordedCall(step_id, call_id, CallKind.UNKNOWN, function_name=name, arguments=args)


def content_text(content: Any) -> str | None:
    """A message or result's text: a string as it is, the text parts of a v1.6 content list joined; None for none."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
        return "".join(p for p in parts if isinstance(p, str))
    return str(content)


def _results(step: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    observation = step.get("observation")
    if not isinstance(observation, Mapping):
        return []
    return [r for r in observation.get("results") or () if isinstance(r, Mapping)]


def _call_for(made: list[RecordedCall], source_call_id: Any) -> int | None:
    """The index of the call a result belongs to: its ``source_call_id``'s, else the step's last call not ``done``."""
    if source_call_id is not None:
        for i, call in enumerate(made):
            if call.call_id == str(source_call_id):
                return i
    for i in range(len(made) - 1, -1, -1):
        if made[i].kind is not CallKind.DONE:
            return i
    return len(made) - 1 if made else None


def _with_observation(call: RecordedCall, texts: list[str] | None) -> RecordedCall:
    return replace(call, observation="\n".join(texts)) if texts else call


def _arguments(raw: Any) -> dict:
    """A tool call's arguments as an object (some writers keep the model's JSON string); anything else under ``raw``."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return {"raw": raw}
    if isinstance(raw, Mapping):
        return dict(raw)
    return {} if raw is None else {"raw": raw}


def _command(value: Any) -> str | None:
    """A shell command from a string, or from an argv list (``bash -lc SCRIPT`` is SCRIPT)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        if len(value) == 3 and value[1] in _SHELL_FLAGS:
            return value[2]
        return shlex.join(value)
    return None


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)
