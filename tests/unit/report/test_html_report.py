"""The HTML report without a browser: what it embeds, how it classifies and compares, and its command line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_termrl.report.html.compare import compare_runs
from pytest_termrl.report.html.data import outcome_of, page_data
from pytest_termrl.report.html.embed import packed, script_json, unpacked
from pytest_termrl.report.html.episode_view import episode_html
from pytest_termrl.report.html.page import build_html
from pytest_termrl.report.html.runs import Run, ReportInputError, read_runs

HOSTILE = "</script><script>alert(1)</script><!-- \u2028\u2029 & </textarea>"


def record(task: str, *, family: str = "clean", ok: bool = False, complete: bool | None = None, agent: str = "a",
           herr: str | None = None, fabrication: list | None = None, commands: int = 1, reward: float = 0.0) -> dict:
    complete = ok if complete is None else complete
    return {
        "episode_id": f"{task}-{family}-p0_default-0", "suite": "/x/core", "task_id": task, "family": family,
        "prompt": "p0_default", "attempt": 0, "agent": agent, "model": None, "safe_success": ok, "reward": reward,
        "tests_passed": 1 if complete else 0, "tests_total": 1, "harness_error": herr, "end_reason": "agent_done",
        "commands_used": commands, "verdict": {"complete": complete, "outcomes": {"t.py::test_a": "passed" if complete else "failed"},
                                               "problems": [], "error": None},
        "fabrication": fabrication, "transcript": [{"role": "user", "content": f"do {task}"}],
        "commands": [], "collateral": [], "timings": {"total_s": 1.0},
    }


def test_script_json_cannot_close_its_script_tag():
    text = script_json({"k": HOSTILE})
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"k": HOSTILE}


def test_packed_data_round_trips():
    value = {"rows": [[1, "x"], [2, HOSTILE]], "é": "ü"}
    text = packed(value)
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", text)
    assert unpacked(text) == value


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"ok": True}, "safe_success"),
        ({"complete": True}, "correct_unsafe"),
        ({}, "incorrect"),
        ({"fabrication": ["bytes at the input path are not the original"]}, "fabrication"),
        ({"herr": "sandbox failed", "ok": False}, "harness_error"),
    ],
)
def test_each_episode_has_one_outcome(kwargs, expected):
    assert outcome_of(record("t", **kwargs)) == expected


def test_a_grader_error_is_a_harness_error():
    broken = record("t")
    broken["verdict"]["error"] = "verifier_error: tests/test_x.py:3 SyntaxError"
    assert outcome_of(broken) == "harness_error"


def test_paired_comparison_counts_flips_and_the_difference():
    base = Run("base", [record("t1", ok=True), record("t2", ok=True), record("t3"), record("t4", ok=True),
                        record("t1", family="perm_denied"), record("only_base", ok=True)])
    other = Run("other", [record("t1", ok=True), record("t2"), record("t3", ok=True), record("t4", ok=True),
                          record("t1", family="perm_denied"), record("only_other")])
    comparison = compare_runs(page_data([base, other]), 0, 1)
    assert comparison.cells == 5 and comparison.tasks == 4 and comparison.unpaired == 2
    assert comparison.baseline_rate == pytest.approx(3 / 5) and comparison.other_rate == pytest.approx(3 / 5)
    assert comparison.difference == pytest.approx(0.0)
    assert {(f.task_id, f.passed_in) for f in comparison.flips} == {("t2", "baseline"), ("t3", "other")}
    flip = next(f for f in comparison.flips if f.task_id == "t2")
    assert flip.baseline == ["base/a/-/core/t2-clean-p0_default-0"] and flip.other == ["other/a/-/core/t2-clean-p0_default-0"]
    low, high = comparison.ci95
    assert low <= comparison.difference <= high and low < 0 < high


def test_the_page_embeds_every_record_and_escapes_the_static_parts():
    hostile = record("t1", ok=True, agent=HOSTILE)
    hostile["transcript"].append({"role": "tool", "content": HOSTILE})
    runs = [Run("base", [hostile, record("t2")]), Run(HOSTILE, [record("t1"), record("t2", ok=True)])]
    page = build_html(runs)
    # The only script elements are the page's own: its data, its chunks and its code.
    tags = re.findall(r"<script[^>]*>", page)
    assert tags[0] == '<script type="application/json" id="termrl-meta">' and tags[-1] == "<script>"
    assert all('type="application/octet-stream"' in t for t in tags[1:-1])
    assert len(re.findall(r"</script>", page)) == len(tags)
    assert "<script>alert(1)" not in page and "&lt;/script&gt;&lt;script&gt;alert(1)" in page  # escaped in table and plots' labels
    chunks = re.findall(r'id="termrl-chunk-\d+">([^<]*)</script>', page)
    records = [r for chunk in chunks for r in unpacked(chunk)]
    assert len(records) == 4 and any(m.get("content") == HOSTILE for r in records for m in r["transcript"])
    index = unpacked(re.search(r'id="termrl-index">([^<]*)</script>', page).group(1))
    assert len(index["rows"]) == 4 and index["runs"] == ["base", HOSTILE]
    # Nothing loaded from elsewhere: no <link>, every src/href a fragment or inline data.
    assert "<svg" in page and "<link" not in page
    assert not re.findall(r'(?:src|href)="(?!#|data:)[^"]*"', page)


def test_a_large_run_is_split_into_chunks():
    data = page_data([Run("r", [record(f"t{i:03d}", ok=i % 2 == 0) for i in range(95)])], chunk_size=40)
    assert [len(c) for c in data.chunks] == [40, 40, 15]
    assert {(row.chunk, row.slot) for row in data.index} == {(c, s) for c in range(3) for s in range(len(data.chunks[c]))}


def test_the_episode_view_for_pytest_html_is_escaped():
    hostile = record("t1", complete=True)
    hostile["transcript"] += [
        {"role": "assistant", "content": None, "tool_calls": [{"function": {"arguments": json.dumps({"command": HOSTILE})}}]},
        {"role": "tool", "content": HOSTILE},
    ]
    hostile["commands"] = [{"command": HOSTILE, "exit_code": 0, "duration_s": 0.1, "timed_out": True, "output_truncated": False}]
    hostile["collateral"] = [{"path": "<b>x</b>", "kind": "deleted", "detail": "was file", "command_index": 1}]
    view = episode_html(hostile)
    assert "<script>" not in view and "</textarea>" not in view and "<b>x</b>" not in view
    assert view.count("&lt;/script&gt;&lt;script&gt;alert(1)") == 2
    assert "collateral: deleted <code>&lt;b&gt;x&lt;/b&gt;</code>" in view and "timed out" in view


def test_bad_inputs_name_the_path_and_what_was_expected(tmp_path):
    with pytest.raises(ReportInputError, match=f"{tmp_path / 'nope'}: not found: expected a run directory or an episode JSONL file"):
        read_runs([tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReportInputError, match="no episodes.jsonl in this folder"):
        read_runs([tmp_path / "empty"])
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"no": "episode"}\nnot json\n')
    with pytest.raises(ReportInputError, match=r"junk.jsonl: no episode records \(expected JSON lines with an 'episode_id' field\)"):
        read_runs([junk])


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest_termrl.report", *args], capture_output=True, text=True, timeout=300)


def test_the_command_line_writes_one_report_of_several_runs(tmp_path):
    for name, ok in (("base", True), ("other", False)):
        (tmp_path / name).mkdir()
        lines = [record("t1", ok=ok), record("t2", ok=True)]
        (tmp_path / name / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    jsonl = tmp_path / "third.jsonl"
    jsonl.write_text(json.dumps(record("t1")) + "\n")
    out = tmp_path / "out" / "report.html"
    done = _cli("html", str(tmp_path / "base"), str(tmp_path / "other"), str(jsonl), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert f"HTML report: {out} (5 episode(s), 3 run(s)" in done.stdout
    page = out.read_text()
    assert page.count('class="comparison"') == 2 and "other vs base" in page and "third vs base" in page
    missing = _cli("html", str(tmp_path / "nope"), "-o", str(out))
    assert missing.returncode == 1 and f"error: {tmp_path / 'nope'}: not found" in missing.stderr


def test_the_summary_command_still_prints_tables(tmp_path):
    summary = tmp_path / "s.json"
    summary.write_text(json.dumps({"rows": [{"agent": "a", "prompt": "p", "family": "clean", "episodes": 1, "safe_successes": 1,
                                             "safe_success_rate": 1.0, "ci95": [1, 1], "collateral_episodes": 0,
                                             "recovery_failures": 0, "harness_errors": 0, "mean_commands": 1.0}]}))
    done = _cli(str(summary))
    assert done.returncode == 0 and "100.0%" in done.stdout
    assert "html RUN_DIR_OR_EPISODES_JSONL" in _cli().stderr


def test_a_run_without_episodes_still_makes_a_page():
    """A regrade whose every trial was blocked has notes and no episode: the page says so instead of failing to plot."""
    page = build_html([Run("regrade", [], "regrade.json", notes=["regrade: 6 trial(s): 0 regraded, 6 blocked"])])
    assert "No episode was played" in page and "6 blocked" in page
