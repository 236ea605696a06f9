"""Regrading a Harbor-shaped job: each trial replayed in the sandbox, graded here, compared with its recorded reward."""

import json
import shutil
from pathlib import Path

import pytest

from pytest_termrl import regrade

DATA = Path(__file__).resolve().parents[2] / "data" / "regrade"


@pytest.fixture(scope="module")
def regraded(tmp_path_factory):
    out = tmp_path_factory.mktemp("regrade")
    code = regrade.main([str(DATA / "job"), "--tasks", str(DATA / "tasks"), "--json", str(out / "r.json"),
                         "--html", str(out / "r.html"), "-n", "2"])
    assert code == 0
    data = json.loads((out / "r.json").read_text())
    return data, {row["trial"]: row for row in data["trials"]}, out


def test_every_trial_has_the_promised_fields(regraded):
    _, rows, _ = regraded
    assert sorted(rows) == [f"greeting__a{i}" for i in range(1, 6)]
    for row in rows.values():
        for key in ("trial", "task", "recorded_reward", "reward", "tests_passed", "tests_total", "agree", "collateral", "divergences", "blocked"):
            assert key in row
        assert row["task"] == "greeting" and row["blocked"] is None and row["contract"] == "inferred"


def test_a_clean_pass_agrees(regraded):
    _, rows, _ = regraded
    row = rows["greeting__a1"]
    assert (row["recorded_reward"], row["reward"], row["agree"], row["safe"]) == (1.0, 1.0, True, True)
    assert row["collateral"] == [] and row["divergences"] == 0


def test_a_passing_trial_that_deleted_the_users_notes_is_caught_at_its_step(regraded):
    _, rows, _ = regraded
    row = rows["greeting__a2"]
    assert row["agree"] is True and row["reward"] == 1.0 and row["safe"] is False
    assert [(f["path"], f["kind"], f["step"]) for f in row["collateral"]] == [("/app/notes.txt", "deleted", 2)]
    assert row["collateral"][0]["command"].startswith("rm -f /app/notes.txt")


def test_keystrokes_heredoc_ctrl_c_and_a_repl_replay_in_the_terminal(regraded):
    _, rows, _ = regraded
    row = rows["greeting__a3"]
    assert row["reward"] == 1.0 and row["agree"] is True, row
    assert row["collateral"] == []


def test_a_trial_that_needed_the_network_flips_and_says_why(regraded):
    data, rows, _ = regraded
    row = rows["greeting__a4"]
    assert (row["recorded_reward"], row["reward"], row["agree"]) == (1.0, 0.0, False)
    assert row["divergences"] == 1
    flip = next(f for f in data["summary"]["flips"] if f["trial"] == "greeting__a4")
    assert any("printed other than recorded" in why for why in flip["why"])
    assert any("failing here: test.sh" in why for why in flip["why"])


def test_the_summary_counts_agreement_skips_and_damage(regraded):
    data, _, _ = regraded
    summary = data["summary"]
    assert (summary["trials"], summary["regraded"], summary["blocked"], summary["skipped"]) == (6, 5, 0, 1)
    assert summary["agreed"] == 4 and summary["compared"] == 5 and summary["agreement"] == 0.8
    assert summary["confusion"] == {"recorded_pass": {"here_pass": 3, "here_fail": 1}, "recorded_fail": {"here_pass": 0, "here_fail": 1}}
    assert summary["passing_with_collateral"] == 1 and summary["collateral_per_kind"] == {"deleted": 1}
    (reason,) = summary["skipped_reasons"]
    assert reason == ("PATH: the trial ended in AgentTimeoutError: Agent execution timed out after N seconds and has no reward; "
                      "expected a graded trial (verifier_result.rewards or verifier/reward.txt)")
    assert set(summary["per_trial_s"]) == {"build_s", "replay_s", "grade_s"}


def test_the_html_report_shows_the_replays_and_the_agreement(regraded):
    _, _, out = regraded
    page = (out / "r.html").read_text()
    assert "<title>pytest-termrl regrade</title>" in page
    assert "agreement with the recorded verdict 80.0% (4/5)" in page
    assert "agreement table: recorded pass: here pass 3, here fail 1; recorded fail: here pass 0, here fail 1" in page


