"""Assemble the report: the overview rendered now, the episodes packed for the page's script, all in one file."""

from __future__ import annotations

import html
import time
from collections import defaultdict
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from ..outputs import write_whole
from ..summary import summarize
from . import plots
from .compare import Comparison, compare_all
from .data import OUTCOME_COLOURS, OUTCOME_LABELS, OUTCOMES, PageData, page_data
from .embed import packed, script_json
from .pair import Pair, choose_pair, pair_of
from .runs import Run

TITLE = "pytest-termrl report"


def _static(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def _e(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def summary_rows(runs: list[Run]) -> list[dict]:
    """The summary's rows of each run (agent x model x prompt x family), with the run and mean tokens added."""
    rows = []
    for run in runs:
        tokens: dict[tuple, list[int]] = defaultdict(list)
        for record in run.records:
            key = (record.get("agent") or "", record.get("model") or "", record.get("prompt") or "", record.get("family") or "")
            tokens[key].append(int((record.get("tokens") or {}).get("total_tokens") or 0))
        for row in summarize(run.records)["rows"]:
            used = tokens.get((row["agent"], row["model"] or "", row["prompt"], row["family"]), [0])
            series = " ".join(str(p) for p in (row["agent"], row["model"]) if p)
            rows.append({**row, "run": run.label, "mean_tokens": sum(used) / len(used),
                         "series": f"{run.label}: {series}" if len(runs) > 1 else series})
    return rows


def _summary_table(rows: list[dict], several_runs: bool) -> str:
    head = (["run"] if several_runs else []) + ["agent", "model", "prompt", "family", "episodes", "safe success", "95% CI",
                                                 "collateral", "recovery failures", "harness errors", "mean commands", "mean tokens"]
    out = ['<table class="summary" id="summary-table"><thead><tr>', *[f"<th>{_e(h)}</th>" for h in head], "</tr></thead><tbody>"]
    for row in rows:
        low, high = row["ci95"]
        cells = ([row["run"]] if several_runs else []) + [
            row["agent"], row["model"] or "", row["prompt"], row["family"], row["episodes"],
            f"{row['safe_success_rate']:.1%}", f"[{low:.2f}, {high:.2f}]", row["collateral_episodes"],
            row["recovery_failures"], row["harness_errors"], f"{row['mean_commands']:.1f}", f"{row['mean_tokens']:.0f}"]
        out.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _legend() -> str:
    return '<p class="legend">' + "".join(
        f'<span class="chip" style="background:{OUTCOME_COLOURS[o]}"></span>{_e(OUTCOME_LABELS[o])} ' for o in OUTCOMES) + "</p>"


def _figure(title: str, svg: str, name: str) -> str:
    return f'<figure class="plot" id="plot-{name}"><figcaption>{_e(title)}</figcaption>{plots.scoped(svg, name + "-")}</figure>'


def _link(uid: str, text: str | None = None) -> str:
    """The page's permalink to an episode (``#ep=<uid>``): the script opens its transcript on the hash change."""
    return f'<a class="ep-link" href="#ep={_e(quote(uid, safe=""))}">{_e(uid.rsplit("/", 1)[-1] if text is None else text)}</a>'


def _pair_links(run: str, uids: list[str]) -> str:
    """One link per episode of the cell: named by its run when it is the only one, else by its episode id."""
    return " ".join(_link(uid, run if len(uids) == 1 else None) for uid in uids)


def _pair_panel(pair: Pair) -> str:
    """The overview's side-by-side of two runs: the rates, commands, paired difference and the flips each way."""
    c = pair.comparison
    low, high = c.ci95
    out = [f'<div class="pair" id="pair"><h2>{_e(c.other)} vs {_e(c.baseline)}</h2>',
           '<table class="summary pair-arms"><thead><tr><th>run</th><th>safe success</th><th>mean commands per episode</th>'
           '</tr></thead><tbody>',
           *[f'<tr><td>{_e(name)}</td><td class="rate">{rate:.1%}</td><td class="commands">{commands:.1f}</td></tr>'
             for name, rate, commands in ((c.baseline, c.baseline_rate, pair.baseline_commands),
                                          (c.other, c.other_rate, pair.other_commands))],
           '</tbody></table>',
           f'<p class="pair-diff">difference ({_e(c.other)} - {_e(c.baseline)}): <b class="diff">{c.difference:+.1%}</b>, '
           f'paired 95% CI <span class="ci">[{low:+.1%}, {high:+.1%}]</span>, over <span class="cells">{c.cells}</span> '
           f'paired cell(s) (task x family) of {c.tasks} task(s)'
           + (f"; {c.unpaired} cell(s) only one of the two ran are left out" if c.unpaired else "") + "</p>"]
    for name, flips, caption in (("up", pair.up, f"failed in {c.baseline}, passed in {c.other}"),
                                 ("down", pair.down, f"passed in {c.baseline}, failed in {c.other}")):
        out.append(f'<h3>flipped {name}: {len(flips)} <small>({_e(caption)})</small></h3>'
                   f'<table class="flips pair-flips" id="pair-flips-{name}"><thead><tr><th>task</th><th>family</th>'
                   f'<th>{_e(c.baseline)}</th><th>{_e(c.other)}</th></tr></thead><tbody>')
        for flip in flips:
            out.append(f'<tr class="flip"><td>{_e(flip.task_id)}</td><td>{_e(flip.family)}</td>'
                       f'<td>{_pair_links(c.baseline, flip.baseline)}</td><td>{_pair_links(c.other, flip.other)}</td></tr>')
        if not flips:
            out.append('<tr><td colspan="4">none</td></tr>')
        out.append("</tbody></table>")
    out.append("</div>")
    return "".join(out)


def _compare_section(comparisons: list[Comparison]) -> str:
    out = []
    for number, c in enumerate(comparisons):
        low, high = c.ci95
        out.append(f'<div class="comparison" id="comparison-{number}"><h3>{_e(c.other)} vs {_e(c.baseline)}</h3>'
                   '<table class="summary"><thead><tr><th>paired cells (task x family)</th><th>tasks</th>'
                   f'<th>{_e(c.baseline)}</th><th>{_e(c.other)}</th><th>difference</th><th>paired 95% CI</th><th>unpaired cells</th></tr></thead>'
                   f'<tbody><tr><td>{c.cells}</td><td>{c.tasks}</td><td>{c.baseline_rate:.1%}</td><td>{c.other_rate:.1%}</td>'
                   f'<td class="diff">{c.difference:+.1%}</td><td>[{low:+.2f}, {high:+.2f}]</td><td>{c.unpaired}</td></tr></tbody></table>')
        out.append(f'<h4>{len(c.flips)} flipped cell(s)</h4><table class="flips"><thead><tr><th>task</th><th>family</th>'
                   f'<th>passed in</th><th>{_e(c.baseline)}</th><th>{_e(c.other)}</th></tr></thead><tbody>')
        for flip in c.flips:
            passed = c.baseline if flip.passed_in == "baseline" else c.other
            out.append(f'<tr class="flip"><td>{_e(flip.task_id)}</td><td>{_e(flip.family)}</td><td>{_e(passed)}</td>'
                       f'<td>{" ".join(_link(u) for u in flip.baseline)}</td><td>{" ".join(_link(u) for u in flip.other)}</td></tr>')
        out.append("</tbody></table></div>")
    return "".join(out)


def build_html(runs: list[Run], title: str = TITLE, pair: tuple[str, str] | None = None) -> str:
    """The whole page as one string; ``pair`` (baseline, other) names the runs the overview sets side by side."""
    data: PageData = page_data(runs)
    rows = summary_rows(runs)
    comparisons = compare_all(data)
    chosen = choose_pair(data.runs, pair)
    panel = _pair_panel(pair_of(data, *chosen)) if chosen else ""
    several = len(runs) > 1
    figures = [
        _figure("Safe-success rate per prompt x family (95% task-cluster bootstrap CI)", plots.rate_plot(rows), "rate"),
        _figure("Outcome per arm", plots.outcome_plot(data), "outcomes"),
        _figure("Commands per episode", plots.commands_plot(data), "commands"),
        _figure("Task x arm, by outcome", plots.grid_plot(data), "grid"),
    ] if data.index else ['<p class="note">No episode was played (a regrade whose every trial was blocked, say): nothing to plot.</p>']
    options = lambda values: "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)  # noqa: E731
    meta = {"chunks": len(data.chunks), "episodes": len(data.index), "outcomeLabels": OUTCOME_LABELS,
            "outcomeColours": OUTCOME_COLOURS}
    notes = "".join(f'<p class="note">{_e(n)}</p>' for run in runs for n in run.notes)
    sources = ", ".join(f'<span title="{_e(run.source)}">{_e(run.label)}</span>' for run in runs)
    parts = [
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
        "style-src 'unsafe-inline'; img-src data:; connect-src data:\">",
        f"<title>{_e(title)}</title><style>{_static('report.css')}</style></head><body>",
        f'<header><h1>{_e(title)}</h1><p class="sources">{len(data.index)} episode(s) from {len(runs)} run(s): {sources}; built '
        f'{_e(time.strftime("%Y-%m-%d %H:%M:%S"))}</p>{notes}',
        '<nav><a href="#overview" data-view="overview">Overview</a><a href="#episodes" data-view="episodes">Episodes</a>',
        '<a href="#compare" data-view="compare">Compare runs</a>' if several else "",
        "</nav></header>",
        '<section id="view-overview" class="view">', panel, "<h2>Summary</h2>", _summary_table(rows, several), _legend(),
        '<div class="plots">', *figures, "</div></section>",
        '<section id="view-episodes" class="view" hidden><h2>Episodes</h2><form id="filters" class="filters">',
        '<label>outcome <select id="f-outcome"><option value="">any</option>',
        "".join(f'<option value="{o}">{_e(OUTCOME_LABELS[o])}</option>' for o in OUTCOMES), "</select></label>",
        f'<label>run/arm <select id="f-arm"><option value="">any</option>{options(data.arms)}</select></label>',
        f'<label>family <select id="f-family"><option value="">any</option>{options(data.families)}</select></label>',
        f'<label>prompt <select id="f-prompt"><option value="">any</option>{options(data.prompts)}</select></label>',
        f'<label>category <select id="f-category"><option value="">any</option>{options(data.categories)}</select></label>',
        '<label>task <input id="f-text" type="search" placeholder="task id or text"></label>',
        '<label>sort <select id="f-sort"><option value="">task</option><option value="reward">reward (low first)</option>'
        '<option value="-reward">reward (high first)</option><option value="-commands">commands (most first)</option>'
        '<option value="commands">commands (fewest first)</option><option value="-duration">duration (longest first)</option>'
        '<option value="duration">duration (shortest first)</option></select></label>',
        '</form><p id="list-count" class="count"></p><table id="episode-list" class="episodes"><thead><tr><th>episode</th>'
        '<th>arm</th><th>family</th><th>category</th><th>outcome</th><th>reward</th><th>commands</th><th>duration</th></tr></thead>'
        '<tbody></tbody></table><button id="more" type="button" hidden>show more</button></section>',
        '<section id="view-episode" class="view" hidden></section>',
        f'<section id="view-compare" class="view" hidden><h2>Compare runs (paired per task x family, against {_e(data.runs[0])})</h2>'
        f"{_compare_section(comparisons)}</section>" if several else "",
        f'<script type="application/json" id="termrl-meta">{script_json(meta)}</script>',
        f'<script type="application/octet-stream" id="termrl-index">{packed(data.index_dict())}</script>',
        *[f'<script type="application/octet-stream" id="termrl-chunk-{n}">{packed(chunk)}</script>' for n, chunk in enumerate(data.chunks)],
        f"<script>{_static('report.js')}</script></body></html>\n",
    ]
    return "".join(parts)


def write_html(path: Path, runs: list[Run], title: str = TITLE, pair: tuple[str, str] | None = None) -> int:
    """Write the report whole (never a half file); return its size in bytes."""
    text = build_html(runs, title, pair)
    write_whole(Path(path), text)
    return len(text.encode("utf-8"))
