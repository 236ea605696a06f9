"""Find and read the runs a report shows: a run directory or an episode log, one record per episode key."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..episodes import read_log

LOG_NAME = "episodes.jsonl"


class ReportInputError(Exception):
    """A path given to the report holds no episode log; the message names it and what was expected."""


@dataclass
class Run:
    """One run's episodes as the log keeps them (the last record per episode key)."""

    label: str
    records: list[dict] = field(default_factory=list)
    source: str = ""
    notes: list[str] = field(default_factory=list)


def log_path(path: Path) -> Path:
    """The episode log a path names: the file itself, or ``episodes.jsonl`` inside a run directory."""
    if path.is_dir():
        found = path / LOG_NAME
        if not found.is_file():
            raise ReportInputError(f"{path}: no {LOG_NAME} in this folder: expected a run directory or an episode JSONL file")
        return found
    if not path.is_file():
        raise ReportInputError(f"{path}: not found: expected a run directory or an episode JSONL file")
    return path


def read_runs(paths: list[Path]) -> list[Run]:
    """Each path as one run, labelled by its folder (or file stem), labels made unique."""
    runs: list[Run] = []
    seen: dict[str, int] = {}
    for path in paths:
        log = log_path(Path(path))
        contents = read_log(log)
        if not contents.records:
            raise ReportInputError(f"{log}: no episode records (expected JSON lines with an 'episode_id' field)")
        label = log.parent.name if log.name == LOG_NAME else log.stem
        label = label or str(log)
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label}#{seen[label]}"
        warning = contents.warning()
        notes = [warning] if warning else []
        runs.append(Run(label, contents.records, str(log), notes))
    return runs
