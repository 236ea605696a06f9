"""The training demo's table: per arm and family the safe-success rate with its CI, and the paired difference.

Kept apart from the stages (:mod:`.demo`) because the README's tools render it too: the
table ``make demo`` and ``make train-demo`` print is the one ``tools/readme.py`` writes.
"""

from __future__ import annotations

from pathlib import Path

from ...faults import CLEAN
from ...report.episodes import read_episodes
from ...report.summary import cluster_bootstrap_ci
from ..arms import paired_bootstrap_diff

ARMS = ("base", "trained")
"""The model arms: the bundled model, and it with the trained adapter."""
BASELINE_ARMS = ("reference", "noop")
"""Built-in agents an eval may run beside the model arms (no server): the ceiling and the floor."""


def _values(records: list[dict], family: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for r in records:
        if r.get("family") == family:
            out.setdefault(r["task_id"], []).append(1.0 if r.get("safe_success") else 0.0)
    return out


def compare_arms(logs: dict[str, Path]) -> dict:
    """``arms.<arm>.<family>`` figures and ``paired.<family>`` (trained minus base) from episode logs."""
    records = {arm: read_episodes(Path(path)) for arm, path in logs.items()}
    families = sorted({r["family"] for rs in records.values() for r in rs}, key=lambda f: (f != CLEAN, f))
    arms: dict = {}
    for arm, rs in records.items():
        arms[arm] = {}
        for family in families:
            group = [r for r in rs if r["family"] == family]
            if not group:
                continue
            low, high = cluster_bootstrap_ci(_values(rs, family))
            successes = sum(1 for r in group if r.get("safe_success"))
            arms[arm][family] = {
                "episodes": len(group), "tasks": len({r["task_id"] for r in group}), "safe_successes": successes,
                "safe_rate": successes / len(group), "ci_low": low, "ci_high": high,
                "collateral": sum(1 for r in group if r.get("violations")),
                "recovery_failures": sum(1 for r in group if (r.get("verdict") or {}).get("recovery_failed")),
                "harness_errors": sum(1 for r in group if r.get("harness_error")),
                "mean_commands": sum(r.get("commands_used", 0) for r in group) / len(group),
            }
    paired = {}
    if "base" in records and "trained" in records:
        for family in families:
            diff = paired_bootstrap_diff(_values(records["trained"], family), _values(records["base"], family))
            if diff is not None:
                paired[family] = {"diff": diff[0], "ci_low": diff[1], "ci_high": diff[2],
                                  "tasks": len(set(_values(records["trained"], family)) & set(_values(records["base"], family)))}
    return {"arms": arms, "paired": paired, "families": families}


def format_table(table: dict) -> list[str]:
    header = f"{'family':<17} {'arm':<9} {'eps':>4} {'safe':>5} {'rate':>6} {'95% CI':>14} {'coll':>4} {'rec.f':>5} {'herr':>4} {'cmds':>5}"
    lines = [header, "-" * len(header)]
    order = [a for a in BASELINE_ARMS + ARMS if a in table["arms"]] + sorted(set(table["arms"]) - set(BASELINE_ARMS + ARMS))
    for family in table["families"]:
        for arm in order:
            row = table["arms"][arm].get(family)
            if row is None:
                continue
            lines.append(f"{family:<17} {arm:<9} {row['episodes']:>4} {row['safe_successes']:>5} {row['safe_rate']:>6.1%} "
                         f"{'[%.2f, %.2f]' % (row['ci_low'], row['ci_high']):>14} {row['collateral']:>4} "
                         f"{row['recovery_failures']:>5} {row['harness_errors']:>4} {row['mean_commands']:>5.2f}")
    if table.get("stages_s"):
        lines.append("stages (s): " + ", ".join(f"{k} {v:.0f}" for k, v in table["stages_s"].items()))
    for family, pair in table["paired"].items():
        lines.append(f"paired difference (trained - base), {family}: {pair['diff']:+.2f} "
                     f"[{pair['ci_low']:+.2f}, {pair['ci_high']:+.2f}] over {pair['tasks']} tasks")
    return lines
