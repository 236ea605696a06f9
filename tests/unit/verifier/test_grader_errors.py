"""A grader that is itself broken is a harness error (verifier_error), never the agent's failure.

Whole runs on copies of real core tasks whose hidden test file was broken (a syntax error,
an import of a module nowhere to be had), next to a task that passes in the same run; a
test file that imports a module the agent was to write stays the agent's failure; the
rule itself (verifier/blame.py) on the cases a run cannot easily reach; the script
grader's missing reward; and what training makes of such an episode.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import copy_core_suite

from pytest_termrl.report.episodes import read_episodes
from pytest_termrl.training.data import SftDataOptions, build_sft_data
from pytest_termrl.training.env import RolloutResult
from pytest_termrl.verifier import pytest_grader, script_grader
from pytest_termrl.verifier.inside import blame

GOOD = "checksum_verify"


def _break_tests(suite: Path, task_id: str, edit) -> None:
    """Rewrite the task's hidden test file with ``edit(lines)`` and re-pin its hash in the copied contract."""
    test_file = suite / task_id / "tests" / "test_outputs.py"
    lines = test_file.read_text().splitlines()
    test_file.write_text("\n".join(edit(lines)) + "\n")
    contracts = [json.loads(line) for line in (suite / "contracts.jsonl").read_text().splitlines() if line.strip()]
    for contract in contracts:
        if contract["task_id"] == task_id:
            contract["files"]["tests/test_outputs.py"] = hashlib.sha256(test_file.read_bytes()).hexdigest()
    (suite / "contracts.jsonl").write_text("".join(json.dumps(c, sort_keys=True) + "\n" for c in contracts))


CASES = {
    "syntax_error": (
        "config_ini_update",
        lambda lines: [*lines[:2], "def broken(:", *lines[3:]],
        "verifier_error: tests/test_outputs.py:3: SyntaxError: invalid syntax",
    ),
    "missing_module": (
        "log_error_counts",
        lambda lines: ["import numpyy", *lines],
        "verifier_error: ModuleNotFoundError: No module named 'numpyy' (tests/test_outputs.py:1)",
    ),
    "agent_module": (  # the test imports what the agent was to write in the home: the agent's failure
        "log_error_counts",
        lambda lines: ["import sys", "sys.path.insert(0, '/home/user')", "from report_helper import counts", *lines],
        None,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_broken_hidden_test_file_is_a_harness_error(tp, case):
    task_id, edit, expected = CASES[case]
    suite = copy_core_suite(tp.path / "suite", (task_id, GOOD))
    _break_tests(suite, task_id, edit)
    report = tp.path / "summary.json"
    result = tp.run(str(suite), "--termrl-agent=reference", f"--termrl-report={report}")
    result.assert_outcomes(passed=1, failed=1)
    records = {r["task_id"]: r for r in read_episodes(tp.episodes)}
    good, broken = records[GOOD], records[task_id]
    assert good["safe_success"] and good["harness_error"] is None and good["reward"] == 1.0
    assert not broken["safe_success"] and broken["reward"] == 0.0
    assert broken["end_reason"] == "agent_done"  # how the agent's part ended; the grader's failure is the harness error
    summary = json.loads(report.read_text())
    assert summary["safe_successes"] == 1
    assert [row["harness_errors"] for row in summary["rows"]] == [0 if expected is None else 1]
    if expected is None:
        assert broken["harness_error"] is None and broken["verdict"]["error"] is None
        assert any("No module named 'report_helper'" in p for p in broken["verdict"]["problems"])
        result.stdout.fnmatch_lines(["*hidden tests: 0/4 passed*", "*collection error in test_outputs.py*report_helper*"])
    else:
        assert broken["harness_error"] == broken["verdict"]["error"] == expected
        result.stdout.fnmatch_lines([f"*episode {task_id}-clean-p0_default-0 (reference) failed*", f"*harness error: {expected}*"])


# -- the rule, in process --------------------------------------------------------------------------
def _collect_error(tests_dir: Path, source: str) -> BaseException:
    path = tests_dir / "test_x.py"
    path.write_text(source)
    try:
        exec(compile(source, str(path), "exec"), {"__name__": "test_x"})
    except BaseException as exc:  # noqa: BLE001 - whatever collecting it would raise
        return exc
    raise AssertionError("the source raised nothing")


def test_blame_names_the_grader_only_for_what_the_agent_could_not_cause(tmp_path, monkeypatch):
    tests_dir, home = tmp_path / "tests", tmp_path / "home"
    tests_dir.mkdir()
    home.mkdir()
    monkeypatch.chdir(home)
    monkeypatch.setenv("HOME", str(home))
    # The path a verifier's runner has: the interpreter's own folders and an editable install's hook.
    interpreter = (sys.base_prefix, sys.prefix)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p.startswith(interpreter) or p.startswith("__editable__")])
    name_error = _collect_error(tests_dir, "X = 1\nY = undefined_name\n")
    assert blame.grader_fault(name_error, str(tests_dir)) == "NameError: name 'undefined_name' is not defined (tests/test_x.py:2)"
    missing = _collect_error(tests_dir, "import json\nfrom json import nothing_here\n")
    assert blame.grader_fault(missing, str(tests_dir), "t") == (
        "ImportError: cannot import name 'nothing_here' from 'json' (" + json.__file__ + ") (t/test_x.py:2)"
    )
    # Not the grader's: reading the agent's output at module level, a faked SyntaxError naming a
    # test file that compiles, an import that looks in the home.
    assert blame.grader_fault(_collect_error(tests_dir, "open('/nonexistent/out.txt')\n"), str(tests_dir)) is None
    fake = SyntaxError("invalid syntax", (str(tests_dir / "test_x.py"), 1, 1, "x"))
    assert blame.grader_fault(fake, str(tests_dir)) is None
    monkeypatch.setattr(sys, "path", [str(home), *sys.path])
    assert blame.grader_fault(_collect_error(tests_dir, "import solution_module_xyz\n"), str(tests_dir)) is None
    # The harness's own interpreter may live under /tmp (a checkout there): still trusted.
    venv = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        site = venv / "lib" / "site-packages"
        site.mkdir(parents=True)
        assert blame.agent_on_path([str(site)])
        monkeypatch.setattr(sys, "prefix", str(venv))
        assert not blame.agent_on_path([str(site)]) and blame.agent_on_path([str(home)])
    finally:
        shutil.rmtree(venv)
    assert not blame.agent_on_path(["__editable__.pytest_termrl-0.1.0.finder.__path_hook__"])  # a hook's marker, no folder
    assert blame.agent_on_path([""]) and not blame.agent_on_path([str(tests_dir)], tests_dir=str(tests_dir))


