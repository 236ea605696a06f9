"""Numbers that cannot silently be wrong: a crashed worker's episode, two runs on one log, failed writes.

Each test runs real pytest processes on copies of real core tasks and asserts what the user
sees: the message (naming the episode, path or pid), the exit status, the JSONL and the
summary's counts. The read-only and full-disk cases mount file systems, so they run as root.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import REPO, SMALL_TASKS, in_ci, predictions_file, solution_of

from pytest_termrl.report.episodes import WORKER_CRASHED, latest_per_key, read_episodes, read_log, settled
from pytest_termrl.report.record import EpisodeRecord

USAGE_ERROR = pytest.ExitCode.USAGE_ERROR
WRITE_FAILED = pytest.ExitCode.INTERNAL_ERROR
needs_root = pytest.mark.skipif(
    os.geteuid() != 0 and not in_ci(),
    reason="mounts a read-only bind mount and a small tmpfs (root only); in CI (run as root) it always runs",
)


def episode(task_id: str) -> str:
    return f"{task_id}-clean-p0_default-0"


def literally(text: str) -> str:
    """``text`` as an fnmatch pattern that matches only itself."""
    return "".join(f"[{c}]" if c in "[]*?" else c for c in text)


# -- 3: a crashed worker's episode -------------------------------------------------------
KILLER_CONFTEST = """
import os
import signal
from pathlib import Path

from pytest_termrl.agents.builtin import ReferenceAgent


class KillsItsWorker(ReferenceAgent):
    '''The reference agent, except that its first turn SIGKILLs the process playing it.'''

    def next_turn(self, last):
        os.kill(os.getpid(), signal.SIGKILL)


def pytest_termrl_make_agent(config, spec, task):
    # Runs on the worker that plays the episode; kills it once (a resume plays normally).
    flag = Path(str(config.rootpath)) / "killed.pid"
    if spec.task_id == "config_ini_update" and not flag.exists():
        flag.write_text(str(os.getpid()))
        return KillsItsWorker()
    return None
