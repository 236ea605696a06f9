"""What a run mode sees of the controller at the end of a run: a narrow, typed protocol.

A mode's ``finish`` and ``summary`` receive an object of this shape and reach nothing else of
the controller, the way pytest-xdist's schedulers see the controller through
``scheduler/protocol.py``: the records, the earlier records (resume), the pairs collection
left out, and a way to report a write that failed. The plugin's ``Controller`` implements it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..settings import TermrlOptions


@runtime_checkable
class ControllerView(Protocol):
    @property
    def options(self) -> TermrlOptions:
        """The run's options (where the mode's log and reports go)."""
        ...

    @property
    def records(self) -> Sequence[dict]:
        """Every record that came back on a report this session, in arrival order."""
        ...

    @property
    def earlier(self) -> Sequence[dict]:
        """With --termrl-resume: the log's records from earlier runs, one per episode key (else empty)."""
        ...

    @property
    def left_out(self) -> Mapping[tuple, dict]:
        """(suite, task, family) -> the pair collection left out (no validated fault target), with why."""
        ...

    @property
    def unwritten(self) -> Collection[Path]:
        """The output paths whose write failed (each already reported through :meth:`write_failed`)."""
        ...

    def write_failed(self, what: str, exc: OSError, path: Path | None = None) -> None:
        """Name what could not be written and why, now and in the summary; the run will exit non-zero."""
        ...
