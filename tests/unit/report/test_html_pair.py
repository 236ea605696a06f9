"""The overview's pair panel: which two runs it shows, its figures on a hand-made example, its links, --pair."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

from pytest_termrl.report.html.embed import unpacked
from pytest_termrl.report.html.page import build_html
from pytest_termrl.report.html.pair import PairError, choose_pair
from pytest_termrl.report.html.runs import Run
from pytest_termrl.report.summary import cluster_bootstrap_ci

HOSTILE = "</script><script>alert(1)</script><b>x</b>"


def record(task: str, *, ok: bool, commands: int, family: str = "clean") -> dict:
    return {
        "episode_id": f"{task}-{family}-p0_default-0", "suite": "/x/core", "task_id": task, "family": family,
        "prompt": "p0_default", "attempt": 0, "agent": "openai", "model": "gemma", "safe_success": ok,
        "reward": 1.0 if ok else 0.0, "tests_passed": int(ok), "tests_total": 1, "harness_error": None,
        "end_reason": "agent_done", "commands_used": commands,
        "verdict": {"complete": ok, "outcomes": {"t.py::test_a": "passed" if ok else "failed"}, "problems": [], "error": None},
        "fabrication": None, "transcript": [{"role": "user", "content": f"do {task}"}], "commands": [], "collateral": [],
        "timings": {"total_s": 1.0},
    }


# base passes t1, t3; trained passes t1, t2, t5: t2 and t5 flip up, t3 flips down, t1 and t4 stay.
BASE = {"t1": (True, 1), "t2": (False, 2), "t3": (True, 3), "t4": (False, 4), "t5": (False, 5)}
TRAINED = {"t1": (True, 6), "t2": (True, 6), "t3": (False, 6), "t4": (False, 6), "t5": (True, 6),
           "t6": (True, 100)}  # t6: only the trained run played it, so it is left out of every paired figure


def arms() -> list[Run]:
    """The demo's four runs, the pair third and fourth so that the default is not simply runs[0] and runs[1]."""
    return [
        Run("reference", [record(t, ok=True, commands=2) for t in BASE]),
        Run("noop", [record(t, ok=False, commands=0) for t in BASE]),
        Run("base", [record(t, ok=ok, commands=n) for t, (ok, n) in BASE.items()]),
        Run("trained", [record(t, ok=ok, commands=n) for t, (ok, n) in TRAINED.items()]),
    ]


def panel_of(page: str) -> str | None:
    found = re.search(r'<div class="pair" id="pair">(.*?)</div>', page, re.S)
    return found.group(1) if found else None


def flip_rows(panel: str, direction: str) -> list[tuple[str, str, list[str], list[str]]]:
    """(task, family, baseline uids, other uids) of each row of one flip table, uids read back from the links."""
    table = re.search(rf'<table class="flips pair-flips" id="pair-flips-{direction}">(.*?)</table>', panel, re.S).group(1)
    rows = []
    for row in re.findall(r'<tr class="flip">(.*?)</tr>', table, re.S):
        cells = re.findall(r"<td>(.*?)</td>", row, re.S)
        uids = [[unquote(html.unescape(h)) for h in re.findall(r'href="#ep=([^"]*)"', cell)] for cell in cells[2:]]
        rows.append((html.unescape(cells[0]), html.unescape(cells[1]), uids[0], uids[1]))
    return rows


def index_of(page: str) -> dict:
    return unpacked(re.search(r'id="termrl-index">([^<]*)</script>', page).group(1))


def uid(run: str, task: str) -> str:
    return f"{run}/openai/gemma/core/{task}-clean-p0_default-0"


def test_the_default_pair_is_base_and_trained_wherever_they_are():
    assert choose_pair(["reference", "noop", "base", "trained"]) == (2, 3)
    assert choose_pair(["trained", "x", "base"]) == (2, 0)
    assert choose_pair(["reference", "noop", "base"]) is None
    assert choose_pair(["reference", "trained"]) is None
    assert choose_pair(["reference", "noop", "base", "trained"], ("noop", "reference")) == (1, 0)


def test_an_unknown_or_repeated_name_in_the_pair_is_refused_with_the_runs_that_exist():
    with pytest.raises(PairError, match=r"no run named 'tuned' in this report \(runs: reference, base, trained\)"):
        choose_pair(["reference", "base", "trained"], ("base", "tuned"))
    with pytest.raises(PairError, match="two different runs"):
        choose_pair(["reference", "base"], ("base", "base"))