"""


def test_a_crashed_workers_episode_is_a_harness_error_record_and_a_resume_plays_it_again(tp):
    suite = tp.suite()
    tp.pytester.makeconftest(KILLER_CONFTEST)
    report = tp.path / "summary.json"
    common = [str(suite), "-n", "2", "--termrl-agent=reference", f"--termrl-report={report}"]
    result = tp.run(*common)
    result.assert_outcomes(passed=2, failed=1)
    crashed = episode("config_ini_update")
    nodeid = f"suite/contracts.jsonl::test_episode[{crashed}]"
    result.stdout.fnmatch_lines([
        "2 workers [[]3 items[]]",
        f"pytest-termrl: episode {crashed} was lost with its worker: recorded as a harness error "
        "(end reason worker_crashed); --termrl-resume plays it again",
        f"*worker 'gw?' crashed while running '{literally(nodeid)}'*",
    ])
    killed = int((tp.path / "killed.pid").read_text())
    assert not Path(f"/proc/{killed}").exists()

    records = read_episodes(tp.episodes)
    assert sorted(r["episode_id"] for r in records) == sorted(episode(t) for t in SMALL_TASKS)
    [record] = [r for r in records if r["end_reason"] == WORKER_CRASHED]
    assert record["episode_id"] == crashed and record["task_id"] == "config_ini_update"
    assert record["suite"] == str(suite) and record["agent"] == "reference" and record["difficulty"]
    assert record["harness_error"].startswith("worker 'gw") and f"crashed while running '{nodeid}'" in record["harness_error"]
    assert record["safe_success"] is False and record["reward"] == 0.0
    # The summary counts every collected episode that ran: the crashed one as a harness error.
    summary = json.loads(report.read_text())
    assert summary["episodes"] == 3 and summary["safe_successes"] == 2
    assert [(r["episodes"], r["harness_errors"]) for r in summary["rows"]] == [(3, 1)]
    result.stdout.fnmatch_lines(["reference*p0_default*clean*3*2*66.7%*1*"])

    # A resume plays the crashed episode, and only it; its new record replaces the crash record.
    again = tp.run(*common, "--termrl-resume", "-v")
    again.assert_outcomes(passed=1)
    ran = [line for line in again.outlines if "::test_episode[" in line and ("PASSED" in line or "FAILED" in line)]
    assert len(ran) == 1 and f"[{crashed}]" in ran[0] and "PASSED" in ran[0]
    assert len(tp.episodes.read_text().splitlines()) == 4
    contents = read_log(tp.episodes)
    assert (len(contents.records), contents.duplicates, contents.retried) == (3, 0, 1)
    assert all(r["safe_success"] for r in contents.records)
    summary = json.loads(report.read_text())
    assert summary["episodes"] == summary["safe_successes"] == 3
    assert "duplicate" not in again.stdout.str()


# -- 4: two runs on one log ----------------------------------------------------------------
def test_a_second_run_on_a_held_run_directory_is_refused_naming_the_holder(tp):
    suite = tp.suite(("log_error_counts",))
    run = tp.path / "run"
    predictions = predictions_file(tp.path / "pred.jsonl", {"log_error_counts": f"sleep 4\n{solution_of('log_error_counts')}"})
    argv = [
        sys.executable, "-m", "pytest", str(suite), "-p", "no:cacheprovider", "--termrl-agent=script",
        f"--termrl-predictions={predictions}", f"--termrl-run-dir={run}", f"--termrl-episodes={tp.episodes}",
    ]
    first = subprocess.Popen(argv, cwd=tp.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (run / ".lock").is_file() or f'"pid": {first.pid}' not in (run / ".lock").read_text():
            assert first.poll() is None and time.monotonic() < deadline, "the first run never held its run directory"
            time.sleep(0.05)
        second = tp.run(str(suite), "--termrl-agent=reference", "--termrl-resume")
        assert second.ret == USAGE_ERROR
        second.stderr.fnmatch_lines([
            f"ERROR: pytest-termrl: the run directory {run} is in use by another run: pid {first.pid} "
            f"(* -m pytest {suite} -p no:cacheprovider --termrl-agent=script *--termrl-run-dir={run} *); "
            "wait for it to end, or give this run another --termrl-run-dir"
        ])
        assert "collected" not in second.stdout.str()
        output, _ = first.communicate(timeout=120)
        assert first.returncode == 0, output.decode()
    finally:
        if first.poll() is None:
            os.killpg(first.pid, 9)
            first.wait(10)
    assert [r["episode_id"] for r in read_episodes(tp.episodes)] == [episode("log_error_counts")]
    # The holder is gone, so is its claim: the next run goes ahead (and finds nothing left to do).
    third = tp.run(str(suite), "--termrl-agent=script", f"--termrl-predictions={predictions}", "--termrl-resume")
    third.assert_outcomes(deselected=1)


def test_a_log_with_a_duplicated_record_is_read_back_once_and_says_how_many_it_dropped(tp):
    suite = tp.suite()
    tp.run(str(suite), "--termrl-agent=reference").assert_outcomes(passed=3)
    lines = tp.episodes.read_text().splitlines(keepends=True)
    tp.episodes.write_text("".join([*lines, lines[0]]))  # what two runs appending to one log leave
    warning = (f"{tp.episodes}: dropped 1 duplicate record(s) of finished episodes "
               "(kept the last record of each episode key: 3 episode(s))")

    out = tp.path / "results.json"
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "results.py"), str(tp.episodes), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == f"warning: {warning}\n"
    assert json.loads(out.read_text())["episodes"] == 3
    assert "| reference |  | p0_default | clean | 3 | 100.0% |" in proc.stdout

    report = tp.path / "summary.json"
    again = tp.run(str(suite), "--termrl-agent=reference", "--termrl-resume", f"--termrl-report={report}")
    again.assert_outcomes(deselected=3)
    again.stdout.fnmatch_lines(["*pytest-termrl: log and output problems*", f"pytest-termrl: {warning}"])
    assert json.loads(report.read_text())["episodes"] == 3


def test_reading_a_log_keeps_the_last_record_of_each_episode_key():
    def line(task_id, agent="reference", **fields):
        return EpisodeRecord(episode(task_id), suite="/s", task_id=task_id, agent=agent, end_reason="agent_done", **fields).to_dict()

    crashed = {**line("b"), "harness_error": "worker 'gw0' crashed", "end_reason": WORKER_CRASHED}
    records = [line("a", safe_success=False), line("a", safe_success=True), crashed, line("b"), line("a", agent="noop")]
    contents = latest_per_key(records, "log")
    assert [(r["task_id"], r["agent"], r["safe_success"]) for r in contents.records] == [
        ("a", "reference", True), ("b", "reference", False), ("a", "noop", False)]
    assert (contents.duplicates, contents.retried) == (1, 1)
    # Resume plays again every episode whose record is a harness error, a crashed worker's included.
    assert [settled(r) for r in (crashed, line("b"), {**line("c"), "harness_error": "verifier failed"})] == [False, True, False]


# -- 5: write failures -----------------------------------------------------------------------
@contextmanager
def mounted(target: Path, *how: str):
    """Mount something on ``target`` for the block; unmounted however the block ends."""
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", *how, str(target)], check=True)
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=True)


@contextmanager
def read_only(folder: Path):
    """``folder`` as a read-only bind mount of itself."""
    with mounted(folder, "--bind", str(folder)):
        subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True)
        yield folder


@contextmanager
def immutable(path: Path):
    subprocess.run(["chattr", "+i", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def assert_refused_before_any_episode(result, message: str) -> None:
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: pytest-termrl: {message}"])
    assert "collected" not in result.stdout.str() and "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


@needs_root
def test_unwritable_output_paths_are_a_usage_error_before_any_episode(tp):
    suite = tp.suite(("log_error_counts",))
    ro = tp.path / "ro"
    with read_only(ro):
        run = ro / "run"
        result = tp.run(str(suite), f"--termrl-run-dir={run}", f"--termrl-episodes={run / 'episodes.jsonl'}")
        assert_refused_before_any_episode(result, f"cannot create the run directory {run}: Read-only file system (EROFS)")
        result = tp.run(str(suite), f"--termrl-run-dir={ro}", f"--termrl-episodes={ro / 'episodes.jsonl'}")
        assert_refused_before_any_episode(result, f"cannot write the run directory {ro}: Read-only file system (EROFS)")
        report = ro / "summary.json"
        result = tp.run(str(suite), f"--termrl-report={report}")
        assert_refused_before_any_episode(result, f"cannot write the JSON summary (--termrl-report) {report}: Read-only file system (EROFS)")
    assert not tp.episodes.exists()
    # An immutable report file, and an immutable episode log a resume would append to.
    report = tp.path / "summary.json"
    report.write_text("{}\n")
    with immutable(report):
        result = tp.run(str(suite), f"--termrl-report={report}")
        assert_refused_before_any_episode(result, f"cannot write the JSON summary (--termrl-report) {report}: Operation not permitted (EPERM)")
    tp.episodes.parent.mkdir(parents=True, exist_ok=True)
    tp.episodes.write_text("")
    with immutable(tp.episodes):
        result = tp.run(str(suite), "--termrl-resume")
        assert_refused_before_any_episode(result, f"cannot write the episode log {tp.episodes}: Operation not permitted (EPERM)")


FILLER_CONFTEST = """
from pathlib import Path


