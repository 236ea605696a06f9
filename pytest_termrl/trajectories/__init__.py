"""Recorded agent runs (Harbor jobs and trials, ATIF files, episode logs) read into one typed record for replay and regrading.

One job per module: :mod:`.model` the records, :mod:`.files` reading JSON, :mod:`.atif` an
ATIF trajectory's calls, :mod:`.harbor_job` a Harbor trial folder, :mod:`.episode_log` this
project's episode log, :mod:`.discover` what a path holds. This package imports nothing
from pytest.
"""

from __future__ import annotations

from .discover import read_recorded, trials_by_task
from .model import CallKind, RecordedCall, RecordedTrial, RecordFormat, Skipped

__all__ = ["CallKind", "RecordFormat", "RecordedCall", "RecordedTrial", "Skipped", "read_recorded", "trials_by_task"]
