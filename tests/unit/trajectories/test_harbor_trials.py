"""A Harbor trial folder read: its task, reward and exception from result.json, task path from config.json, calls from ATIF."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_termrl.trajectories.harbor_job import exception_line, read_trial, recorded_reward
from pytest_termrl.trajectories.model import RecordedTrial, Skipped

JOB = Path(__file__).resolve().parents[2] / "data" / "trajectories" / "job-demo"


def _trial(name: str) -> RecordedTrial:
    trial = read_trial(JOB / name)
    assert isinstance(trial, RecordedTrial), trial
    return trial


def test_a_terminus_heredoc_typed_over_several_calls_is_kept_call_by_call():
    trial = _trial("make-config__Ab3dE7q")
    assert (trial.trial, trial.task_name, trial.task_path, trial.format) == ("make-config__Ab3dE7q", "make-config", "tasks/make-config", "harbor-trial")
    assert (trial.recorded_reward, trial.rewards, trial.exception) == (1.0, {"reward": 1.0}, None)
    assert (trial.agent, trial.model) == ("terminus-2", "openai/gpt-5-mini")
    assert trial.instruction is not None and "Write /app/config.ini with a [server] section" in trial.instruction
    assert [(c.step, c.kind, c.keys, c.duration_s) for c in trial.calls] == [
        (2, "keys", ("cat > /app/config.ini << 'EOF'\n",), 0.1),
        (2, "keys", ("[server]\n",), 0.1),
        (3, "keys", ("port = 8080\nhost = 127.0.0.1\n",), 0.1),
        (3, "keys", ("EOF\n",), 0.1),
        (3, "keys", ("cat /app/config.ini\n",), 0.1),
        (4, "done", (), None),
        (5, "done", (), None),
    ]
    screens = [c.observation for c in trial.calls]
    assert screens[0] is None and screens[1].endswith("> [server]\n> ")
    assert screens[4].endswith("[server]\nport = 8080\nhost = 127.0.0.1\nroot@c0ffee:/app# ")
    assert "Are you sure you want to mark the task as complete?" in screens[5]


def test_ctrl_c_on_a_hanging_command_is_its_own_key_and_an_empty_keystroke_only_waits():
    trial = _trial("fix-server__Kx8mN2p")
    assert trial.recorded_reward == 0.0
    assert [(c.keys, c.duration_s) for c in trial.calls if c.kind == "keys"] == [
        (("python3 /app/server.py\n",), 5.0), (("C-c",), 0.5), (("sed -i 's/8000/8080/' /app/server.py\n",), 0.1),
        (("python3 /app/server.py &\n",), 1.0), ((), 3.0),
    ]
    assert trial.calls[0].observation.endswith("Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ...\n")
    assert "^C\nKeyboard interrupt received" in trial.calls[2].observation  # an ATIF-v1.6 list of content parts


def test_a_python_repl_session_is_typed_line_by_line():
    trial = _trial("make-config__Qw4rT9z")
    typed = [c.keys[0] for c in trial.calls if c.kind == "keys"]
    assert typed == ["python3\n", "import configparser\n", "c = configparser.ConfigParser()\n",
                     "c['server'] = {'port': '8080', 'host': '127.0.0.1'}\n", "with open('/app/config.ini', 'w') as f:\n",
                     "    c.write(f)\n", "\n", "exit()\n", "cat /app/config.ini\n"]
    assert trial.calls[0].observation.endswith(">>> ")


def test_plain_bash_tool_calls_with_their_own_results():
    trial = _trial("count-words__Zp2sL5v")
    assert (trial.agent, trial.model, trial.instruction) == (
        "claude-code", "anthropic/claude-sonnet-4-5-20250929",
        "Count the words in /app/input.txt and write the number alone to /app/count.txt.")
    assert [(c.kind, c.command, c.observation) for c in trial.calls] == [
        ("unknown", None, "     1\tthe quick brown fox\n     2\tjumps over the lazy dog\n"),
        ("bash", "wc -w < /app/input.txt", "9"),
        ("bash", "wc -w < /app/input.txt > /app/count.txt && cat /app/count.txt", "9"),
    ]
    assert trial.calls[0].arguments == {"file_path": "/app/input.txt"} and trial.calls[0].function_name == "Read"


def test_the_reward_comes_from_verifier_reward_txt_when_result_json_has_none():
    trial = _trial("count-words__Rr3eW6y")
    assert (trial.recorded_reward, trial.rewards) == (1.0, {"reward": 1.0})
    assert [c.kind for c in trial.calls] == ["bash", "unknown", "done"]


@pytest.mark.parametrize(("name", "file", "reason"), [
    ("count-words__Hh7jK1m", "result.json",
     "the trial ended in AgentTimeoutError: Agent execution timed out after 900.0 seconds and has no reward; "
     "expected a graded trial (verifier_result.rewards or verifier/reward.txt)"),
    ("fix-server__Tr5uN8c", "agent/trajectory.json", "truncated JSON ("),
    ("make-config__Mm0pQ4s", "agent/trajectory.json", "missing; expected an ATIF trajectory (ATIF-v1.0 .. ATIF-v1.7)"),
])
def test_a_trial_that_cannot_be_replayed_is_one_skipped_line_naming_its_file(name, file, reason):
    skipped = read_trial(JOB / name)
    assert isinstance(skipped, Skipped)
    assert skipped.path == str(JOB / name / file)
    assert skipped.reason.startswith(f"{JOB / name / file}: {reason}")
    assert "\n" not in skipped.reason


def test_a_trial_with_an_exception_and_a_reward_is_read_with_its_exception(tmp_path):
    folder = tmp_path / "t"
    shutil.copytree(JOB / "fix-server__Kx8mN2p", folder)
    result = json.loads((folder / "result.json").read_text())
    result["exception_info"] = {"exception_type": "AgentTimeoutError", "exception_message": "timed out\nafter 900 s"}
    (folder / "result.json").write_text(json.dumps(result))
    (folder / "config.json").unlink()
    trial = read_trial(folder)
    assert isinstance(trial, RecordedTrial)
    assert (trial.exception, trial.recorded_reward, trial.task_path) == ("AgentTimeoutError: timed out after 900 s", 0.0, None)


def test_a_broken_config_json_is_skipped_naming_it(tmp_path):
    folder = tmp_path / "t"
    shutil.copytree(JOB / "make-config__Ab3dE7q", folder)
    (folder / "config.json").write_text('{"task": {"path": ')
    assert read_trial(folder) == Skipped(str(folder / "config.json"), f"{folder / 'config.json'}: truncated JSON (Expecting value: line 1 column 19); expected Harbor's TrialConfig (task.path, trial_name, agent)")


@pytest.mark.parametrize(("rewards", "expected"), [
    ({"reward": 0.5, "accuracy": 1.0}, 0.5), ({"accuracy": 1}, 1.0), ({"a": 1.0, "b": 0.0}, None), ({}, None),
    ({"reward": None}, None), ({"reward": True}, None),
])
def test_the_recorded_reward_is_reward_else_the_single_value(rewards, expected):
    assert recorded_reward(rewards) == expected


def test_an_exception_is_one_line():
    assert exception_line(None) is None
    assert exception_line({"exception_type": "RuntimeError", "exception_message": ""}) == "RuntimeError"
