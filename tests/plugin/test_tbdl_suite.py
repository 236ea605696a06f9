"""The hard suite task_suites/tbdl: every task is multi-step and all-or-nothing.

The reference solution of every task passes, and a plausible half-fix of every task (the
suite's negative_controls.jsonl, played by the script agent) is not a success while its
per-test counts show partial progress: 0 < tests_passed < tests_total, reward < 1.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parents[2] / "task_suites" / "tbdl"
CONTROLS = SUITE / "negative_controls.jsonl"


def _task_ids() -> list[str]:
    return sorted(json.loads(line)["task_id"] for line in (SUITE / "contracts.jsonl").read_text().splitlines() if line.strip())


def _run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, dict]]:
    pytester.makeini("[pytest]\n")
    episodes = pytester.path / "episodes.jsonl"
    result = pytester.runpytest_subprocess(
        str(SUITE), "-p", "no:cacheprovider", "-n", "2",
        f"--termrl-run-dir={pytester.path / 'run'}", f"--termrl-episodes={episodes}", *args,
        timeout=600,
    )
    records = [json.loads(line) for line in episodes.read_text().splitlines() if line.strip()]
    by_task = {r["task_id"]: r for r in records}
    assert len(by_task) == len(records), "one episode per task expected"
    return result, by_task


def test_suite_shape():
    ids = _task_ids()
    assert len(ids) >= 4
    assert sorted(p.name for p in SUITE.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))) == ids
    for task_id in ids:
        meta = tomllib.loads((SUITE / task_id / "task.toml").read_text())
        assert meta["id"] == task_id and meta["difficulty"] == "hard", task_id
        tests = json.loads(next(l for l in (SUITE / "contracts.jsonl").read_text().splitlines()
                                if json.loads(l)["task_id"] == task_id))["tests"]
        assert len(tests) >= 4, f"{task_id}: one hidden test per part, at least four parts"
    controls = [json.loads(line) for line in CONTROLS.read_text().splitlines() if line.strip()]
    assert sorted(c["task_id"] for c in controls) == ids, "one negative control per task"
    assert all(isinstance(c["agent_script"], str) and c["agent_script"].strip() for c in controls)
    splits = json.loads((SUITE / "splits.json").read_text())
    assert sorted(t for group in splits.values() for t in group) == ids


def test_negative_controls_make_partial_progress_but_never_succeed(pytester):
    result, episodes = _run(pytester, "--termrl-agent=script", f"--termrl-predictions={CONTROLS}")
    ids = _task_ids()
    result.assert_outcomes(failed=len(ids))
    assert sorted(episodes) == ids
    for task_id, record in episodes.items():
        assert record["harness_error"] is None, f"{task_id}: {record['harness_error']}"
        assert not record["collateral"], f"{task_id}: the half-fix must stay inside the permitted changes"
        assert not record["safe_success"] and not record["verdict"]["complete"], f"{task_id} must not succeed"
        assert 0 < record["tests_passed"] < record["tests_total"], \
            f"{task_id}: {record['tests_passed']}/{record['tests_total']} is not partial progress"
        assert 0 < record["reward"] < 0.5, f"{task_id}: reward {record['reward']}"


def test_oracle_passes_every_task(pytester):
    result, episodes = _run(pytester, "--termrl-agent=reference")
    ids = _task_ids()
    result.assert_outcomes(passed=len(ids))
    assert sorted(episodes) == ids
    for task_id, record in episodes.items():
        assert record["safe_success"] and record["tests_passed"] == record["tests_total"], task_id
        assert record["reward"] == 1.0, task_id
