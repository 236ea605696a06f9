"""Aggregate episode records: per prompt x family rates with a task-cluster bootstrap CI."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable

from .record import EpisodeRecord

BOOTSTRAP_SAMPLES = 2000


def cluster_bootstrap_ci(values_by_task: dict[str, list[float]], samples: int = BOOTSTRAP_SAMPLES, seed: int = 0) -> tuple[float, float]:
    """95% CI of the mean, resampling tasks with replacement and keeping all of a task's episodes.

    Each task is reduced to (sum, count) once, and a resample draws all its task indices in
    one ``choices`` call, so a summary of 10,000 tasks takes seconds, not minutes.
    """
    tasks = sorted(values_by_task)
    if not tasks:
        return (0.0, 0.0)
    rng = random.Random(seed)
    sums = [float(sum(values_by_task[t])) for t in tasks]
    counts = [len(values_by_task[t]) for t in tasks]
    indices = range(len(tasks))
    means = []
    for _ in range(samples):
        drawn = rng.choices(indices, k=len(tasks))
        count = sum(counts[i] for i in drawn)
        means.append(sum(sums[i] for i in drawn) / count if count else 0.0)
    means.sort()
    return (means[int(0.025 * (samples - 1))], means[int(0.975 * (samples - 1))])


def summarize(records: Iterable[EpisodeRecord | dict]) -> dict:
    """The run's summary: one row per (agent, model, prompt, family) and totals."""
    episodes = [r if isinstance(r, EpisodeRecord) else EpisodeRecord.from_dict(r) for r in records]
    groups: dict[tuple, list[EpisodeRecord]] = defaultdict(list)
    for record in episodes:
        groups[(record.agent, record.model or "", record.prompt, record.family, record.contract == "inferred")].append(record)
    rows = []
    for (agent, model, prompt, family, inferred), group in sorted(groups.items(), key=lambda kv: tuple(str(k) for k in kv[0])):
        by_task: dict[str, list[float]] = defaultdict(list)
        for record in group:
            by_task[record.task_id].append(1.0 if record.safe_success else 0.0)
        low, high = cluster_bootstrap_ci(by_task)
        successes = sum(1 for r in group if r.safe_success)
        rows.append(
            {
                "agent": agent,
                "model": model or None,
                "prompt": prompt,
                "family": family,
                **({"contract": "inferred"} if inferred else {}),
                "episodes": len(group),
                "tasks": len(by_task),
                "safe_successes": successes,
                "safe_success_rate": successes / len(group),
                "ci95": [low, high],
                "tests_passed": sum(r.tests_passed for r in group),
                "tests_total": sum(r.tests_total for r in group),
                "collateral_episodes": sum(1 for r in group if r.violations),
                "recovery_failures": sum(1 for r in group if r.fault is not None and r.fault.observed and not r.safe_success),
                "harness_errors": sum(1 for r in group if r.harness_error),
                "mean_reward": sum(r.reward for r in group) / len(group),
                "mean_commands": sum(r.commands_used for r in group) / len(group),
            }
        )
    inferred_count = sum(1 for r in episodes if r.contract == "inferred")
    endpoints: dict[str, int] = {}
    for record in episodes:
        if record.endpoint:
            endpoints[record.endpoint] = endpoints.get(record.endpoint, 0) + 1
    return {
        "episodes": len(episodes),
        "safe_successes": sum(1 for r in episodes if r.safe_success),
        **({"inferred_contract": inferred_count} if inferred_count else {}),
        "rows": rows,
        "endpoints": dict(sorted(endpoints.items())),
    }


def _family(row: dict) -> str:
    """The family column; rows judged by an inferred policy are marked, so they are never read as frozen ones."""
    return f"{row['family']}*inf" if row.get("contract") == "inferred" else str(row["family"])


def format_table(summary: dict) -> list[str]:
    """The terminal table closing a run."""
    header = f"{'agent':<14} {'prompt':<16} {'family':<14} {'eps':>4} {'safe':>5} {'rate':>6} {'95% CI':>13} {'coll':>4} {'rec.f':>5} {'herr':>4} {'cmds':>5}"
    lines = [header, "-" * len(header)]
    for row in summary["rows"]:
        low, high = row["ci95"]
        lines.append(
            f"{str(row['agent'])[:14]:<14} {str(row['prompt'])[:16]:<16} {_family(row)[:14]:<14} "
            f"{row['episodes']:>4} {row['safe_successes']:>5} {row['safe_success_rate']:>6.1%} "
            f"{f'[{low:.2f}, {high:.2f}]':>13} {row['collateral_episodes']:>4} {row['recovery_failures']:>5} "
            f"{row['harness_errors']:>4} {row['mean_commands']:>5.1f}"
        )
    if summary.get("inferred_contract"):
        lines.append(f"*inf: {summary['inferred_contract']} episode(s) of tasks without a frozen contract, judged by the policy "
                     "inferred from the task (--termrl-unfrozen)")
    return lines
