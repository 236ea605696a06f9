"""The pair of runs the overview puts side by side: which two, and what the panel shows of them.

The pair is named (``--pair BASELINE OTHER``) or, by default, the runs named ``base`` and
``trained`` when both are present: the demo's untrained model and the same model with its
trained adapter. Without either there is no pair panel. The figures come from
:func:`compare.compare_runs`, so the panel and the "Compare runs" view never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .compare import Comparison, Flip, compare_runs
from .data import PageData

DEFAULT_PAIR = ("base", "trained")
"""(baseline, other) shown when no pair is named and a report holds runs by both names."""


class PairError(ValueError):
    """A named pair the report cannot show; the message names the run and the runs that exist."""


def choose_pair(runs: list[str], requested: tuple[str, str] | None = None) -> tuple[int, int] | None:
    """The (baseline, other) run indices: the pair asked for, else the default pair if present, else None."""
    if requested is None:
        if all(name in runs for name in DEFAULT_PAIR):
            return runs.index(DEFAULT_PAIR[0]), runs.index(DEFAULT_PAIR[1])
        return None
    existing = ", ".join(runs)
    for name in requested:
        if name not in runs:
            raise PairError(f"--pair: no run named {name!r} in this report (runs: {existing})")
    baseline, other = requested
    if baseline == other:
        raise PairError(f"--pair: name two different runs, not {baseline!r} twice (runs: {existing})")
    return runs.index(baseline), runs.index(other)


@dataclass
class Pair:
    """``other`` against ``baseline`` on the cells both played: rates, difference and flips from the comparison."""

    comparison: Comparison
    baseline_commands: float
    """Mean commands per episode of the baseline's episodes in the paired cells."""
    other_commands: float
    up: list[Flip] = field(default_factory=list)
    """Cells that failed in the baseline and passed in the other run."""
    down: list[Flip] = field(default_factory=list)
    """Cells that passed in the baseline and failed in the other run."""


def pair_of(data: PageData, baseline: int, other: int) -> Pair:
    """Commands are averaged over the same paired cells as the rates, so both columns describe the same episodes."""
    comparison = compare_runs(data, baseline, other)
    cells = [{(row.task_id, row.family) for row in data.index if row.run == run} for run in (baseline, other)]
    paired = cells[0] & cells[1]

    def mean_commands(run: int) -> float:
        used = [row.commands for row in data.index if row.run == run and (row.task_id, row.family) in paired]
        return sum(used) / len(used) if used else 0.0

    return Pair(comparison, mean_commands(baseline), mean_commands(other),
                up=[f for f in comparison.flips if f.passed_in == "other"],
                down=[f for f in comparison.flips if f.passed_in == "baseline"])
