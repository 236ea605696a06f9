"""ATIF tool calls classified by the tool names Harbor's agents write, observations matched, versions checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_termrl.trajectories.atif import ATIF_VERSIONS, calls_of, classify, parse_atif, read_atif
from pytest_termrl.trajectories.model import CallKind, RecordedTrial, Skipped

DATA = Path(__file__).resolve().parents[2] / "data" / "trajectories"


@pytest.mark.parametrize(("name", "arguments", "kind", "command"), [
    ("bash_command", {"command": "ls -la"}, CallKind.BASH, "ls -la"),  # Harbor's mini-swe-agent converter
    ("Bash", {"command": "wc -w f", "description": "count"}, CallKind.BASH, "wc -w f"),  # Claude Code
    ("execute_bash", {"command": "make", "is_input": "false"}, CallKind.BASH, "make"),  # OpenHands
    ("exec_command", {"cmd": "git status", "workdir": "/app"}, CallKind.BASH, "git status"),  # Codex
    ("shell", {"command": ["bash", "-lc", "echo hi > f"]}, CallKind.BASH, "echo hi > f"),  # Codex, argv form
    ("shell", {"command": ["ls", "-l", "my dir"]}, CallKind.BASH, "ls -l 'my dir'"),
    ("run_shell_command", {"command": "pwd"}, CallKind.BASH, "pwd"),  # Gemini CLI
    ("bash", '{"command": "echo from a JSON string"}', CallKind.BASH, "echo from a JSON string"),
    ("mark_task_complete", {}, CallKind.DONE, None),  # Terminus 2
    ("task_complete", {}, CallKind.DONE, None),
    ("finish", {"message": "done"}, CallKind.DONE, None),  # OpenHands
    ("str_replace_editor", {"command": "create", "path": "/app/f"}, CallKind.UNKNOWN, None),
    ("bash", {"description": "no command"}, CallKind.UNKNOWN, None),
])
def test_a_tool_call_is_classified_by_its_name_and_arguments(name, arguments, kind, command):
    call = classify(4, {"tool_call_id": "c1", "function_name": name, "arguments": arguments})
    assert (call.step, call.call_id, call.kind, call.command, call.function_name) == (4, "c1", kind, command, name)
    assert call.arguments == (arguments if kind is CallKind.UNKNOWN else {})


@pytest.mark.parametrize(("arguments", "keys", "duration"), [
    ({"keystrokes": "ls -la\n", "duration": 0.1}, ("ls -la\n",), 0.1),
    ({"keystrokes": "C-c", "duration": 1}, ("C-c",), 1.0),
    ({"keystrokes": "", "duration": 3.0}, (), 3.0),  # Terminus waiting for output: no key, only the wait
    ({"keystrokes": "cat > f << 'EOF'\nline\n"}, ("cat > f << 'EOF'\nline\n",), None),
    ({"keys": ["python3", "Enter"], "wait_s": 0.5}, ("python3", "Enter"), 0.5),
])
def test_keystrokes_are_one_tmux_argument_with_the_recorded_wait(arguments, keys, duration):
    call = classify(2, {"tool_call_id": "call_0_1", "function_name": "bash_command", "arguments": arguments})
    assert (call.kind, call.keys, call.duration_s, call.command) == (CallKind.KEYS, keys, duration, None)


def test_observations_follow_their_source_call_id_and_terminus_screens_go_to_the_last_keys():
    steps = [
        {"step_id": 2, "source": "agent", "message": "",
         "tool_calls": [{"tool_call_id": "a", "function_name": "bash", "arguments": {"command": "one"}},
                        {"tool_call_id": "b", "function_name": "bash", "arguments": {"command": "two"}}],
         "observation": {"results": [{"source_call_id": "b", "content": "2"}, {"source_call_id": "a", "content": "1"}]}},
        {"step_id": 3, "source": "agent", "message": "",
         "tool_calls": [{"tool_call_id": "call_1_1", "function_name": "bash_command", "arguments": {"keystrokes": "C-c"}},
                        {"tool_call_id": "call_1_2", "function_name": "bash_command", "arguments": {"keystrokes": "ls\n"}},
                        {"tool_call_id": "call_1_task_complete", "function_name": "mark_task_complete", "arguments": {}}],
         "observation": {"results": [{"content": [{"type": "text", "text": "$ ls\n"}, {"type": "image"}, {"type": "text", "text": "f\n"}]}]}},
        {"step_id": 4, "source": "agent", "message": "",
         "tool_calls": [{"tool_call_id": "call_2_task_complete", "function_name": "mark_task_complete", "arguments": {}}],
         "observation": {"results": [{"content": "Are you sure?"}]}},
    ]
    assert [(c.call_id, c.observation) for c in calls_of(steps)] == [
        ("a", "1"), ("b", "2"), ("call_1_1", None), ("call_1_2", "$ ls\nf\n"), ("call_1_task_complete", None),
        ("call_2_task_complete", "Are you sure?"),
    ]


@pytest.mark.parametrize("version", ATIF_VERSIONS)
def test_every_version_from_1_0_to_1_7_is_read(version, tmp_path):
    data = {"schema_version": version, "session_id": "s1", "agent": {"name": "a", "version": "1"},
            "steps": [{"step_id": 1, "source": "user", "message": "do it"}]}
    read = parse_atif(data, tmp_path / "trajectory.json")
    assert isinstance(read, RecordedTrial)
    assert (read.trial, read.instruction, read.calls) == ("s1", "do it", [])


@pytest.mark.parametrize(("version", "reason"), [
    ("ATIF-v2.0", "unknown ATIF version ATIF-v2.0 in {f}; expected ATIF-v1.0 .. ATIF-v1.7"),
    ("ATIF-v1.8", "unknown ATIF version ATIF-v1.8 in {f}; expected ATIF-v1.0 .. ATIF-v1.7"),
    ("1.4", "unknown ATIF version 1.4 in {f}; expected ATIF-v1.0 .. ATIF-v1.7"),
    (None, "no schema_version in {f}; expected an ATIF trajectory (ATIF-v1.0 .. ATIF-v1.7)"),
])
def test_another_version_is_refused_naming_the_file(version, reason, tmp_path):
    f = tmp_path / "trajectory.json"
    f.write_text(json.dumps({"schema_version": version, "steps": []}))
    assert read_atif(f) == Skipped(str(f), reason.format(f=f))


def test_a_lone_atif_file_is_a_trial_of_no_known_task():
    trial = read_atif(DATA / "lone-trajectory.json")
    assert isinstance(trial, RecordedTrial)
    assert (trial.trial, trial.format, trial.task_name, trial.recorded_reward) == ("lone-3c4d5e6f", "atif", None, None)
    assert (trial.agent, trial.model) == ("mini-swe-agent", "openai/gpt-5-mini")
    assert trial.instruction == "Count the words in /app/input.txt and write the number alone to /app/count.txt."
    assert [(c.kind, c.command, c.observation) for c in trial.calls] == [
        ("bash", "wc -w < /app/input.txt > /app/count.txt", "<returncode>0</returncode>\n<output>\n</output>"),
        ("bash", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", None),
    ]


def test_a_file_that_is_not_a_trajectory_is_skipped(tmp_path):
    f = tmp_path / "trajectory.json"
    f.write_text('{"schema_version": "ATIF-v1.5", "steps": {"1": {}}}')
    assert read_atif(f) == Skipped(str(f), f"{f}: no list of step objects under 'steps'; expected an ATIF trajectory (ATIF-v1.0 .. ATIF-v1.7)")
    f.write_text("[1, 2]")
    assert read_atif(f) == Skipped(str(f), f"{f}: a JSON list, not an object; expected an ATIF trajectory (ATIF-v1.0 .. ATIF-v1.7)")
