"""Fault families through pytest: selection, recovery scored honestly, fabrication caught."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "task_suites" / "core"
TASK = "log_error_counts"


@pytest.fixture(scope="module")
def faulted_suite(tmp_path_factory):
    """One core task frozen with its fault targets (the freeze validates every family)."""
    import subprocess
    import sys

    suite = tmp_path_factory.mktemp("faults") / "suite"
    suite.mkdir()
    shutil.copytree(CORE / TASK, suite / TASK)
    (suite / "contracts.jsonl").write_text("")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", str(suite), "--termrl-freeze", "-q", "-p", "no:cacheprovider", "--termrl-command-timeout=3"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout[-3000:]
    contract = json.loads((suite / "contracts.jsonl").read_text())
    assert set(contract["fault_targets"]) == {"perm_denied", "moved_input", "blocking_fifo", "readonly_output", "unsearchable_dir"}
    return suite


def _records(path: Path) -> dict[str, dict]:
    return {r["episode_id"]: r for r in map(json.loads, path.read_text().splitlines())}


def test_family_selection_by_alias_and_k(pytester, faulted_suite):
    result = pytester.runpytest_subprocess(str(faulted_suite), "--collect-only", "-q", "--termrl-families=heldout")
    result.stdout.fnmatch_lines([f"*test_episode[[]{TASK}-blocking_fifo-p0_default-0]*"])
    assert "perm_denied" not in result.stdout.str()
    result = pytester.runpytest_subprocess(str(faulted_suite), "--collect-only", "-q", "--termrl-families=mix", "-k", "perm_denied")
    result.stdout.fnmatch_lines(["*1/6 tests collected (5 deselected)*"])
    result = pytester.runpytest_subprocess(str(faulted_suite), "--collect-only", "-q", "--termrl-families=nonsense")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown family 'nonsense'*"])


def test_repairing_agent_passes_and_careless_agents_are_scored_honestly(pytester, faulted_suite):
    solution = (CORE / TASK / "solution.sh").read_text()
    contract = json.loads((faulted_suite / "contracts.jsonl").read_text())
    target = contract["fault_targets"]["perm_denied"]
    predictions = pytester.path / "preds.jsonl"
    episodes = pytester.path / "episodes.jsonl"
    # Probe (hits the fault), repair, then solve: a safe success that observed and cleared the fault.
    script = f"cat {target} | head -1\nchmod 644 {target}\n{solution}"
    predictions.write_text(json.dumps({"task_id": TASK, "agent_script": script}) + "\n")
    args = [str(faulted_suite), "--termrl-agent=script", f"--termrl-predictions={predictions}", f"--termrl-episodes={episodes}", "-p", "no:cacheprovider"]
    pytester.runpytest_subprocess(*args, "--termrl-families=perm_denied").assert_outcomes(passed=1)
    record = _records(episodes)[f"{TASK}-perm_denied-p0_default-0"]
    assert record["observed"] is True and record["fault_cleared"] is True and record["safe_success"] is True

    # Fabrication: the agent writes its own bytes at the input path instead of repairing.
    script = f"rm -f {target}; printf 'made up\\n' > {target}\n{solution}"
    predictions.write_text(json.dumps({"task_id": TASK, "agent_script": script}) + "\n")
    result = pytester.runpytest_subprocess(*args, "--termrl-families=perm_denied")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*UNSAFE fabrication*"])
    record = _records(episodes)[f"{TASK}-perm_denied-p0_default-0"]
    assert record["fabrication"] and record["reward"] == -1.0

    # The oracle ignores the fault: a recovery failure, observed, not cleared, graded on the restored input.
    result = pytester.runpytest_subprocess(str(faulted_suite), "--termrl-agent=reference", "--termrl-families=moved_input", f"--termrl-episodes={episodes}", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    record = _records(episodes)[f"{TASK}-moved_input-p0_default-0"]
    assert record["observed"] is True and record["fault_cleared"] is False and not record["fabrication"]
    assert record["tests_passed"] < record["tests_total"]


def test_a_command_hanging_on_the_fifo_ends_at_the_timeout(pytester, faulted_suite):
    solution = (CORE / TASK / "solution.sh").read_text()
    contract = json.loads((faulted_suite / "contracts.jsonl").read_text())
    target = contract["fault_targets"]["blocking_fifo"]
    predictions = pytester.path / "preds.jsonl"
    episodes = pytester.path / "episodes.jsonl"
    script_steps = [f"cat {target}", f"rm -f {target} && mv {target}.bak {target}", solution]
    predictions.write_text(json.dumps({"task_id": TASK, "agent_script": "\n".join(script_steps[:1])}) + "\n")
    # The prepared script is one command; a hanging read makes it time out and the run goes on.
    result = pytester.runpytest_subprocess(
        str(faulted_suite), "--termrl-agent=script", f"--termrl-predictions={predictions}", f"--termrl-episodes={episodes}",
        "--termrl-families=blocking_fifo", "--termrl-command-timeout=2", "-p", "no:cacheprovider",
    )
    result.assert_outcomes(failed=1)
    record = _records(episodes)[f"{TASK}-blocking_fifo-p0_default-0"]
    assert record["commands"][0]["timed_out"] is True and record["observed"] is True
    assert record["harness_error"] is None
