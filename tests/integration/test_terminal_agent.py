"""The openai agent types into the terminal session (send_keys) of a real sandbox, served by a real chat server."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from chat_server import DEFAULT_MODEL, ChatServer, make_policy  # noqa: E402
from conftest import write_tiny_task  # noqa: E402

from pytest_termrl.agents.openai_agent import OpenAIAgent  # noqa: E402
from pytest_termrl.tasks.native import load_native_task  # noqa: E402
from pytest_termrl.tasks.suite import LoadedTask  # noqa: E402

REPL = [["python3", "Enter"], ["open('/home/user/out.txt', 'w').write('hello\\n')", "Enter"], ["C-d"]]


@pytest.fixture
def task(tmp_path):
    return LoadedTask(load_native_task(write_tiny_task(tmp_path / "suite", "tiny")), None)


def _play(harness, task, terminal: bool):
    server = ChatServer(make_policy("keys", batches=REPL, wait_s=5)).start()
    try:
        agent = OpenAIAgent(server.base_url, DEFAULT_MODEL, terminal=terminal, request_timeout=10)
        played = harness.play_fresh(task, agent, "keys")
        return played.outcome, server.requests
    finally:
        server.stop()


def test_a_model_that_types_into_a_python_repl_solves_the_task(harness, task):
    outcome, requests = _play(harness, task, terminal=True)
    assert outcome.safe_success, outcome.failure_text()
    assert [tool["function"]["name"] for tool in requests[0]["tools"]] == ["bash", "send_keys"]
    record = outcome.to_record().to_dict()
    assert [c["keys"] for c in record["commands"]] == REPL
    assert record["commands"][0]["command"] == "python3<Enter>"
    screens = [m["content"] for m in record["transcript"] if m["role"] == "tool"]
    assert ">>>" in screens[0] and "[exit code" not in screens[0]
    assert "\x1b" not in "".join(screens)
    assert json.loads(record["transcript"][2]["tool_calls"][0]["function"]["arguments"])["keys"] == REPL[0]


def test_without_the_terminal_tool_the_call_is_refused_and_nothing_is_typed(harness, task):
    outcome, requests = _play(harness, task, terminal=False)
    assert not outcome.safe_success and outcome.commands == []
    assert [tool["function"]["name"] for tool in requests[0]["tools"]] == ["bash"]
    refusals = [m["content"] for m in outcome.transcript if m["role"] == "tool"]
    assert refusals and all("unknown tool 'send_keys'" in text for text in refusals)


def test_a_typed_episode_written_to_the_log_replays_to_the_same_verdict(harness, task, tmp_path):
    from pytest_termrl.agents.replay import ReplayAgent
    from pytest_termrl.trajectories.discover import read_recorded

    outcome, _ = _play(harness, task, terminal=True)
    log = tmp_path / "episodes.jsonl"
    log.write_text(json.dumps(outcome.to_record().to_dict()) + "\n")
    (trial,), skipped = read_recorded(log)
    assert skipped == [] and [c.keys for c in trial.calls] == [tuple(batch) for batch in REPL]
    replayed = harness.play_fresh(task, ReplayAgent(), "replayed", recorded=trial).outcome
    assert replayed.safe_success, replayed.failure_text()
    record = replayed.to_record().to_dict()
    assert [c["keys"] for c in record["commands"]] == REPL
    assert record["replay"]["divergences"] == []
