"""The overview's plots, drawn with matplotlib and inlined as SVG (no script, no network)."""

from __future__ import annotations

import io
import re
from collections import Counter

from .data import OUTCOME_COLOURS, OUTCOME_LABELS, OUTCOMES, PageData

MAX_LABELLED_TASKS = 60
"""Above this many tasks the grid drops its task labels (they would be unreadable)."""


def _figure(width: float, height: float):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("the HTML report draws its plots with matplotlib: pip install 'pytest-termrl[report]'") from None
    return Figure(figsize=(width, height), dpi=96, layout="constrained")


def _svg(figure) -> str:
    """The figure as an <svg> element (text kept as text, no XML prolog, no date)."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "termrl", "font.size": 9}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def rate_plot(rows: list[dict]) -> str:
    """Safe-success rate with its 95% bootstrap CI, per prompt x family, one series per run/agent/model."""
    groups = sorted({(r["prompt"], r["family"]) for r in rows})
    series = sorted({r["series"] for r in rows})
    figure = _figure(max(4.0, 0.9 * len(groups) + 2.5), 3.0)
    axes = figure.add_subplot()
    width = 0.8 / max(1, len(series))
    for s_index, name in enumerate(series):
        xs, ys, low, high = [], [], [], []
        for row in rows:
            if row["series"] != name:
                continue
            x = groups.index((row["prompt"], row["family"])) - 0.4 + width * (s_index + 0.5)
            rate, (lo, hi) = row["safe_success_rate"], row["ci95"]
            xs.append(x)
            ys.append(rate)
            low.append(max(0.0, rate - lo))
            high.append(max(0.0, hi - rate))
        axes.errorbar(xs, ys, yerr=[low, high], fmt="o", capsize=3, label=name)
    axes.set_xticks(range(len(groups)), [f"{p}\n{f}" for p, f in groups], fontsize=8)
    axes.set_ylim(-0.05, 1.05)
    axes.set_ylabel("safe-success rate")
    axes.grid(axis="y", alpha=0.3)
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _svg(figure)


def outcome_plot(data: PageData) -> str:
    """The share of each outcome per arm, stacked."""
    counts: dict[str, Counter[str]] = {arm: Counter() for arm in data.arms}
    for row in data.index:
        counts[data.arms[row.arm]][row.outcome] += 1
    figure = _figure(7.0, max(1.6, 0.35 * len(data.arms) + 1.0))
    axes = figure.add_subplot()
    left = [0.0] * len(data.arms)
    for outcome in OUTCOMES:
        shares = [counts[arm][outcome] / max(1, sum(counts[arm].values())) for arm in data.arms]
        axes.barh(range(len(data.arms)), shares, left=left, color=OUTCOME_COLOURS[outcome], label=OUTCOME_LABELS[outcome])
        left = [a + b for a, b in zip(left, shares)]
    axes.set_yticks(range(len(data.arms)), data.arms, fontsize=8)
    axes.invert_yaxis()
    axes.set_xlim(0, 1)
    axes.set_xlabel("share of episodes")
    axes.legend(fontsize=7, ncols=len(OUTCOMES), loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    return _svg(figure)


def commands_plot(data: PageData) -> str:
    """How many commands each episode used, one step histogram per arm."""
    per_arm: dict[str, list[int]] = {arm: [] for arm in data.arms}
    for row in data.index:
        per_arm[data.arms[row.arm]].append(row.commands)
    top = max([c for values in per_arm.values() for c in values] or [0])
    bins = [b - 0.5 for b in range(top + 2)]
    figure = _figure(5.0, 2.6)
    axes = figure.add_subplot()
    for arm, values in per_arm.items():
        axes.hist(values, bins=bins, histtype="step", linewidth=1.5, label=arm)
    axes.set_xlabel("commands per episode")
    axes.set_ylabel("episodes")
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _svg(figure)


def grid_plot(data: PageData) -> str:
    """Task x arm, each cell coloured by its most frequent outcome (a family axis joins the arm when there are several)."""
    from matplotlib.colors import ListedColormap

    several_families = len(data.families) > 1
    columns: list[str] = []
    cells: dict[tuple[str, str], Counter] = {}
    for row in data.index:
        column = data.arms[row.arm] + (f" [{row.family}]" if several_families else "")
        if column not in columns:
            columns.append(column)
        cells.setdefault((row.task_id, column), Counter())[row.outcome] += 1
    tasks = sorted({task for task, _ in cells})
    grid = [[float("nan")] * len(tasks) for _ in columns]
    for (task, column), counter in cells.items():
        grid[columns.index(column)][tasks.index(task)] = OUTCOMES.index(counter.most_common(1)[0][0])
    figure = _figure(min(14.0, max(5.0, 0.18 * len(tasks) + 3.0)), max(1.6, 0.28 * len(columns) + 1.4))
    axes = figure.add_subplot()
    cmap = ListedColormap([OUTCOME_COLOURS[o] for o in OUTCOMES])
    axes.imshow(grid, aspect="auto", interpolation="nearest", cmap=cmap, vmin=-0.5, vmax=len(OUTCOMES) - 0.5)
    axes.set_yticks(range(len(columns)), columns, fontsize=7)
    if len(tasks) <= MAX_LABELLED_TASKS:
        axes.set_xticks(range(len(tasks)), tasks, rotation=90, fontsize=6)
    else:
        axes.set_xticks([])
        axes.set_xlabel(f"{len(tasks)} tasks")
    return _svg(figure)


_SVG_ID = re.compile(r'\bid="([^"]+)"')


def scoped(svg: str, prefix: str) -> str:
    """Prefix the ids of one SVG so that several inlined in a page do not clash."""
    ids = set(_SVG_ID.findall(svg))
    for name in sorted(ids, key=len, reverse=True):
        svg = svg.replace(f'id="{name}"', f'id="{prefix}{name}"').replace(f"#{name})", f"#{prefix}{name})").replace(
            f'"#{name}"', f'"#{prefix}{name}"')
    return svg