def fill(folder):
    with open(folder / "filler", "ab", buffering=0) as handle:
        try:
            while True:
                handle.write(b"x" * 4096)
        except OSError:
            pass


def pytest_termrl_make_agent(config, spec, task):
    # The disks fill as the first episode starts (once: a resume plays normally); the run
    # directory's has room again when the last one starts; the report's stays full.
    root = Path(str(config.rootpath))
    if spec.task_id == "checksum_verify" and not (root / "filled").exists():
        (root / "filled").write_text("")
        fill(root / "small")
        fill(root / "tiny")
    if spec.task_id == "log_error_counts" and (root / "small" / "filler").exists():
        (root / "small" / "filler").unlink()
    return None
"""


@needs_root
def test_a_full_disk_mid_run_names_each_unrecorded_episode_prints_the_summary_and_exits_non_zero(tp):
    suite = tp.suite()
    tp.pytester.makeconftest(FILLER_CONFTEST)
    with mounted(tp.path / "small", "-t", "tmpfs", "-o", "size=512k", "tmpfs") as small, \
            mounted(tp.path / "tiny", "-t", "tmpfs", "-o", "size=64k", "tmpfs") as tiny:
        run, log, report = small / "run", small / "run" / "episodes.jsonl", tiny / "summary.json"
        paths = [str(suite), "--termrl-agent=reference", f"--termrl-run-dir={run}", f"--termrl-episodes={log}", f"--termrl-report={report}"]
        result = tp.run(*paths)
        assert result.ret == WRITE_FAILED
        result.assert_outcomes(passed=3)
        reason = "No space left on device (ENOSPC)"
        lost = [f"pytest-termrl: episode {episode(t)} could not be recorded in {log}: {reason}" for t in SMALL_TASKS[:2]]
        unwritten = f"pytest-termrl: the JSON summary could not be written to {report}: {reason}"
        result.stdout.fnmatch_lines([
            f"*{lost[0]}", f"*{lost[1]}", f"*{unwritten}",
            "*pytest-termrl summary*", "reference*p0_default*clean*3*3*100.0%*", f"episode log: {log}",
            f"JSON summary: {report} (not written: see below)",
            "*pytest-termrl: log and output problems*", lost[0], lost[1], unwritten,
            "pytest-termrl: 3 result(s) not written: the run exits with status 3; "
            "after freeing the space, --termrl-resume plays the episodes the log lacks",
        ])
        output = result.stdout.str() + result.stderr.str()
        assert "INTERNALERROR" not in output and "Traceback" not in output
        # What was written is whole: the episode that ended with room again, no torn line; no half report.
        assert log.read_text().count("\n") == 1
        assert [r["episode_id"] for r in read_episodes(log)] == [episode(SMALL_TASKS[2])]
        assert sorted(p.name for p in tiny.iterdir()) == ["filler"]

        # A full disk before the run is a usage error, like any unwritable output path.
        again = tp.run(*paths, "--termrl-resume")
        assert_refused_before_any_episode(again, f"cannot write the JSON summary (--termrl-report) {report}: {reason}")
        (tiny / "filler").unlink()
        again = tp.run(*paths, "--termrl-resume")
        assert again.ret == pytest.ExitCode.OK
        again.assert_outcomes(passed=2, deselected=1)
        assert sorted(r["episode_id"] for r in read_episodes(log)) == sorted(episode(t) for t in SMALL_TASKS)
        assert json.loads(report.read_text())["episodes"] == 3
