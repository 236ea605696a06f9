"""A Harbor trial folder -> one RecordedTrial: result.json's task and reward, config.json's task path, the agent's ATIF calls.

A trial folder as Harbor writes it (``harbor/models/trial/paths.py``):

- ``result.json``: the ``TrialResult`` (``harbor/models/trial/result.py``): ``task_name``,
  ``trial_name``, ``trial_uri``, ``task_id``, ``source``, ``task_checksum``, ``config``,
  ``agent_info`` {``name``, ``version``, ``model_info`` {``name``, ``provider``}},
  ``agent_result`` (tokens, cost), ``verifier_result`` {``rewards``: {name: value}} or null,
  ``exception_info`` {``exception_type``, ``exception_message``, ``exception_traceback``,
  ``occurred_at``} or null, and the timings (``started_at``, ``finished_at``,
  ``environment_setup``, ``agent_setup``, ``agent_execution``, ``verifier``);
- ``config.json``: the ``TrialConfig`` (``harbor/models/trial/config.py``): ``task`` {``path``,
  ``git_url``, ``git_commit_id``, ...}, ``trial_name``, ``agent`` {``name``, ``import_path``,
  ``model_name``, ``kwargs``...}, ``environment``, ``verifier``, ``job_id``;
- ``agent/trajectory.json``: the agent's ATIF trajectory (read by :mod:`.atif`);
- ``verifier/reward.txt`` (one number) or ``verifier/reward.json`` (name: number): what the
  verifier wrote, read here only when result.json holds no rewards.

A trial that ended in an exception with no reward (the agent or environment failed before
grading) cannot be compared with a replay: it is skipped, as is one without a trajectory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from .atif import read_atif
from .files import load_object
from .model import RecordedTrial, RecordFormat, Skipped, one_line

RESULT = "Harbor's TrialResult (task_name, trial_name, verifier_result, exception_info)"
CONFIG = "Harbor's TrialConfig (task.path, trial_name, agent)"


def read_trial(folder: Path) -> RecordedTrial | Skipped:
    """The trial recorded in ``folder``, or one Skipped line naming the file at fault and what was expected."""
    result_path = folder / "result.json"
    result = load_object(result_path, RESULT)
    if isinstance(result, Skipped):
        return result
    config: Mapping[str, Any] = {}
    if (folder / "config.json").exists():
        loaded = load_object(folder / "config.json", CONFIG)
        if isinstance(loaded, Skipped):
            return loaded
        config = loaded
    rewards = trial_rewards(result, folder)
    reward = recorded_reward(rewards)
    exception = exception_line(result.get("exception_info"))
    if exception is not None and reward is None:
        return Skipped(str(result_path), f"{result_path}: the trial ended in {exception} and has no reward; "
                                         "expected a graded trial (verifier_result.rewards or verifier/reward.txt)")
    recorded = read_atif(folder / "agent" / "trajectory.json")
    if isinstance(recorded, Skipped):
        return recorded
    agent_info = _mapping(result.get("agent_info"))
    agent_config = _mapping(config.get("agent"))
    task_path = _mapping(config.get("task")).get("path")
    return replace(
        recorded,
        trial=str(result.get("trial_name") or config.get("trial_name") or folder.name),
        source=str(folder),
        format=RecordFormat.HARBOR_TRIAL,
        task_name=result.get("task_name"),
        task_path=None if task_path is None else str(task_path),
        recorded_reward=reward,
        rewards=rewards,
        exception=exception,
        agent=agent_info.get("name") or agent_config.get("name") or recorded.agent,
        model=agent_config.get("model_name") or _mapping(agent_info.get("model_info")).get("name") or recorded.model,
        attempt_order=(str(folder), 0, 0),
    )


def trial_rewards(result: Mapping[str, Any], folder: Path) -> dict:
    """result.json's ``verifier_result.rewards``; else what the verifier wrote to verifier/reward.txt or reward.json."""
    rewards = _mapping(_mapping(result.get("verifier_result")).get("rewards"))
    if rewards:
        return dict(rewards)
    try:
        return {"reward": float((folder / "verifier" / "reward.txt").read_text(encoding="utf-8").strip())}
    except (OSError, ValueError):
        pass
    try:
        written = json.loads((folder / "verifier" / "reward.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return dict(written) if isinstance(written, dict) else {}


def recorded_reward(rewards: Mapping[str, Any]) -> float | None:
    """``rewards["reward"]`` if present, else the single value, else None (see :class:`.model.RecordedTrial`)."""
    value = rewards.get("reward") if "reward" in rewards else (next(iter(rewards.values())) if len(rewards) == 1 else None)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def exception_line(info: Any) -> str | None:
    """Harbor's ``exception_info`` on one line, ``Type: message``; None when the trial raised nothing."""
    if not isinstance(info, Mapping):
        return None
    kind = str(info.get("exception_type") or "Exception")
    message = str(info.get("exception_message") or "")
    return one_line(f"{kind}: {message}" if message else kind)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
