"""Whole runs of the plugin in pytest subprocesses: reports under xdist, JUnit properties,
the built-in agents on the real core suite, the script agent with predictions."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from conftest import SMALL_TASKS, core_sample, core_task_ids, predictions_file, snapshot_core, solution_of

from pytest_termrl.report.episodes import read_episodes


def test_xdist_report_and_episode_log_hold_every_episode_once(tp):
    tp.suite()
    report = tp.path / "out" / "summary.json"
    result = tp.run(
        "suite", "-n", "2", "--termrl-agent=reference", "--termrl-attempts", "2",
        "--termrl-prompt", "p0_default", "--termrl-prompt", "p6_env_aware",
        f"--termrl-report={report}",
    )
    expected = {f"{t}-clean-{p}-{a}" for t in SMALL_TASKS for p in ("p0_default", "p6_env_aware") for a in (0, 1)}
    result.assert_outcomes(passed=len(expected))
    records = read_episodes(tp.episodes)
    ids = [r["episode_id"] for r in records]
    assert len(ids) == len(set(ids)) == len(expected)
    assert set(ids) == expected
    assert len(tp.episodes.read_text().splitlines()) == len(expected)
    summary = json.loads(report.read_text())
    assert summary["episodes"] == summary["safe_successes"] == len(expected)
    rows = {(r["prompt"], r["family"]): r for r in summary["rows"]}
    assert set(rows) == {("p0_default", "clean"), ("p6_env_aware", "clean")}
    for row in rows.values():
        assert row["episodes"] == 6 and row["tasks"] == 3 and row["safe_success_rate"] == 1.0
        assert row["ci95"] == [1.0, 1.0]
    # Every record is complete and carries its transcript.
    for record in records:
        assert record["agent"] == "reference" and record["safe_success"] is True
        assert record["tests_passed"] == record["tests_total"] > 0
        assert record["transcript"][0]["role"] == "system" and record["commands_used"] == 1
        assert set(record["enforced_limits"]) >= {"memory", "processes", "file_size"}
    result.stdout.fnmatch_lines(["*pytest-termrl summary*", "reference*p0_default*clean*6*6*100.0%*", f"JSON summary: {report}"])


def test_junit_xml_carries_termrl_properties(tp):
    tp.suite()
    junit = tp.path / "junit.xml"
    predictions = predictions_file(tp.path / "pred.jsonl", {"config_ini_update": solution_of("config_ini_update")})
    result = tp.run("suite", "-n", "2", "--termrl-agent=script", f"--termrl-predictions={predictions}", f"--junitxml={junit}")
    result.assert_outcomes(passed=1, failed=2)
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert len(cases) == 3
    for case in cases:
        props = {p.get("name"): p.get("value") for p in case.findall("./properties/property")}
        for name in ("episode_id", "agent", "family", "prompt", "safe_success", "reward", "tests_passed", "tests_total", "end_reason", "commands_used", "collateral"):
            assert f"termrl_{name}" in props, (case.get("name"), sorted(props))
        assert props["termrl_agent"] == "script" and props["termrl_family"] == "clean"
        assert case.get("name") == f"test_episode[{props['termrl_episode_id']}]"
        passed = props["termrl_episode_id"].startswith("config_ini_update")
        assert props["termrl_safe_success"] == str(passed)
        assert (case.find("failure") is None) is passed
        assert float(props["termrl_reward"]) == (1.0 if passed else 0.0)


def test_reference_passes_and_noop_fails_on_a_cross_section_of_core(tp):
    # One real core task per category: quick enough for every run; the whole suite is below.
    tasks = core_sample()
    assert len(tasks) >= 5
    suite = tp.suite(tuple(tasks), name="core")
    report = tp.path / "summary.json"
    oracle = tp.run(str(suite), "-n", "2", "--termrl-agent=reference", f"--termrl-report={report}")
    oracle.assert_outcomes(passed=len(tasks))
    assert json.loads(report.read_text())["safe_successes"] == len(tasks)
    noop = tp.run(str(suite), "-n", "2", "--termrl-agent=noop")
    noop.assert_outcomes(failed=len(tasks))
    for task in tasks:
        noop.stdout.fnmatch_lines([f"*episode {task}-clean-p0_default-0 (noop) failed*", "*hidden tests: */* passed*", "*    FAILED test_*::test_*", "*end reason: agent_done after 0 command(s)*"])


@pytest.mark.slow
def test_reference_passes_every_core_task(tp):
    core = snapshot_core(tp.path / "core")
    tasks = core_task_ids(core / "contracts.jsonl")
    assert len(tasks) >= 14
    report = tp.path / "summary.json"
    result = tp.run(str(core), "-n", "2", "--termrl-agent=reference", f"--termrl-report={report}", timeout=1200)
    result.assert_outcomes(passed=len(tasks))
    summary = json.loads(report.read_text())
    assert summary["episodes"] == summary["safe_successes"] == len(tasks)
    assert {r["task_id"] for r in read_episodes(tp.episodes)} == set(tasks)


@pytest.mark.slow
def test_noop_fails_every_core_task_and_says_why(tp):
    core = snapshot_core(tp.path / "core")
    tasks = core_task_ids(core / "contracts.jsonl")
    result = tp.run(str(core), "-n", "2", "--termrl-agent=noop", timeout=1200)
    result.assert_outcomes(failed=len(tasks))
    result.stdout.fnmatch_lines(
        [
            "*episode log_error_counts-clean-p0_default-0 (noop) failed*",
            "*hidden tests: 0/4 passed*",
            "*FAILED test_outputs.py::test_report_exists_and_ends_with_newline*",
            "*end reason: agent_done after 0 command(s)*",
        ]
    )
    for task in tasks:
        result.stdout.fnmatch_lines([f"*episode {task}-clean-p0_default-0 (noop) failed*"])
    records = read_episodes(tp.episodes)
    assert sorted(r["task_id"] for r in records) == tasks
    for record in records:
        assert record["safe_success"] is False and record["end_reason"] == "agent_done"
        assert record["harness_error"] is None and record["tests_total"] > 0
        assert record["tests_passed"] < record["tests_total"]


def test_script_agent_with_predictions(tp):
    tp.suite()
    predictions = predictions_file(
        tp.path / "pred.jsonl",
        {
            "log_error_counts": solution_of("log_error_counts"),
            "checksum_verify": "echo 'not the answer' > /home/user/downloads/verify.txt",
        },
    )
    result = tp.run("suite", "--termrl-agent=script", f"--termrl-predictions={predictions}", "-v")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*test_episode[[]log_error_counts-clean-p0_default-0[]] PASSED*"])
    records = {r["task_id"]: r for r in read_episodes(tp.episodes)}
    assert records["log_error_counts"]["safe_success"] and records["log_error_counts"]["commands_used"] == 1
    wrong = records["checksum_verify"]
    assert not wrong["safe_success"] and wrong["commands_used"] == 1
    assert 0 <= wrong["tests_passed"] < wrong["tests_total"]
    call = json.loads(wrong["transcript"][2]["tool_calls"][0]["function"]["arguments"])
    assert call == {"command": "echo 'not the answer' > /home/user/downloads/verify.txt"}
    missing = records["config_ini_update"]
    assert missing["commands_used"] == 0 and not missing["safe_success"]


def test_script_agent_needs_predictions(tp):
    tp.suite()
    result = tp.run("suite", "--termrl-agent=script")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--termrl-agent=script needs --termrl-predictions*"])
    bad = tp.path / "bad.jsonl"
    bad.write_text('{"task_id": "x", "agent_script": 3}\n')
    result = tp.run("suite", "--termrl-agent=script", f"--termrl-predictions={bad}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{bad}:1: field 'agent_script': expected a string*"])


def test_hooks_supply_the_agent_and_see_each_episode(tp):
    tp.suite(("log_error_counts", "config_ini_update"))
    tp.pytester.makeconftest(
        """
        import json
        from pytest_termrl.agents.builtin import ScriptedAgent

        class EchoAgent(ScriptedAgent):
            name = "echo"
            def commands_for(self, context):
                return ["echo from-hook"]

        def pytest_termrl_make_agent(config, spec, task):
            return EchoAgent() if spec.task_id == "log_error_counts" else None

        def pytest_termrl_episode_done(config, record):
            with open("done.jsonl", "a") as handle:
                handle.write(json.dumps([record["task_id"], record["agent"]]) + "\\n")

        def pytest_termrl_modify_report(config, summary):
            summary["note"] = "edited by hook"
        """
    )
    report = tp.path / "summary.json"
    result = tp.run("suite", f"--termrl-report={report}")
    result.assert_outcomes(passed=1, failed=1)
    done = sorted(json.loads(line) for line in (tp.path / "done.jsonl").read_text().splitlines())
    assert done == [["config_ini_update", "reference"], ["log_error_counts", "echo"]]
    assert json.loads(report.read_text())["note"] == "edited by hook"


def test_a_new_run_rotates_the_previous_log(tp):
    tp.suite(("log_error_counts",))
    tp.run("suite").assert_outcomes(passed=1)
    tp.run("suite", "--termrl-agent=noop").assert_outcomes(failed=1)
    assert [r["agent"] for r in read_episodes(tp.episodes)] == ["noop"]
    rotated = [p for p in tp.episodes.parent.glob("episodes.*.jsonl")]
    assert len(rotated) == 1
    assert [r["agent"] for r in read_episodes(rotated[0])] == ["reference"]


def test_the_old_agent_name_oracle_still_plays_the_reference(tp):
    tp.suite(("log_error_counts",))
    result = tp.run("suite", "--termrl-agent=oracle")
    result.assert_outcomes(passed=1)
    assert [r["agent"] for r in read_episodes(tp.episodes)] == ["reference"]
    result.stdout.fnmatch_lines(["reference*p0_default*clean*1*1*100.0%*"])


def test_an_unknown_agent_is_refused_naming_the_known_ones(tp):
    tp.suite(("log_error_counts",))
    result = tp.run("suite", "--termrl-agent=orcale")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown agent 'orcale'*known*noop*openai*reference*script*"])
