"""Find the recorded runs under a path: a Harbor job or trial folder, an ATIF file or an episode log, each read.

:func:`read_recorded` takes what a user points at and returns every trial read and a
Skipped line for everything that could not be; :func:`trials_by_task` groups the trials so
that attempt N of a task replays the N-th recorded trial of it.
"""

from __future__ import annotations

import json
from pathlib import Path

from .atif import read_atif
from .episode_log import read_episode_log
from .harbor_job import read_trial
from .model import RecordedTrial, Skipped

EXPECTED = ("a Harbor job folder (one folder per trial, each with result.json and agent/trajectory.json), "
            "a trial folder, an ATIF trajectory.json or an episode log (.jsonl)")


def read_recorded(path: Path) -> tuple[list[RecordedTrial], list[Skipped]]:
    """Every recorded trial under ``path``, and one Skipped line for each thing there that could not be read.

    A folder is a trial folder when it holds an ``agent`` folder or its result.json is a
    trial's (it has a ``trial_name``); otherwise it is a job folder, whose trials are its
    subfolders holding result.json, config.json or agent/trajectory.json, read in sorted path order (the
    job's own result.json and config.json at the top are not a trial). A ``.jsonl`` file is an
    episode log, any other file an ATIF trajectory.
    """
    if path.is_dir():
        if _is_trial(path):
            return _one(read_trial(path))
        folders = sorted(p for p in path.iterdir() if p.is_dir() and _holds_trial(p))
        if not folders:
            return [], [Skipped(str(path), f"{path}: a folder with no trial in it; expected {EXPECTED}")]
        trials: list[RecordedTrial] = []
        skipped: list[Skipped] = []
        for folder in folders:
            found, missed = _one(read_trial(folder))
            trials += found
            skipped += missed
        return trials, skipped
    if path.is_file():
        if path.suffix == ".jsonl":
            return read_episode_log(path)
        return _one(read_atif(path))
    return [], [Skipped(str(path), f"{path}: no such file or folder; expected {EXPECTED}")]


def trials_by_task(trials: list[RecordedTrial]) -> dict[str, list[RecordedTrial]]:
    """The trials of each task in the order they were played (``attempt_order``); trials of no known task under ``""``."""
    grouped: dict[str, list[RecordedTrial]] = {}
    for trial in sorted(trials, key=lambda t: t.attempt_order):
        grouped.setdefault(trial.task_name or "", []).append(trial)
    return grouped


def _one(read: RecordedTrial | Skipped) -> tuple[list[RecordedTrial], list[Skipped]]:
    return ([], [read]) if isinstance(read, Skipped) else ([read], [])


def _holds_trial(folder: Path) -> bool:
    """A subfolder of a job that Harbor wrote as a trial (its config, result or trajectory): read, or named as skipped."""
    return any((folder / name).is_file() for name in ("result.json", "config.json", "agent/trajectory.json"))


def _is_trial(folder: Path) -> bool:
    if (folder / "agent").is_dir():
        return True
    try:
        result = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(result, dict) and "trial_name" in result