def test_the_panel_shows_rates_commands_the_paired_difference_and_the_flips():
    page = build_html(arms())
    panel = panel_of(page)
    assert panel is not None and "<h2>trained vs base</h2>" in panel
    # The panel is part of the overview, ahead of the summary.
    overview = page[page.index('<section id="view-overview"'):page.index("</section>")]
    assert overview.index('id="pair"') < overview.index("<h2>Summary</h2>")
    rates = re.findall(r'<tr><td>([^<]*)</td><td class="rate">([^<]*)</td><td class="commands">([^<]*)</td></tr>', panel)
    assert rates == [("base", "40.0%", "3.0"), ("trained", "60.0%", "6.0")]  # t6 (100 commands) is not paired
    assert '<b class="diff">+20.0%</b>' in panel and "difference (trained - base)" in panel
    assert '<span class="cells">5</span> paired cell(s)' in panel and "1 cell(s) only one of the two ran are left out" in panel
    # The CI is the comparison's paired task-cluster bootstrap of the per-task differences.
    low, high = cluster_bootstrap_ci({t: [float(TRAINED[t][0]) - float(ok)] for t, (ok, _) in BASE.items()})
    assert low < 0.2 < high
    assert f'<span class="ci">[{low:+.1%}, {high:+.1%}]</span>' in panel
    up, down = flip_rows(panel, "up"), flip_rows(panel, "down")
    assert [(t, f) for t, f, _, _ in up] == [("t2", "clean"), ("t5", "clean")]
    assert [(t, f) for t, f, _, _ in down] == [("t3", "clean")]
    assert "flipped up: 2" in panel and "flipped down: 1" in panel


def test_each_flip_links_to_that_episode_of_each_run():
    page = build_html(arms())
    index = index_of(page)
    col = {name: i for i, name in enumerate(index["columns"])}
    rows = {row[col["uid"]]: row for row in index["rows"]}
    flips = flip_rows(panel_of(page), "up") + flip_rows(panel_of(page), "down")
    assert [(b, o) for _, _, b, o in flips] == [([uid("base", t)], [uid("trained", t)]) for t in ("t2", "t5", "t3")]
    for task, _, baseline, other in flips:
        for run, links in (("base", baseline), ("trained", other)):
            row = rows[links[0]]  # the link opens an episode the page holds: this run's episode of this task
            assert index["runs"][row[col["run"]]] == run and row[col["task_id"]] == task
    # The same href form as the episode list and the compare view, whose script opens the transcript.
    assert '<a class="ep-link" href="#ep=base%2Fopenai%2Fgemma%2Fcore%2Ft2-clean-p0_default-0">base</a>' in page


def test_a_named_pair_replaces_the_default_and_no_pair_means_no_panel():
    named = panel_of(build_html(arms(), pair=("noop", "reference")))
    assert named is not None and "<h2>reference vs noop</h2>" in named
    assert [t for t, _, _, _ in flip_rows(named, "up")] == list(BASE) and flip_rows(named, "down") == []
    assert panel_of(build_html(arms()[:3])) is None
    assert 'id="pair"' not in build_html(arms()[:2])


@pytest.mark.filterwarnings("ignore:constrained_layout not applied")  # the plots' long hostile labels
def test_task_and_run_names_in_the_panel_are_text():
    runs = [Run(HOSTILE, [record(HOSTILE, ok=False, commands=1)]), Run("trained", [record(HOSTILE, ok=True, commands=1)])]
    panel = panel_of(build_html(runs, pair=(HOSTILE, "trained")))
    assert panel is not None and "<script>" not in panel and "<b>x</b>" not in panel
    assert f"<h2>trained vs {html.escape(HOSTILE)}</h2>" in panel
    assert [(t, b, o) for t, _, b, o in flip_rows(panel, "up")] == [(HOSTILE, [f"{HOSTILE}/openai/gemma/core/{HOSTILE}-clean-p0_default-0"],
                                                                   [f"trained/openai/gemma/core/{HOSTILE}-clean-p0_default-0"])]


def _write_runs(root: Path) -> list[str]:
    paths = []
    for run in arms():
        (root / run.label).mkdir()
        (root / run.label / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in run.records))
        paths.append(str(root / run.label))
    return paths


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest_termrl.report", "html", *args], capture_output=True, text=True, timeout=300)


def test_the_command_line_shows_the_default_pair_or_the_named_one(tmp_path):
    paths = _write_runs(tmp_path)
    out = tmp_path / "report.html"
    done = _cli(*paths, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "<h2>trained vs base</h2>" in panel_of(out.read_text())
    done = _cli(*paths, "-o", str(out), "--pair", "noop", "trained")
    assert done.returncode == 0, done.stderr
    assert "<h2>trained vs noop</h2>" in panel_of(out.read_text())


def test_the_command_line_refuses_an_unknown_run_in_the_pair(tmp_path):
    paths = _write_runs(tmp_path)
    out = tmp_path / "report.html"
    done = _cli(*paths, "-o", str(out), "--pair", "base", "tuned")
    assert done.returncode == 2 and not out.exists()
    assert "error: --pair: no run named 'tuned' in this report (runs: reference, noop, base, trained)" in done.stderr
    assert "--pair BASELINE OTHER" in _cli("--help").stdout
