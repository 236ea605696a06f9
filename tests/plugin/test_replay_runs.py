"""This project's own runs, replayed: the replay agent plays an episode log's commands, and regrade agrees with the log."""

import json

from pytest_termrl import regrade


def _records(path):
    return {json.loads(line)["task_id"]: json.loads(line) for line in path.read_text().splitlines()}


def test_a_reference_run_and_a_noop_run_replay_to_the_same_verdicts(tp):
    suite = tp.suite()
    tp.run("suite", "--termrl-agent=reference", "-n", "2").assert_outcomes(passed=3)
    reference_log = tp.path / "reference.jsonl"
    tp.episodes.rename(reference_log)
    tp.run("suite", "--termrl-agent=noop").assert_outcomes(failed=3)
    noop_log = tp.path / "noop.jsonl"
    tp.episodes.rename(noop_log)

    replayed = tp.run("suite", "--termrl-agent=replay", f"--termrl-trajectories={reference_log}", "-n", "2")
    replayed.assert_outcomes(passed=3)
    records = _records(tp.episodes)
    for task_id, record in records.items():
        assert record["agent"] == "replay" and record["safe_success"]
        assert record["replay"]["format"] == "episode-log" and record["replay"]["played"] == 1
        assert record["replay"]["divergences"] == [], task_id
    tp.episodes.unlink()
    tp.run("suite", "--termrl-agent=replay", f"--termrl-trajectories={noop_log}").assert_outcomes(failed=3)
    assert all(not r["safe_success"] and r["replay"]["played"] == 0 for r in _records(tp.episodes).values())

    out = tp.path / "regrade.json"
    assert regrade.main([str(reference_log), str(noop_log), "--tasks", str(suite), "--json", str(out)]) == 0
    summary = json.loads(out.read_text())["summary"]
    assert (summary["regraded"], summary["agreed"], summary["compared"]) == (6, 6, 6)
    assert summary["confusion"]["recorded_pass"]["here_pass"] == 3 and summary["confusion"]["recorded_fail"]["here_fail"] == 3
    assert summary["inferred_contract"] == 0  # the suite's frozen contracts judge them


def test_trials_for_tasks_the_run_lacks_and_unreadable_files_are_named_once(tp):
    tp.suite(task_ids=("checksum_verify",))
    log = tp.path / "recorded.jsonl"
    good = {"episode_id": "checksum_verify-clean-p0_default-0", "task_id": "checksum_verify", "agent": "script",
            "safe_success": True, "commands": [{"command": "true", "exit_code": 0}], "transcript": []}
    other = dict(good, episode_id="elsewhere-clean-p0_default-0", task_id="elsewhere")
    log.write_text(json.dumps(good) + "\n" + json.dumps(other) + "\n{not json\n")
    result = tp.run("suite", "--termrl-agent=replay", f"--termrl-trajectories={log}", "-n", "2")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        f"*--termrl-trajectories: skipped {log}:3*",
        f"*--termrl-trajectories {log}: 1 recorded trial(s) for task ids the collected suites do not have: elsewhere*",
    ])


def test_replay_without_trajectories_is_a_usage_error(tp):
    tp.suite(task_ids=("checksum_verify",))
    result = tp.run("suite", "--termrl-agent=replay")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--termrl-agent=replay needs --termrl-trajectories=PATH*"])


def test_episodes_recorded_under_a_fault_replay_under_the_same_fault(tp):
    suite = tp.suite()
    played = tp.run("suite", "--termrl-agent=recovery", "--termrl-families=clean,perm_denied", "-n", "2")
    played.assert_outcomes(passed=5)  # log_error_counts has no validated perm_denied target
    log = tp.path / "recovery.jsonl"
    tp.episodes.rename(log)
    replayed = tp.run("suite", "--termrl-agent=replay", f"--termrl-trajectories={log}", "--termrl-families=clean,perm_denied")
    replayed.assert_outcomes(passed=5)
    records = [json.loads(line) for line in tp.episodes.read_text().splitlines()]
    faulted = [r for r in records if r["family"] == "perm_denied"]
    assert len(faulted) == 2 and all(r["replay"]["played"] == 3 and r["observed"] and r["fault_cleared"] for r in faulted)

    out = tp.path / "regrade.json"
    assert regrade.main([str(log), "--tasks", str(suite), "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert (data["summary"]["regraded"], data["summary"]["agreed"]) == (5, 5)
    assert sorted(row["family"] for row in data["trials"]) == ["clean"] * 3 + ["perm_denied"] * 2
    assert all(row["fabrication"] == [] for row in data["trials"])
