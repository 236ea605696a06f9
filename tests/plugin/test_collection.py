"""Collection: contracts.jsonl -> one episode test per task x family x prompt x attempt.

Every run here is a real pytest subprocess over a small suite in pytester.path, built
from copies of core tasks (with their frozen contract lines) or tiny tasks frozen here.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import SMALL_TASKS, copy_core_suite, core_contract_lines, predictions_file, solution_of, write_tiny_task

ID = re.compile(r"^suite/contracts\.jsonl::test_episode\[(.+)\]$")


def collected_ids(result) -> list[str]:
    """The parametrisation ids from a ``--collect-only -q`` run, in collection order."""
    ids = []
    for line in result.outlines:
        match = ID.match(line.strip())
        if match:
            ids.append(match.group(1))
    return ids


def test_ids_are_task_family_prompt_attempt_and_sorted(tp):
    tp.suite()
    result = tp.run("suite", "--collect-only", "-q")
    ids = collected_ids(result)
    assert ids == [f"{task}-clean-p0_default-0" for task in sorted(SMALL_TASKS)]
    result.stdout.fnmatch_lines(["suite/contracts.jsonl::test_episode[[]log_error_counts-clean-p0_default-0[]]"])
    assert result.ret == 0


def test_order_is_deterministic_whatever_the_file_order(tp):
    # Task folders made and contract lines written in reverse order: same sorted items,
    # run after run (xdist relies on every worker collecting the same list).
    suite = copy_core_suite(tp.path / "suite", tuple(reversed(SMALL_TASKS + ("dedupe_contacts",))))
    lines = (suite / "contracts.jsonl").read_text().splitlines()
    (suite / "contracts.jsonl").write_text("\n".join(reversed(lines)) + "\n")
    first = collected_ids(tp.run("suite", "--collect-only", "-q", "--termrl-attempts", "2"))
    second = collected_ids(tp.run("suite", "--collect-only", "-q", "--termrl-attempts", "2"))
    assert first == second == sorted(first)
    assert len(first) == 2 * 4


def test_k_selects_one_task(tp):
    tp.suite()
    result = tp.run("suite", "--collect-only", "-q", "-k", "config_ini_update")
    assert collected_ids(result) == ["config_ini_update-clean-p0_default-0"]
    result.stdout.fnmatch_lines(["*1/3 tests collected (2 deselected)*"])


@pytest.mark.parametrize(
    ("marker", "expected"),
    [
        ("difficulty_easy", ["checksum_verify", "config_ini_update", "log_error_counts"]),
        ("category_logs", ["log_error_counts", "log_latency_stats"]),
        ("difficulty_hard and category_logs", ["log_latency_stats"]),
        ("family_clean and not category_config", ["checksum_verify", "log_error_counts", "log_latency_stats"]),
    ],
)
def test_markers_select(tp, marker, expected):
    tp.suite(SMALL_TASKS + ("log_latency_stats",))
    result = tp.run("suite", "--collect-only", "-q", "-m", marker)
    assert collected_ids(result) == [f"{t}-clean-p0_default-0" for t in expected]


def test_markers_are_registered(tp):
    tp.suite()
    tp.run("suite", "--markers").stdout.fnmatch_lines(["*@pytest.mark.termrl: *"])
    # Every mark an episode carries is registered before it is applied: --strict-markers is clean.
    result = tp.run("suite", "--collect-only", "-q", "--strict-markers", "-m", "termrl and family_clean")
    assert result.ret == 0
    assert len(collected_ids(result)) == len(SMALL_TASKS)


def test_two_prompts_double_the_items(tp):
    tp.suite()
    result = tp.run("suite", "--collect-only", "-q", "--termrl-prompt", "p0_default", "--termrl-prompt", "p6_env_aware")
    ids = collected_ids(result)
    assert len(ids) == 2 * len(SMALL_TASKS)
    assert ids == sorted(ids)
    for task in SMALL_TASKS:
        assert f"{task}-clean-p0_default-0" in ids
        assert f"{task}-clean-p6_env_aware-0" in ids


def test_attempts_multiply_the_items(tp):
    tp.suite()
    ids = collected_ids(tp.run("suite", "--collect-only", "-q", "--termrl-attempts", "2"))
    assert ids == [f"{t}-clean-p0_default-{a}" for t in sorted(SMALL_TASKS) for a in (0, 1)]


def test_unknown_prompt_is_a_usage_error(tp):
    tp.suite()
    result = tp.run("suite", "--collect-only", "--termrl-prompt", "p99_nonexistent")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*p99_nonexistent*"])


# -- broken tasks: named, and the rest still runs ----------------------------------------
def _break_toml_syntax(suite):
    (suite / "checksum_verify" / "task.toml").write_text('id = "checksum_verify"\ndifficulty = "easy\n')
    return ["*checksum_verify/task.toml*not valid TOML*"]


def _break_field_type(suite):
    path = suite / "checksum_verify" / "task.toml"
    path.write_text(re.sub(r'difficulty = "\w+"', "difficulty = 3", path.read_text()))
    return ["*checksum_verify/task.toml: field 'difficulty': expected a non-empty string*"]


def _break_tags_type(suite):
    path = suite / "checksum_verify" / "task.toml"
    path.write_text(re.sub(r"tags = \[.*\]", 'tags = "a,b"', path.read_text()))
    return ["*checksum_verify/task.toml: field 'tags': expected a list*"]


def _remove_instruction(suite):
    (suite / "checksum_verify" / "instruction.md").unlink()
    return ["*checksum_verify/instruction.md: missing*"]


@pytest.mark.parametrize(
    "breaker",
    [_break_toml_syntax, _break_field_type, _break_tags_type, _remove_instruction],
    ids=["bad_toml", "difficulty_int", "tags_str", "no_instruction"],
)
def test_broken_task_is_its_own_collection_error_and_others_run(tp, breaker):
    # Breaking the task also changes a frozen file: the format error must win and be named.
    suite = tp.suite()
    expected = breaker(suite)
    result = tp.run("suite", "--termrl-agent=reference")
    result.stdout.fnmatch_lines(["*ERROR collecting*", *expected])
    result.stdout.fnmatch_lines(["ERROR suite/contracts.jsonl::checksum_verify*"])
    result.assert_outcomes(passed=2, errors=1)


def test_bad_jsonl_line_is_named_and_others_run(tp):
    suite = tp.suite()
    with open(suite / "contracts.jsonl", "a") as handle:
        handle.write('{"task_id": "ghost", "path": \n')
    result = tp.run("suite", "--termrl-agent=reference")
    result.stdout.fnmatch_lines(["*suite/contracts.jsonl:4: not valid JSON*"])
    result.assert_outcomes(passed=3, errors=1)


def test_contract_with_wrong_field_type_names_line_and_field(tp):
    suite = tp.suite()
    lines = (suite / "contracts.jsonl").read_text().splitlines()
    data = json.loads(lines[0])
    assert data["task_id"] == "checksum_verify"
    data["tests"] = "test_outputs.py::test_statuses"
    lines[0] = json.dumps(data)
    (suite / "contracts.jsonl").write_text("\n".join(lines) + "\n")
    result = tp.run("suite", "--termrl-agent=reference")
    # The bad line, and the task left without a contract: both named; the other two pass.
    result.stdout.fnmatch_lines(["*suite/contracts.jsonl:1: field 'tests': expected a list*"])
    result.stdout.fnmatch_lines(["*'checksum_verify'*has no contract*run with --termrl-freeze*"])
    result.assert_outcomes(passed=2, errors=2)


def test_broken_task_under_xdist_others_run(tp):
    suite = tp.suite()
    _break_field_type(suite)
    result = tp.run("suite", "--termrl-agent=reference", "-n", "2")
    result.stdout.fnmatch_lines(["*checksum_verify/task.toml: field 'difficulty'*"])
    result.assert_outcomes(passed=2, errors=1)


def test_changed_task_file_is_refused_until_refrozen(tp):
    suite = tp.suite(("config_ini_update", "log_error_counts"))
    instruction = suite / "log_error_counts" / "instruction.md"
    instruction.write_text(instruction.read_text() + "\nAlso, be quick.\n")
    result = tp.run("suite", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [f"*'log_error_counts': file {instruction} changed since the contract was frozen*--termrl-freeze*"]
    )
    assert collected_ids(result) == ["config_ini_update-clean-p0_default-0"]
    # An added file is refused too, naming it.
    extra = suite / "config_ini_update" / "tests" / "helper.txt"
    extra.write_text("x")
    result = tp.run("suite", "--collect-only", "-q")
    result.stdout.fnmatch_lines([f"*'config_ini_update': file {extra} was added since*"])
    # Refreezing validates the references again and accepts the changed tasks.
    frozen = tp.run("suite", "--termrl-freeze")
    frozen.assert_outcomes(passed=2)
    frozen.stdout.fnmatch_lines(["*2 of 2 task(s) frozen*"])
    line = [json.loads(x) for x in (suite / "contracts.jsonl").read_text().splitlines() if "log_error_counts" in x][0]
    assert line["files"]["instruction.md"] != json.loads(core_contract_lines(["log_error_counts"])[0])["files"]["instruction.md"]
    result = tp.run("suite", "--termrl-agent=reference")
    result.assert_outcomes(passed=2)


def test_freeze_writes_contracts_for_tiny_tasks(tp):
    suite = tp.path / "suite"
    suite.mkdir()
    (suite / "contracts.jsonl").write_text("")
    write_tiny_task(suite, "tiny_a", word="alpha", tests=3)
    write_tiny_task(suite, "tiny_b", word="beta")
    result = tp.run("suite", "--termrl-freeze")
    result.assert_outcomes(passed=2)
    contracts = [json.loads(x) for x in (suite / "contracts.jsonl").read_text().splitlines()]
    assert [c["task_id"] for c in contracts] == ["tiny_a", "tiny_b"]
    assert contracts[0]["tests"] == ["test_outputs.py::test_exists", "test_outputs.py::test_content_1", "test_outputs.py::test_content_2"]
    assert set(contracts[0]["files"]) >= {"task.toml", "instruction.md", "solution.sh", "tests/test_outputs.py", "environment/README"}
    # Freezing twice gives the same bytes.
    before = (suite / "contracts.jsonl").read_bytes()
    tp.run("suite", "--termrl-freeze").assert_outcomes(passed=2)
    assert (suite / "contracts.jsonl").read_bytes() == before
    tp.run("suite", "--termrl-agent=reference").assert_outcomes(passed=2)
    tp.run("suite", "--termrl-agent=noop").assert_outcomes(failed=2)


def test_freeze_refuses_a_task_whose_reference_fails(tp):
    suite = tp.path / "suite"
    suite.mkdir()
    (suite / "contracts.jsonl").write_text("")
    write_tiny_task(suite, "tiny_ok")
    root = write_tiny_task(suite, "tiny_wrong", word="right")
    (root / "solution.sh").write_text("echo wrong > /home/user/out.txt\n")
    result = tp.run("suite", "--termrl-freeze")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*reference run 1 does not pass*", "*1 of 2 task(s) frozen*"])
    assert [json.loads(x)["task_id"] for x in (suite / "contracts.jsonl").read_text().splitlines()] == ["tiny_ok"]


def test_hidden_tests_are_never_collected(tp):
    tp.suite()
    tp.pytester.makepyfile(test_regular="def test_plain():\n    assert 1 + 1 == 2\n")
    # Neither from the rootdir nor when pointed at a task's folder.
    result = tp.run("--collect-only", "-q")
    assert not [line for line in result.outlines if "test_outputs.py" in line]
    result.stdout.fnmatch_lines(["test_regular.py::test_plain", "*4 tests collected*"])
    assert len(collected_ids(result)) == 3
    result = tp.run("suite/log_error_counts", "--collect-only", "-q")
    assert not [line for line in result.outlines if "test_outputs.py::" in line]
    # A full run: 1 plain test plus 3 episodes, no hidden test ran on the host.
    result = tp.run("--termrl-agent=reference")
    result.assert_outcomes(passed=4)


def test_lf_reruns_only_failed_episodes(tp):
    tp.suite()
    predictions = predictions_file(tp.path / "pred.jsonl", {"log_error_counts": solution_of("log_error_counts")})
    first = tp.run("suite", "--termrl-agent=script", f"--termrl-predictions={predictions}", cache=True)
    first.assert_outcomes(passed=1, failed=2)
    second = tp.run("suite", "--termrl-agent=script", f"--termrl-predictions={predictions}", "--lf", "-v", cache=True)
    second.assert_outcomes(failed=2)
    second.stdout.fnmatch_lines(["collecting ... collected 2 items", "run-last-failure: rerun previous 2 failures"])
    ran = [line for line in second.outlines if "::test_episode[" in line and ("PASSED" in line or "FAILED" in line)]
    assert not [line for line in ran if "log_error_counts" in line]
    assert len([line for line in ran if line.startswith("suite/")]) == 2


def test_new_suite_without_contracts_file_freezes_and_hides_its_tests(tp):
    # A brand-new suite has no contracts.jsonl yet: --termrl-freeze is what makes it.
    # Its task folders must still be recognised, and their hidden tests never run on the host.
    suite = tp.path / "suite"
    suite.mkdir()
    write_tiny_task(suite, "tiny_a")
    write_tiny_task(suite, "tiny_b", word="beta")
    result = tp.run("suite", "--termrl-freeze")
    assert not [line for line in result.outlines if "test_outputs.py" in line], result.stdout.str()
    result.assert_outcomes(passed=2)
    assert [json.loads(x)["task_id"] for x in (suite / "contracts.jsonl").read_text().splitlines()] == ["tiny_a", "tiny_b"]