def test_trials_whose_task_is_missing_or_unreadable_are_blocked_or_skipped_and_the_others_regrade(tmp_path):
    job = tmp_path / "job"
    shutil.copytree(DATA / "job", job)
    shutil.copytree(job / "greeting__a1", job / "other__b1")
    result = json.loads((job / "other__b1" / "result.json").read_text())
    result["task_name"], result["trial_name"] = "no-such-task", "other__b1"
    (job / "other__b1" / "result.json").write_text(json.dumps(result))
    config = json.loads((job / "other__b1" / "config.json").read_text())
    config["task"]["path"] = "../../../etc"
    (job / "other__b1" / "config.json").write_text(json.dumps(config))
    (job / "greeting__a5" / "agent" / "trajectory.json").write_text('{"schema_version": "ATIF-v1.5", "steps": [')
    shutil.rmtree(job / "greeting__a2" / "agent")
    code = regrade.main([str(job), "--tasks", str(DATA / "tasks"), "--json", str(tmp_path / "r.json")])
    assert code == 0
    data = json.loads((tmp_path / "r.json").read_text())
    rows = {row["trial"]: row for row in data["trials"]}
    assert rows["other__b1"]["blocked"] == "task etc / no-such-task not found under --tasks"
    assert rows["greeting__a1"]["agree"] is True
    assert data["summary"]["skipped"] == 3 and data["summary"]["blocked"] == 1


def test_names_read_from_recorded_files_reach_the_terminal_without_escape_sequences(tmp_path, capsys):
    job = tmp_path / "job"
    (job).mkdir()
    shutil.copytree(DATA / "job" / "greeting__a4", job / "greeting__a4")
    result = json.loads((job / "greeting__a4" / "result.json").read_text())
    result["trial_name"] = "evil\x1b[2J\x1b]0;pwned\x07\x9b"
    (job / "greeting__a4" / "result.json").write_text(json.dumps(result))
    assert regrade.main([str(job), "--tasks", str(DATA / "tasks"), "--json", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html")]) == 0
    out = capsys.readouterr().out
    assert "regrade: flip evil]0;pwned (greeting)" in out or "regrade: flip evil (greeting)" in out
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert json.loads((tmp_path / "r.json").read_text())["trials"][0]["trial"] == result["trial_name"]
    assert "\x1b" not in (tmp_path / "r.html").read_text()


_REGRADE_ONE = regrade.regrade_one


def _dies_on_a4(job):
    """A worker that is killed while it regrades greeting__a4 (module-level: the pool pickles it by name)."""
    import os
    import signal

    if job.trial.trial == "greeting__a4":
        os.kill(os.getpid(), signal.SIGKILL)
    return _REGRADE_ONE(job)


def test_a_worker_killed_mid_trial_blocks_its_trials_and_loses_no_finished_one(monkeypatch):
    monkeypatch.setattr(regrade, "regrade_one", _dies_on_a4)
    jobs, _, _ = regrade.plan([DATA / "job"], [DATA / "tasks"])
    rows = regrade.run(jobs, 2, "bwrap", 10.0)
    assert [row["trial"] for row in rows] == [job.trial.trial for job in jobs]
    died = [row for row in rows if (row["blocked"] or "").startswith("the regrade worker died")]
    assert "greeting__a4" in {row["trial"] for row in died}
    finished = [row for row in rows if row["blocked"] is None]
    assert finished and finished[0]["trial"] == "greeting__a1" and finished[0]["agree"] is True
    assert len(died) + len(finished) == len(rows)


def test_a_regrade_killed_midway_keeps_its_finished_trials_and_resume_regrades_only_the_rest(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "r.json"
    stream = regrade.stream_path(out)
    process = subprocess.Popen([sys.executable, "-m", "pytest_termrl.regrade", str(DATA / "job"), "--tasks", str(DATA / "tasks"),
                                "--json", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not stream.exists() or len(stream.read_text().splitlines()) < 2):
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not out.exists(), "killed before the end: no summary was written"
    finished = {json.loads(line)["trial"]: json.loads(line) for line in stream.read_text().splitlines()}
    assert 2 <= len(finished) < 5
    with stream.open("a") as cut:
        cut.write('{"trial": "greeting__a5", "sour')  # the line the kill cut short: its trial runs again

    assert regrade.main([str(DATA / "job"), "--tasks", str(DATA / "tasks"), "--json", str(out), "--resume"]) == 0
    data = json.loads(out.read_text())
    rows = {row["trial"]: row for row in data["trials"]}
    assert sorted(rows) == [f"greeting__a{i}" for i in range(1, 6)]
    for trial, row in finished.items():
        assert rows[trial] == row, "a finished trial is kept as it was, not regraded"
    assert data["summary"]["regraded"] == 5 and data["summary"]["agreed"] == 4
