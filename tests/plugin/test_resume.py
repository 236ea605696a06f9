"""Resuming a killed run: finished episodes survive a SIGKILL and are not played again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from conftest import SMALL_TASKS, host_pids_with, predictions_file, solution_of, unique_sleep

from pytest_termrl.report.episodes import read_episodes
from pytest_termrl.sandbox.layout import default_workroot

ATTEMPTS = 2
TOTAL = len(SMALL_TASKS) * ATTEMPTS


def test_killed_run_resumes_with_only_the_unrecorded_episodes(tp):
    suite = tp.suite()
    marker = unique_sleep()
    # Each episode takes about a second, so the run can be killed halfway through.
    scripts = {t: f"sleep 1.{marker[-3:]}\n{solution_of(t)}" for t in SMALL_TASKS}
    predictions = predictions_file(tp.path / "pred.jsonl", scripts)
    argv = [
        sys.executable, "-m", "pytest", str(suite), "-p", "no:cacheprovider", "-q",
        "--termrl-agent=script", f"--termrl-predictions={predictions}", f"--termrl-attempts={ATTEMPTS}",
        f"--termrl-run-dir={tp.path / 'run'}", f"--termrl-episodes={tp.episodes}",
    ]
    process = subprocess.Popen(argv, cwd=tp.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if tp.episodes.exists() and tp.episodes.read_bytes().count(b"\n") >= 2:
                break
            assert process.poll() is None, "the run ended before it could be killed"
            time.sleep(0.05)
        else:
            raise AssertionError("no two episodes were recorded within 60 s")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
    # The killed run's sandboxes die with it (bwrap --die-with-parent).
    time.sleep(0.5)
    assert host_pids_with(f"sleep 1.{marker[-3:]}") == []
    done = read_episodes(tp.episodes)
    assert 2 <= len(done) < TOTAL
    done_ids = {r["episode_id"] for r in done}
    assert len(done_ids) == len(done)

    result = tp.run(
        str(suite), "--termrl-agent=script", f"--termrl-predictions={predictions}",
        f"--termrl-attempts={ATTEMPTS}", "--termrl-resume", "-v", f"--termrl-report={tp.path / 'summary.json'}",
    )
    result.assert_outcomes(passed=TOTAL - len(done), deselected=len(done))
    ran = [line for line in result.outlines if "::test_episode[" in line and " PASSED" in line]
    assert len(ran) == TOTAL - len(done)
    for episode_id in done_ids:
        assert not [line for line in ran if f"[{episode_id}]" in line]
    final = read_episodes(tp.episodes)
    ids = [r["episode_id"] for r in final]
    assert len(ids) == len(set(ids)) == TOTAL
    assert len(tp.episodes.read_text().splitlines()) == TOTAL
    # The summary of a resumed run covers every episode, old and new.
    assert json.loads((tp.path / "summary.json").read_text())["episodes"] == TOTAL
    # The killed run's leftovers were cleaned up when the resumed run started.
    assert not list(default_workroot().glob(f"sbx-{process.pid}-*"))


def test_resume_after_a_torn_last_line(tp):
    # A writer killed mid-record leaves a partial last line; a resumed run must not lose
    # the next record by gluing it onto that fragment.
    suite = tp.suite()
    tp.run(str(suite), "--termrl-agent=reference").assert_outcomes(passed=3)
    lines = tp.episodes.read_text().splitlines(keepends=True)
    assert len(lines) == 3
    torn = lines[0] + lines[1] + lines[2][: len(lines[2]) // 2]
    tp.episodes.write_text(torn)
    assert len(read_episodes(tp.episodes)) == 2
    result = tp.run(str(suite), "--termrl-agent=reference", "--termrl-resume")
    result.assert_outcomes(passed=1, deselected=2)
    final = read_episodes(tp.episodes)
    assert sorted(r["episode_id"] for r in final) == sorted(f"{t}-clean-p0_default-0" for t in SMALL_TASKS)


def test_resume_under_xdist_skips_recorded_episodes(tp):
    suite = tp.suite()
    predictions = predictions_file(tp.path / "pred.jsonl", {t: solution_of(t) for t in SMALL_TASKS[:1]})
    common = [str(suite), "--termrl-agent=script", f"--termrl-predictions={predictions}", "-n", "2"]
    tp.run(*common).assert_outcomes(passed=1, failed=2)
    # Nothing left to do: every episode, failed or not, is recorded.
    # (Under xdist the workers deselect, so the controller sees no items at all.)
    again = tp.run(*common, "--termrl-resume")
    again.assert_outcomes()
    again.stdout.fnmatch_lines(["2 workers [[]0 items[]]"])
    assert len(tp.episodes.read_text().splitlines()) == 3
    # Another agent is another episode: all run.
    other = tp.run(str(suite), "--termrl-agent=reference", "-n", "2", "--termrl-resume")
    other.assert_outcomes(passed=3)
    assert sorted(r["agent"] for r in read_episodes(tp.episodes)) == ["reference"] * 3 + ["script"] * 3
