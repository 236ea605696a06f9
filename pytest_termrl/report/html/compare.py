"""Paired comparison of runs: per task x family, the change in safe-success rate with a paired bootstrap CI, and the flips."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..summary import cluster_bootstrap_ci
from .data import PageData


@dataclass
class Flip:
    """A task x family cell that passed in one run and failed in the other, with the episodes of both sides."""

    task_id: str
    family: str
    passed_in: str
    """'baseline' or 'other'."""
    baseline: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)


@dataclass
class Comparison:
    """``other`` against ``baseline`` on the cells both ran; the CI resamples tasks (paired, clustered)."""

    baseline: str
    other: str
    cells: int
    tasks: int
    baseline_rate: float
    other_rate: float
    difference: float
    ci95: tuple[float, float]
    flips: list[Flip] = field(default_factory=list)
    unpaired: int = 0
    """Cells only one of the two runs played: left out of the difference."""


def _cells(data: PageData, run: int) -> dict[tuple[str, str], list[tuple[bool, str]]]:
    cells: dict[tuple[str, str], list[tuple[bool, str]]] = defaultdict(list)
    for row in data.index:
        if row.run == run:
            cells[(row.task_id, row.family)].append((row.outcome == "safe_success", row.uid))
    return cells


def compare_runs(data: PageData, baseline: int, other: int) -> Comparison:
    """Cell rate = the share of a run's episodes in that task x family that were safe successes."""
    a, b = _cells(data, baseline), _cells(data, other)
    paired = sorted(set(a) & set(b))
    by_task: dict[str, list[float]] = defaultdict(list)
    rate_a = rate_b = 0.0
    flips: list[Flip] = []
    for key in paired:
        ra = sum(ok for ok, _ in a[key]) / len(a[key])
        rb = sum(ok for ok, _ in b[key]) / len(b[key])
        rate_a += ra
        rate_b += rb
        by_task[key[0]].append(rb - ra)
        pass_a, pass_b = ra == 1.0, rb == 1.0
        if pass_a != pass_b:
            flips.append(Flip(key[0], key[1], "baseline" if pass_a else "other",
                              [uid for _, uid in a[key]], [uid for _, uid in b[key]]))
    n = len(paired)
    low, high = cluster_bootstrap_ci(by_task) if n else (0.0, 0.0)
    return Comparison(
        baseline=data.runs[baseline], other=data.runs[other], cells=n, tasks=len(by_task),
        baseline_rate=rate_a / n if n else 0.0, other_rate=rate_b / n if n else 0.0,
        difference=(rate_b - rate_a) / n if n else 0.0, ci95=(low, high), flips=flips,
        unpaired=len(set(a) ^ set(b)),
    )


def compare_all(data: PageData) -> list[Comparison]:
    """Every run after the first against the first."""
    return [compare_runs(data, 0, other) for other in range(1, len(data.runs))]
