"""Tasks that ship no reference: frozen from recorded passing trials, or played unfrozen under an inferred policy."""

import json
import shutil
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "regrade"
JOB = DATA / "job"


def _tasks(tp):
    shutil.copytree(DATA / "tasks", tp.path / "tasks")
    return tp.path / "tasks"


def _records(tp):
    return [json.loads(line) for line in tp.episodes.read_text().splitlines()]


def test_a_task_without_a_reference_is_frozen_from_its_first_trial_that_passes_twice_and_replayed_as_its_reference(tp):
    tasks = _tasks(tp)
    refused = tp.run("tasks", "--termrl-freeze")
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines(["*task 'greeting' has no reference solution*--termrl-reference-from=PATH*"])

    tp.run("tasks", "--termrl-freeze", f"--termrl-reference-from={JOB}").assert_outcomes(passed=1)
    contract = json.loads((tasks / "contracts.jsonl").read_text())
    assert contract["reference"]["trial"] == "greeting__a1"  # a2 also passed, but comes later in folder order
    assert contract["reference"]["source"].endswith("greeting__a1")
    assert [c["command"] for c in contract["reference"]["calls"]][-1].startswith("echo 'hello, world'")
    assert contract["permitted"] == [{"kinds": ["created"], "path": "/app/greeting.txt", "prefix": False}]

    tp.run("tasks", "--termrl-agent=reference").assert_outcomes(passed=1)
    (record,) = _records(tp)
    assert record["replay"]["trial"] == "greeting__a1" and record["commands_used"] == 2
    tp.episodes.unlink()
    tp.run("tasks", "--termrl-agent=noop").assert_outcomes(failed=1)


def test_no_passing_trial_leaves_the_task_unfrozen_with_the_reasons(tp):
    tasks = _tasks(tp)
    job = tp.path / "job"
    job.mkdir()
    for name in ("greeting__a4", "greeting__a5"):  # a4 passed there but needs the network; a5 failed there
        shutil.copytree(JOB / name, job / name)
    result = tp.run("tasks", "--termrl-freeze", f"--termrl-reference-from={job}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*from recorded trials: trial greeting__a4: reference run 1 does not pass*"])
    assert (tasks / "contracts.jsonl").read_text().strip() == ""


def test_reference_on_a_task_with_neither_reference_nor_frozen_trajectory_fails_naming_what_is_missing(tp):
    _tasks(tp)
    result = tp.run("tasks", "--termrl-unfrozen", "--termrl-agent=reference")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*task 'greeting' has neither a reference solution nor a frozen trajectory*--termrl-reference-from*"])


def test_unfrozen_tasks_play_under_the_inferred_policy_and_are_counted_apart(tp):
    tasks = _tasks(tp)
    result = tp.run("tasks", "--termrl-unfrozen", "--termrl-agent=replay", f"--termrl-trajectories={JOB}",
                    "--termrl-attempts", "2", "--termrl-families=clean,perm_denied", "-n", "2")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "replay*p0_default*clean[*]inf*2*1*50.0%*",
        "*inf: 2 episode(s) of tasks without a frozen contract*",
        "*perm_denied: 1 task(s): greeting (no frozen contract (played unfrozen)*",
    ])
    records = {r["attempt"]: r for r in _records(tp)}
    assert {r["contract"] for r in records.values()} == {"inferred"}
    assert records[0]["safe_success"] is True
    # Attempt 1 replays the trial that deleted the user's notes: its tests pass, the oracle does not.
    assert records[1]["tests_passed"] == records[1]["tests_total"] == 1 and not records[1]["safe_success"]
    assert [(c["path"], c["kind"]) for c in records[1]["collateral"]] == [("/app/notes.txt", "deleted")]
    assert not (tasks / "contracts.jsonl").exists()  # nothing is written into the user's folder


def test_the_ini_key_plays_unfrozen_too(tp):
    _tasks(tp)
    tp.pytester.makeini("[pytest]\ntermrl_unfrozen = true\n")
    tp.run("tasks", "--termrl-agent=noop").assert_outcomes(failed=1)
    assert _records(tp)[0]["contract"] == "inferred"
