"""What a path holds: a job folder's trials in path order, one trial folder, an ATIF file, an episode log, or a Skipped line."""

from __future__ import annotations

from pathlib import Path

from pytest_termrl.trajectories import read_recorded, trials_by_task

DATA = Path(__file__).resolve().parents[2] / "data" / "trajectories"
JOB = DATA / "job-demo"


def test_a_job_folder_reads_every_trial_and_skips_each_bad_one_once_naming_its_file():
    trials, skipped = read_recorded(JOB)
    assert [t.trial for t in trials] == [
        "count-words__Rr3eW6y", "count-words__Zp2sL5v", "fix-server__Kx8mN2p", "make-config__Ab3dE7q", "make-config__Qw4rT9z"]
    assert [s.path for s in skipped] == [
        str(JOB / "count-words__Hh7jK1m" / "result.json"),
        str(JOB / "count-words__Vv9bB0x" / "agent" / "trajectory.json"),
        str(JOB / "fix-server__Tr5uN8c" / "agent" / "trajectory.json"),
        str(JOB / "make-config__Mm0pQ4s" / "agent" / "trajectory.json"),
    ]
    assert all(s.path in s.reason and "\n" not in s.reason and "expected" in s.reason for s in skipped)
    assert skipped[1].reason == (f"unknown ATIF version ATIF-v2.0 in {JOB / 'count-words__Vv9bB0x' / 'agent' / 'trajectory.json'}; "
                                 "expected ATIF-v1.0 .. ATIF-v1.7")


def test_attempt_n_of_a_task_plays_its_nth_trial_in_folder_order():
    trials, _ = read_recorded(JOB)
    grouped = trials_by_task(list(reversed(trials)))
    assert {task: [t.trial for t in group] for task, group in grouped.items()} == {
        "count-words": ["count-words__Rr3eW6y", "count-words__Zp2sL5v"],
        "fix-server": ["fix-server__Kx8mN2p"],
        "make-config": ["make-config__Ab3dE7q", "make-config__Qw4rT9z"],
    }


def test_one_trial_folder_an_atif_file_and_an_episode_log():
    trials, skipped = read_recorded(JOB / "fix-server__Kx8mN2p")
    assert ([t.trial for t in trials], skipped) == (["fix-server__Kx8mN2p"], [])
    trials, skipped = read_recorded(DATA / "lone-trajectory.json")
    assert ([t.format for t in trials], skipped) == (["atif"], [])
    assert list(trials_by_task(trials)) == [""]
    trials, skipped = read_recorded(DATA / "episodes.jsonl")
    assert [t.format for t in trials] == ["episode-log", "episode-log"] and len(skipped) == 2
    assert {task: [t.trial for t in group] for task, group in trials_by_task(trials).items()} == {
        "count_words": ["count_words-clean-p0_default-0"], "make_config": ["make_config-clean-p0_default-1"]}


def test_a_broken_trial_folder_given_alone_is_one_skipped_line():
    trials, skipped = read_recorded(JOB / "fix-server__Tr5uN8c")
    assert trials == [] and [s.path for s in skipped] == [str(JOB / "fix-server__Tr5uN8c" / "agent" / "trajectory.json")]


def test_anything_else_is_one_skipped_line(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.txt").write_text("not json")
    for path, start in [(tmp_path / "missing", "no such file or folder"), (tmp_path / "empty", "a folder with no trial in it"),
                        (tmp_path / "notes.txt", "invalid JSON")]:
        trials, skipped = read_recorded(path)
        assert trials == [] and len(skipped) == 1
        assert skipped[0].reason.startswith(f"{path}: {start}"), skipped[0].reason


def test_a_trial_folder_of_a_job_with_only_its_config_is_named_not_dropped(tmp_path):
    import shutil

    job = shutil.copytree(JOB, tmp_path / "job")
    (job / "cut-short__Zz0").mkdir()
    (job / "cut-short__Zz0" / "config.json").write_text('{"trial_name": "cut-short__Zz0", "task": {"path": "tasks/cut-short"}}')
    trials, skipped = read_recorded(job)
    assert len(trials) == 5
    assert [s.path for s in skipped if "cut-short" in s.path] == [str(job / "cut-short__Zz0" / "result.json")]