def test_judges_turn_grader_errors_and_a_pytest_that_cannot_start_into_harness_errors():
    inventory = ("test_outputs.py::test_a",)
    body = {"exit_code": 2, "collected": [], "outcomes": {}, "collection_errors": [{"nodeid": "test_outputs.py", "message": "E   SyntaxError"}],
            "grader_errors": [{"nodeid": "test_outputs.py", "message": "tests/test_outputs.py:3: SyntaxError: invalid syntax"}]}
    verdict = pytest_grader.judge(body, inventory)
    assert verdict.error == "verifier_error: tests/test_outputs.py:3: SyntaxError: invalid syntax" and not verdict.complete
    agent_side = pytest_grader.judge({**body, "grader_errors": []}, inventory)
    assert agent_side.error is None and agent_side.problems and agent_side.outcomes[0].outcome == "missing"
    no_start = pytest_grader.judge({"exit_code": 4, "collected": [], "outcomes": {}}, inventory)
    assert no_start.error.startswith("verifier_error: pytest could not start on the hidden tests (exit code 4")
    crashed = script_grader.judge({"reward": None, "problem": "the script wrote no reward", "exit_code": 127, "output_tail": "x\ncurl: not found\n"}, None)
    assert crashed.error == "verifier_error: test.sh ended without a usable reward (exit code 127): the script wrote no reward; last output: curl: not found"
    assert crashed.fraction == 0.0 and not crashed.complete
    slow = script_grader.judge({"reward": None, "timed_out": True, "exit_code": None}, None)
    assert slow.error is None and slow.outcomes[0].outcome == "error"  # a hang may be the agent's programs


# -- what training makes of it ---------------------------------------------------------------------
def _record(suite: Path, episode_id: str, harness_error: str | None, safe: bool = True) -> dict:
    call = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": "true"})}}
    return {
        "episode_id": episode_id, "suite": str(suite), "task_id": episode_id, "family": "clean", "prompt": "p0_default",
        "agent": "reference", "safe_success": safe, "reward": 1.0 if safe else 0.0, "harness_error": harness_error,
        "end_reason": "agent_done", "commands_used": 1, "tests_passed": 1, "tests_total": 1,
        "transcript": [
            {"role": "system", "content": "s"}, {"role": "user", "content": "u"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "[exit code: 0]"},
            {"role": "assistant", "content": "done"},
        ],
    }


def test_sft_data_and_the_grpo_reward_leave_a_verifier_error_out(tmp_path):
    error = "verifier_error: tests/test_outputs.py:3: SyntaxError: invalid syntax"
    log, suite = tmp_path / "episodes.jsonl", tmp_path / "suite"
    suite.mkdir()
    (suite / "contracts.jsonl").write_text("")
    (suite / "splits.json").write_text(json.dumps({"train": ["kept", "claims_safe", "as_played"]}))
    records = [_record(suite, "kept", None), _record(suite, "claims_safe", error), _record(suite, "as_played", error, safe=False)]
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = build_sft_data([log], tmp_path / "sft.jsonl", SftDataOptions(), suites=[suite])
    assert report.examples == 1 and report.skipped["not a safe success"] == 2
    assert json.loads((tmp_path / "sft.jsonl").read_text().splitlines()[0])["episode_id"] == "kept"
    # GRPO: a harness error is no score of the model's (TRL leaves a None out of the group's baseline).
    assert RolloutResult(None, records[2], 0.0).trainer_reward is None
    assert RolloutResult(None, {**records[2], "violations": ["deleted ~/.ssh/id_ed25519"]}, -1.0).trainer_reward == -1.0
    assert RolloutResult(None, records[0], 1.0).trainer_reward == 1.0
