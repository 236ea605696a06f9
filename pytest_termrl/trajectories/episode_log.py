"""This project's episode log (JSONL) -> one RecordedTrial per episode, its calls from the record's commands.

A line is an :class:`~pytest_termrl.report.record.EpisodeRecord`. Its ``commands`` are the
calls: a dict with ``command`` (and ``exit_code``, ``timed_out``, ``duration_s``...) is a shell
command; one with ``keys`` (tmux ``send-keys`` arguments) and ``wait_s`` is a keystroke batch
for the terminal session, whatever else it holds. The observations are the ``transcript``'s
tool messages, taken in order: a command gets the first tool message after the previous
match whose call's arguments name the same command (or the same ``keys``), so the answers
to calls that never ran (a malformed call, a second call in one turn, a call cut off by the
end) are passed over.

As :func:`~pytest_termrl.report.episodes.read_log` does, a key recorded twice (a resumed
run) keeps its last record, in first-seen order. A line that is not a record, and a kept
record that is a harness error (the episode never played to the end, so its reward is not
the agent's), are a Skipped line each, naming ``file:line``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..report.record import EpisodeKey, EpisodeRecord, key_of
from .atif import content_text
from .model import CallKind, RecordedCall, RecordedTrial, RecordFormat, Skipped, one_line

EXPECTED = "one EpisodeRecord (a JSON object with an episode_id) per line"


def read_episode_log(path: Path) -> tuple[list[RecordedTrial], list[Skipped]]:
    """Every episode of the log at ``path`` (the last record of each key), and a Skipped line for each bad line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Skipped(str(path), f"{path}: unreadable ({one_line(str(exc))}); expected {EXPECTED}")]
    skipped: list[tuple[int, Skipped]] = []
    kept: dict[EpisodeKey, tuple[int, dict]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            skipped.append((number, Skipped(str(path), f"{path}:{number}: not a JSON line ({exc.msg}); expected {EXPECTED}")))
            continue
        if not isinstance(data, dict) or "episode_id" not in data:
            skipped.append((number, Skipped(str(path), f"{path}:{number}: no episode_id; expected {EXPECTED}")))
            continue
        kept[key_of(data)] = (number, data)
    trials: list[RecordedTrial] = []
    for number, data in kept.values():
        read = episode_trial(data, path, number)
        if isinstance(read, Skipped):
            skipped.append((number, read))
        else:
            trials.append(read)
    return trials, [s for _, s in sorted(skipped, key=lambda found: found[0])]


def episode_trial(data: Mapping[str, Any], path: Path, line: int) -> RecordedTrial | Skipped:
    """The trial one log line records (``recorded_reward``: 1.0 for a safe success, else 0.0)."""
    where = f"{path}:{line}"
    try:
        record = EpisodeRecord.from_dict(data)
    except (TypeError, ValueError, KeyError) as exc:
        return Skipped(str(path), f"{where}: not an EpisodeRecord ({one_line(str(exc))}); expected {EXPECTED}")
    if record.harness_error:
        return Skipped(str(path), f"{where}: episode {record.episode_id} is a harness error "
                                  f"({one_line(record.harness_error)}); expected a played episode")
    return RecordedTrial(
        trial=record.episode_id,
        source=str(path),
        format=RecordFormat.EPISODE_LOG,
        task_name=record.task_id or None,
        recorded_reward=1.0 if record.safe_success else 0.0,
        rewards={"reward": record.reward},
        agent=record.agent or None,
        model=record.model,
        instruction=_first_user_message(record.transcript),
        calls=commands_as_calls(record.commands, record.transcript),
        attempt_order=(str(path), record.attempt, line),
        family=record.family,
    )


def commands_as_calls(commands: list[dict], transcript: list[dict]) -> list[RecordedCall]:
    """A record's commands as calls, each with the transcript's answer to it (see the module's docstring)."""
    answers = _tool_answers(transcript)
    at = 0
    calls = []
    for number, command in enumerate(commands, 1):
        call = _call(number, command)
        for i in range(at, len(answers)):
            if _same(answers[i][0], command):
                call = replace(call, observation=answers[i][1])
                at = i + 1
                break
        calls.append(call)
    return calls


def _call(number: int, command: Mapping[str, Any]) -> RecordedCall:
    keys = command.get("keys")
    if isinstance(keys, list):
        wait = command.get("wait_s")
        duration = float(wait) if isinstance(wait, (int, float)) and not isinstance(wait, bool) else None
        return RecordedCall(number, None, CallKind.KEYS, keys=tuple(str(k) for k in keys), duration_s=duration)
    if isinstance(command.get("command"), str):
        return RecordedCall(number, None, CallKind.BASH, command=command["command"])
    return RecordedCall(number, None, CallKind.UNKNOWN, arguments=dict(command))


def _tool_answers(transcript: list[dict]) -> list[tuple[dict, str | None]]:
    """(the call's arguments, the answer's text) of each tool message, in order."""
    arguments: dict[str, dict] = {}
    answers: list[tuple[dict, str | None]] = []
    for message in transcript:
        if not isinstance(message, Mapping):
            continue
        for call in message.get("tool_calls") or ():
            if isinstance(call, Mapping) and call.get("id") is not None:
                arguments[str(call["id"])] = _arguments(call.get("function"))
        if message.get("role") == "tool":
            answers.append((arguments.get(str(message.get("tool_call_id")), {}), content_text(message.get("content"))))
    return answers


def _arguments(function: Any) -> dict:
    raw = function.get("arguments") if isinstance(function, Mapping) else None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return {}
    return dict(raw) if isinstance(raw, Mapping) else {}


def _same(arguments: Mapping[str, Any], command: Mapping[str, Any]) -> bool:
    """Whether a tool call's arguments name this recorded command or keystroke batch."""
    keys = command.get("keys")
    if isinstance(keys, list):
        return arguments.get("keys") == keys or (len(keys) == 1 and arguments.get("keystrokes") == keys[0])
    return "command" in command and arguments.get("command") == command["command"]


def _first_user_message(transcript: list[dict]) -> str | None:
    for message in transcript:
        if isinstance(message, Mapping) and message.get("role") == "user":
            return content_text(message.get("content"))
    return None
