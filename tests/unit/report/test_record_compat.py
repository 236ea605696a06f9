"""Logs written by the previous release read back unchanged, and the same episodes played today record the same.

``tests/data/logs/v0.1-6df7f71`` holds real episode logs and JSON summaries of release 6df7f71
(its README says how they were made): the core suite's reference and no-op runs, clean and
with the ``perm_denied`` fault, and a two-step Harbor task.

Compared after dropping what differs from run to run whatever the code (``volatile``):

- ``timings`` and every ``duration_s`` (a command's, a verdict's, a step verdict's): wall clock;
- ``suite``, in records and in the summary's ``left_out``: where the suite was copied to for the run;
- ``0x...`` addresses in failing tests' messages (a generator's repr): the grader process's memory.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from pytest_termrl.report.record import EndReason, EpisodeRecord, FaultRecord
from pytest_termrl.report.verdict_record import GradedTest, ScriptVerdictRecord, StepsVerdictRecord, VerdictRecord
from pytest_termrl.report.summary import summarize

from conftest import copy_core_suite

LOGS = Path(__file__).resolve().parents[2] / "data" / "logs" / "v0.1-6df7f71"
TWO_STEPS = Path(__file__).resolve().parents[2] / "data" / "harbor_steps" / "hs-two-steps"
CORE_TASKS = ("checksum_verify", "config_ini_update", "log_error_counts", "perms_from_spec")
RUNS = {
    "core-reference": ["--termrl-agent=reference"],
    "core-noop": ["--termrl-agent=noop"],
    "perm_denied-reference": ["--termrl-agent=reference", "--termrl-families=perm_denied"],
    "perm_denied-noop": ["--termrl-agent=noop", "--termrl-families=perm_denied"],
    "steps-reference": ["--termrl-agent=reference"],
    "steps-noop": ["--termrl-agent=noop"],
}
ADDRESS = re.compile(r"0x[0-9a-f]+")

pytestmark = pytest.mark.usefixtures("import_cache")  # the two-step task's import lands in a cache of this run's own


def _lines(run: str) -> list[dict]:
    return [json.loads(line) for line in (LOGS / f"{run}.jsonl").read_text().splitlines()]


def _canonical(data) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=True)


def _plain(value) -> bool:
    """Only what an xdist report carries: builtins exactly (no enum member, no dataclass)."""
    if type(value) is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if type(value) is list:
        return all(_plain(v) for v in value)
    return value is None or type(value) in (str, int, float, bool)


def _steady_verdict(verdict: dict | None) -> None:
    if verdict is None:
        return
    verdict.pop("duration_s", None)
    verdict["messages"] = {k: ADDRESS.sub("0x...", v) for k, v in (verdict.get("messages") or {}).items()}
    for step in verdict.get("steps") or []:
        _steady_verdict(step.get("verdict"))


def _steady(record: dict) -> dict:
    """The record without what changes from run to run (the module's docstring says what and why)."""
    record = copy.deepcopy(record)
    for name in ("timings", "suite"):
        record.pop(name, None)
    for command in record.get("commands") or []:
        command.pop("duration_s", None)
    _steady_verdict(record.get("verdict"))
    return record


def _steady_summary(summary: dict) -> dict:
    summary = copy.deepcopy(summary)
    for pair in summary.get("left_out") or []:
        pair.pop("suite", None)
    return summary


# -- (a) every line of the old logs reads back and writes the same JSON ----------------------------
@pytest.mark.parametrize("run", list(RUNS))
def test_every_line_of_the_previous_releases_logs_reads_back_and_writes_the_same_json(run):
    lines = _lines(run)
    assert lines
    for line in lines:
        record = EpisodeRecord.from_dict(line)
        out = record.to_dict()
        assert _canonical(out) == _canonical(line), line["episode_id"]
        assert set(out) == set(line)
        assert _plain(out), line["episode_id"]
        assert isinstance(record.verdict, VerdictRecord) and record.extra == {"oracle_mode": line["oracle_mode"]}
        assert record.verdict.passed == line["tests_passed"] and record.verdict.total == line["tests_total"]
        assert [t.nodeid for t in record.verdict.tests] == list(line["verdict"]["outcomes"])
        assert record.verdict.extra == {}
        if "fault" in line:
            assert isinstance(record.fault, FaultRecord) and record.fault.injected == line["fault"]
            assert (record.fault.observed, record.fault.observed_at, record.fault.cleared) == (
                line["observed"], line["observed_at"], line["fault_cleared"])
        else:
            assert record.fault is None and not {"observed", "observed_at", "fault_cleared", "fabrication"} & set(out)


def test_the_summary_of_the_old_logs_is_the_summary_the_old_release_wrote():
    for run in RUNS:
        written = json.loads((LOGS / f"{run}.summary.json").read_text())
        assert summarize(EpisodeRecord.from_dict(line) for line in _lines(run))["rows"] == written["rows"], run


def test_a_multi_step_verdict_reads_back_typed_step_by_step():
    [line] = _lines("steps-reference")
    verdict = EpisodeRecord.from_dict(line).verdict
    assert isinstance(verdict, StepsVerdictRecord) and verdict.strategy == "mean" and verdict.native_reward == 1.0
    assert [(s.step, s.name, s.end_reason, s.complete) for s in verdict.steps] == [(1, "create", "agent_done", True), (2, "extend", "agent_done", True)]
    assert all(isinstance(s.verdict, ScriptVerdictRecord) and s.verdict.reward_source == "reward.txt" for s in verdict.steps)
    assert verdict.tests == [GradedTest("step-1::test.sh", "passed"), GradedTest("step-2::test.sh", "passed")]


# -- the typed parts keep what they do not name, and write builtins only -------------------------
def test_unknown_keys_of_a_verdict_a_step_and_a_record_are_kept_and_written_back():
    [line] = _lines("steps-noop")
    line = copy.deepcopy(line)
    line["later_field"] = {"a": 1}
    line["verdict"]["recovery_failed"] = True
    line["verdict"]["steps"][0]["later_step_field"] = 3
    line["verdict"]["steps"][1]["verdict"]["grader"] = "a-later-grader"
    record = EpisodeRecord.from_dict(line)
    assert record.extra["later_field"] == {"a": 1} and record.verdict.extra == {"recovery_failed": True}
    assert record.verdict.steps[0].extra == {"later_step_field": 3}
    later = record.verdict.steps[1].verdict
    assert type(later) is VerdictRecord and later.extra["grader"] == "a-later-grader"
    assert _canonical(record.to_dict()) == _canonical(line)


def test_a_record_made_in_code_is_plain_builtins_and_a_clean_one_has_no_fault_keys():
    record = EpisodeRecord(
        "t-perm_denied-p0_default-0", task_id="t", family="perm_denied", end_reason=EndReason.AGENT_DONE,
        verdict=ScriptVerdictRecord(passed=1, total=1, complete=True, tests=[GradedTest("test.sh", "passed")], native_reward=1.0),
        fault=FaultRecord(injected={"family": "perm_denied", "target": "a.txt"}, observed=True, observed_at=2, cleared=True),
    )
    out = record.to_dict()
    assert _plain(out) and type(out["end_reason"]) is str and out["verdict"]["grader"] == "script"
    assert {k: out[k] for k in ("observed", "observed_at", "fault_cleared", "fabrication")} == {
        "observed": True, "observed_at": 2, "fault_cleared": True, "fabrication": []}
    assert "fault_error" not in out and EpisodeRecord.from_dict(out) == record
    clean = EpisodeRecord("t-clean-p0_default-0", end_reason=EndReason.AGENT_DONE).to_dict()
    assert not {"fault", "observed", "observed_at", "fault_cleared", "fabrication", "fault_error"} & set(clean)


# -- (b) the same episodes played today record the same -----------------------------------------
@pytest.mark.parametrize("run", list(RUNS))
def test_the_same_episodes_played_today_record_and_sum_up_the_same(tp, run):
    if run.startswith("steps-"):
        suite = tp.imported_suite(TWO_STEPS)
    else:
        suite = copy_core_suite(tp.path / "suite", CORE_TASKS)
    report = tp.path / "summary.json"
    tp.run(suite.name, *RUNS[run], f"--termrl-report={report}", timeout=300)
    old = {line["episode_id"]: line for line in _lines(run)}
    new = {line["episode_id"]: line for line in map(json.loads, tp.episodes.read_text().splitlines())}
    assert sorted(new) == sorted(old)
    for episode in old:
        assert _canonical(_steady(new[episode])) == _canonical(_steady(old[episode])), episode
        assert _canonical(_steady(new[episode])["verdict"]) == _canonical(_steady(old[episode])["verdict"]), episode
    written = json.loads((LOGS / f"{run}.summary.json").read_text())
    assert _canonical(_steady_summary(json.loads(report.read_text()))) == _canonical(_steady_summary(written))
