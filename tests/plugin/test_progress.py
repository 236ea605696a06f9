"""The live status line: episodes done / total, safe-success rate, harness errors, pace and ETA; silent under -q."""

from __future__ import annotations

from pytest_termrl.plugin.progress import Progress


def test_the_line_says_how_far_the_run_is():
    progress = Progress(None, "test_episode")
    progress.total, progress.done, progress.safe, progress.harness_errors = 10, 3, 2, 1
    progress.started = 100.0
    assert progress.line(160.0) == ("pytest-termrl: 3/10 episodes | safe success 66.7% | harness errors 1 "
                                    "| 3.0 episodes/min | ETA 2:20")
    progress.done = progress.total
    assert progress.line(3700.0).endswith("| ETA 0:00")
    progress.total, progress.done, progress.started = 1000, 1, 0.0
    assert progress.line(60.0).endswith("| 1.0 episodes/min | ETA 16:39:00")


def test_a_run_shows_progress_after_the_first_and_the_last_episode(tp):
    suite = tp.suite()
    result = tp.run(str(suite), "--termrl-agent=reference")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines([
        "pytest-termrl: 1/3 episodes | safe success 100.0% | harness errors 0 | * episodes/min | ETA *",
        "pytest-termrl: 3/3 episodes | safe success 100.0% | harness errors 0 | * episodes/min | ETA 0:00",
    ])


def test_progress_under_xdist_counts_every_worker(tp):
    suite = tp.suite()
    result = tp.run(str(suite), "-n", "2", "--termrl-agent=noop")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["pytest-termrl: 3/3 episodes | safe success 0.0% | harness errors 0 | *"])


def test_quiet_runs_show_no_progress(tp):
    suite = tp.suite()
    result = tp.run(str(suite), "-q", "--termrl-agent=reference")
    result.assert_outcomes(passed=3)
    assert "episodes/min" not in result.stdout.str()
