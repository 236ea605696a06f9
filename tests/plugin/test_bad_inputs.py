"""Bad input: each gets an error naming the file, the field and what was expected, and one broken
task never stops the others.

Every case breaks one task (``checksum_verify``) of a copy of real core tasks, in one way, and
runs the suite with the reference agent: the break is that task's own collection error, with the
message the user reads, and the other task still runs and passes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest

from conftest import REPO, predictions_file, solution_of, write_tiny_task

from pytest_termrl.tasks.files import MAX_FILE_BYTES

BROKEN, HEALTHY = "checksum_verify", "config_ini_update"
HARBOR_TASK = REPO / "tests" / "data" / "imports" / "runnable" / "harbor" / "hb-word-freq"


def _plant_bad_byte(path, after: bytes = b" ") -> str:
    """Put a 0xff byte just after the first ``after`` in the file; the position as the error names it."""
    data = path.read_bytes()
    offset = data.index(after) + len(after)
    path.write_bytes(data[:offset] + b"\xff" + data[offset:])
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"not valid UTF-8: byte 0xff at offset {offset} (line {line}, column {column})"


def _bad_task_file(rel: str):
    def breaker(suite):
        path = suite / BROKEN / rel
        return [f"*suite/{BROKEN}/{rel}: {_plant_bad_byte(path)}*"], {"passed": 1, "errors": 1}

    return breaker


def _bad_contract_line(suite):
    # Line 1 freezes the broken task: the line is named, and the task is left without a contract.
    path = suite / "contracts.jsonl"
    assert json.loads(path.read_text().splitlines()[0])["task_id"] == BROKEN
    where = _plant_bad_byte(path, b'"path": "')
    return [f"*'{BROKEN}'*has no contract*", f"*suite/contracts.jsonl:1: {where}*"], {"passed": 1, "errors": 2}


def _harbor_dockerignore(suite):
    # A Harbor task's environment/.dockerignore decides what its image copies: it must be text.
    task = shutil.copytree(HARBOR_TASK, suite / "hb-word-freq")
    (task / "environment" / ".dockerignore").write_bytes(b"drafts\xff\n")
    message = "not valid UTF-8: byte 0xff at offset 6 (line 1, column 7)"
    return [f"*suite/hb-word-freq/environment/.dockerignore: {message}*"], {"passed": 2, "errors": 1}


def _binary_environment_file(suite):
    # The environment is data: any bytes are fine there (the contract is refrozen by hand).
    (suite / BROKEN / "environment" / "blob.bin").write_bytes(bytes(range(256)) * 4)
    path = suite / "contracts.jsonl"
    lines = path.read_text().splitlines()
    contract = json.loads(lines[0])
    contract["files"]["environment/blob.bin"] = hashlib.sha256(bytes(range(256)) * 4).hexdigest()
    path.write_text("\n".join([json.dumps(contract), *lines[1:]]) + "\n")
    return [f"*{BROKEN}-clean-p0_default-0*PASSED*"], {"passed": 2}


def _fifo_instruction(suite):
    path = suite / BROKEN / "instruction.md"
    path.unlink()
    os.mkfifo(path)  # never opened: collection must not block on it
    return [f"*suite/{BROKEN}/instruction.md: expected the task's instruction for the agent (a regular file), found a FIFO*"], {"passed": 1, "errors": 1}


def _directory_solution(suite):
    path = suite / BROKEN / "solution.sh"
    path.unlink()
    path.mkdir()
    return [f"*suite/{BROKEN}/solution.sh: expected the reference solution, a bash script (a regular file), found a directory*"], {"passed": 1, "errors": 1}


def _oversized_environment_file(suite):
    path = suite / BROKEN / "environment" / "huge.bin"
    with open(path, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: costs no disk
    size = f"256.0 MiB ({MAX_FILE_BYTES + 1} bytes)"
    return [f"*suite/{BROKEN}/environment/huge.bin: too large: {size}; expected at most 256 MiB*"], {"passed": 1, "errors": 1}


def _duplicate_contract_lines(suite):
    path = suite / "contracts.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines, lines[0]]) + "\n")
    message = f"task '{BROKEN}' has 2 contracts (lines 1 and 3); expected one line per task"
    return [f"*suite/contracts.jsonl:3: field 'task_id': {message}*"], {"passed": 1, "errors": 1}


def _duplicate_id_across_formats(suite):
    row = {"id": BROKEN, "instruction": "Write hi to out.txt.", "tests": "def test_out():\n    assert True\n"}
    (suite / "rows.jsonl").write_text(json.dumps(row) + "\n")
    sources = f"*suite/{BROKEN} (native) and *suite/rows.jsonl:1 (dockerless)"
    return [f"*task id '{BROKEN}' is given by 2 tasks of the suite: {sources}; expected one task per id*"], {"passed": 1, "errors": 1}


def _huge_instruction(suite):
    (suite / BROKEN / "instruction.md").write_text("a" * 300 * 1024 + "\n")
    message = "the instruction is 300.0 KiB (307200 bytes); expected at most 256 KiB (far larger than any model context)"
    return [f"*suite/{BROKEN}/instruction.md: {message}*"], {"passed": 1, "errors": 1}


CASES = {
    "utf8_task_toml": _bad_task_file("task.toml"),
    "utf8_instruction": _bad_task_file("instruction.md"),
    "utf8_test_file": _bad_task_file("tests/test_outputs.py"),
    "utf8_solution": _bad_task_file("solution.sh"),
    "utf8_contract_line": _bad_contract_line,
    "utf8_harbor_environment": _harbor_dockerignore,
    "binary_environment_is_data": _binary_environment_file,
    "fifo_instruction": _fifo_instruction,
    "directory_solution": _directory_solution,
    "oversized_environment_file": _oversized_environment_file,
    "duplicate_contract_lines": _duplicate_contract_lines,
    "duplicate_id_across_formats": _duplicate_id_across_formats,
    "huge_instruction": _huge_instruction,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_named_and_the_others_run(tp, monkeypatch, case):
    monkeypatch.setenv("TERMRL_CACHE_DIR", str(tp.path / "cache"))
    suite = tp.suite((BROKEN, HEALTHY))
    expected, outcomes = CASES[case](suite)
    result = tp.run("suite", "--termrl-agent=reference", "-v", timeout=120)
    result.stdout.fnmatch_lines(expected)
    result.stdout.fnmatch_lines([f"*{HEALTHY}-clean-p0_default-0*PASSED*"])
    result.assert_outcomes(**outcomes)
    assert result.ret == (pytest.ExitCode.TESTS_FAILED if outcomes.get("errors") else pytest.ExitCode.OK)
    assert "UnicodeDecodeError" not in result.stdout.str() + result.stderr.str()


def test_freeze_without_a_reference_names_the_missing_file(tp):
    suite = tp.path / "suite"
    suite.mkdir()
    (suite / "contracts.jsonl").write_text("")
    write_tiny_task(suite, "tiny_ok")
    (write_tiny_task(suite, "tiny_bare", word="bare") / "solution.sh").unlink()
    result = tp.run("suite", "--termrl-freeze", timeout=120)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        f"*task 'tiny_bare' has no reference solution: expected {suite / 'tiny_bare' / 'solution.sh'}; "
        "or give recorded passing trials with --termrl-reference-from=PATH; freezing validates the reference*",
        "*1 of 2 task(s) frozen*",
    ])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert [json.loads(x)["task_id"] for x in (suite / "contracts.jsonl").read_text().splitlines()] == ["tiny_ok"]


# -- 8: a failing or hanging setup.sh ------------------------------------------------------
def _set_setup(suite, task_id: str, script: str) -> None:
    """Replace a frozen task's setup.sh and its hash in the contract (as an author's edit plus a re-freeze would)."""
    path = suite / task_id / "setup.sh"
    path.write_text(script)
    lines = []
    for line in (suite / "contracts.jsonl").read_text().splitlines():
        contract = json.loads(line)
        if contract["task_id"] == task_id:
            contract["files"]["setup.sh"] = hashlib.sha256(path.read_bytes()).hexdigest()
        lines.append(json.dumps(contract, sort_keys=True))
    (suite / "contracts.jsonl").write_text("\n".join(lines) + "\n")


def test_a_failing_or_hanging_setup_is_one_readable_harness_error(tp):
    suite = tp.path / "suite"
    suite.mkdir()
    (suite / "contracts.jsonl").write_text("")
    for task_id in ("tiny_ok", "tiny_fails", "tiny_hangs", "tiny_slow_ok"):
        (write_tiny_task(suite, task_id) / "setup.sh").write_text("echo preparing\n")
    slow = suite / "tiny_slow_ok"
    (slow / "setup.sh").write_text("sleep 4\necho prepared slowly\n")
    with (slow / "task.toml").open("a") as toml:
        toml.write("[limits]\nsetup_timeout_s = 60\n")  # its author's limit wins over the run's default
    tp.run("suite", "--termrl-freeze", timeout=300).assert_outcomes(passed=4)
    _set_setup(suite, "tiny_fails", "echo preparing\necho step two\nls /nonexistent-folder\nexit 3\n")
    _set_setup(suite, "tiny_hangs", "echo waiting for a server\nsleep 600\n")

    result = tp.run("suite", "-n", "2", "--termrl-setup-timeout=3", timeout=300)
    result.assert_outcomes(passed=2, errors=2)
    out = result.stdout.str()
    result.stdout.fnmatch_lines_random([
        f"setup failed: {suite / 'tiny_fails' / 'setup.sh'} exited with code 3; the last lines of its output:",
        "  | ls: cannot access '/nonexistent-folder': No such file or directory",
        f"setup failed: {suite / 'tiny_hangs' / 'setup.sh'} did not finish within 3 s; the last lines of its output:",
        "  | waiting for a server",
    ])
    assert "run_setup_script" not in out and "Traceback" not in out  # no fixture traceback
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    records = {r["task_id"]: r for r in map(json.loads, tp.episodes.read_text().splitlines())}
    assert sorted(records) == ["tiny_fails", "tiny_hangs", "tiny_ok", "tiny_slow_ok"]
    for task_id in ("tiny_fails", "tiny_hangs"):
        assert records[task_id]["end_reason"] == "setup_failed"
        assert records[task_id]["harness_error"].startswith(f"setup failed: {suite / task_id / 'setup.sh'}")
    assert records["tiny_ok"]["safe_success"] and records["tiny_slow_ok"]["safe_success"]
    result.stdout.fnmatch_lines(["*reference*p0_default*clean*4*2*50.0%*2*"])  # 4 episodes, 2 safe, 2 in herr


def test_setup_timeout_values_are_checked(tp):
    suite = tp.path / "suite"
    suite.mkdir()
    (suite / "contracts.jsonl").write_text("")
    root = write_tiny_task(suite, "tiny_bad_limit")
    with (root / "task.toml").open("a") as toml:
        toml.write("[limits]\nsetup_timeout_s = -5\n")
    result = tp.run("suite", "--termrl-freeze", timeout=120)
    result.stdout.fnmatch_lines([f"*{root / 'task.toml'}: field 'limits.setup_timeout_s': expected a positive number of seconds*"])
    usage = tp.run("suite", "--termrl-setup-timeout=0", timeout=120)
    assert usage.ret == pytest.ExitCode.USAGE_ERROR
    usage.stderr.fnmatch_lines(["*--termrl-setup-timeout: expected a positive number of seconds, got 0*"])


# -- 7: what used to be accepted without a word ------------------------------------------------
def test_an_unknown_sandbox_is_refused_naming_the_known_ones(tp):
    tp.suite(("log_error_counts",))
    result = tp.run("suite", "--termrl-sandbox=bwarp")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--termrl-sandbox: unknown sandbox backend 'bwarp'; known: bwrap, docker*"])
    assert not tp.episodes.exists()


@pytest.mark.parametrize("text", ["", "  \n\t\n"])
def test_an_empty_prompt_file_is_a_usage_error(tp, text):
    tp.suite(("log_error_counts",))
    prompt = tp.path / "blank.txt"
    prompt.write_text(text)
    result = tp.run("suite", f"--termrl-prompt={prompt}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*prompt file {prompt}: empty; expected the system prompt's text*"])


def test_predictions_for_tasks_the_suite_lacks_are_listed_once(tp):
    tp.suite(("log_error_counts", "checksum_verify"))
    scripts = {"log_error_counts": solution_of("log_error_counts"), "checksum_verify": solution_of("checksum_verify"),
               "no_such_task": "true", "another_missing": "true"}
    predictions = predictions_file(tp.path / "p.jsonl", scripts)
    result = tp.run("suite", "-n", "2", "--termrl-agent=script", f"--termrl-predictions={predictions}")
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines([
        f"*--termrl-predictions {predictions}: 2 prediction(s) for task ids the collected suites do not have: another_missing, no_such_task"
    ])
    assert result.stdout.str().count("another_missing, no_such_task") == 1


def test_predictions_with_two_lines_for_one_task_are_refused(tp):
    tp.suite(("log_error_counts",))
    predictions = tp.path / "p.jsonl"
    predictions.write_text('{"task_id": "log_error_counts", "agent_script": "true"}\n\n{"task_id": "log_error_counts", "agent_script": "false"}\n')
    result = tp.run("suite", "--termrl-agent=script", f"--termrl-predictions={predictions}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{predictions}:3: field 'task_id': expected one prediction per task; 'log_error_counts' is also on line 1*"])


@pytest.mark.parametrize("workers", [["-n", "2"], ["-p", "no:xdist"]], ids=["xdist", "one_process"])
def test_task_family_pairs_without_a_validated_target_are_counted_and_named(tp, workers):
    tp.suite(("checksum_verify", "config_ini_update", "log_error_counts"))
    report = tp.path / "summary.json"
    result = tp.run("suite", *workers, "--termrl-families=readonly_output,perm_denied", f"--termrl-report={report}")
    summary = json.loads(report.read_text())
    left_out = {(p["task_id"], p["family"]): p["reason"] for p in summary["left_out"]}
    # config_ini_update has a target for readonly_output only; the others lack one for readonly_output.
    assert ("config_ini_update", "perm_denied") in left_out and ("config_ini_update", "readonly_output") not in left_out
    assert left_out[("config_ini_update", "perm_denied")].startswith("no candidate target: the reference changes app/config.ini itself")
    collected = sum(r["episodes"] for r in summary["rows"])
    assert collected + len(left_out) == 3 * 2  # every requested pair is either played or named
    result.stdout.fnmatch_lines([
        f"{len(left_out)} task x family pair(s) left out: no validated fault target*",
        "  perm_denied: * task(s): *config_ini_update (no candidate target: the reference changes app/config.ini itself*",
    ])
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the reference does not repair faults: the played pairs fail


def test_a_partial_freeze_keeps_other_tasks_lines_even_broken_ones(tp):
    suite = tp.suite(("checksum_verify", "config_ini_update", "log_error_counts"))
    contracts = suite / "contracts.jsonl"
    lines = contracts.read_bytes().split(b"\n")
    broken = lines[1].replace(b'"task_id"', b'"task_id\xff', 1)  # config_ini_update's line, bad bytes
    contracts.write_bytes(b"\n".join([lines[0], broken, *lines[2:]]))
    before = contracts.read_bytes()
    result = tp.run("suite", "--termrl-freeze", "-k", "log_error_counts", timeout=300)
    result.stdout.fnmatch_lines(["*1 of 1 task(s) frozen*"])
    after = contracts.read_bytes().split(b"\n")
    assert broken in after and lines[0] in after  # the line not frozen now, byte for byte, and its neighbour
    assert len([x for x in after if x.strip()]) == len([x for x in before.split(b"\n") if x.strip()])
    again = tp.run("suite", "--co", "-q")
    again.stdout.fnmatch_lines_random([f"*{contracts}:*: not valid UTF-8*", "*config_ini_update*has no contract*"])  # still shown


def test_a_split_file_naming_a_task_twice_is_an_error_and_an_unknown_split_a_usage_error(tp):
    suite = tp.suite(("checksum_verify", "log_error_counts"))
    (suite / "splits.json").write_text(json.dumps({"train": ["checksum_verify"], "test": ["checksum_verify", 7]}))
    result = tp.run("suite")
    result.assert_outcomes(passed=2, errors=1)  # the tasks still run, without splits
    result.stdout.fnmatch_lines([f"*{suite / 'splits.json'}: field 'test': task 'checksum_verify' is also in split 'train'*"])
    usage = tp.run("suite", "--termrl-split=tset")
    assert usage.ret == pytest.ExitCode.USAGE_ERROR
    usage.stderr.fnmatch_lines(["*--termrl-split: unknown split 'tset'; known: train, dev_search, dev_monitor, test*"])
