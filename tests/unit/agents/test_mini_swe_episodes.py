"""The mini-swe-agent agent in real bwrap sandboxes against a real HTTP chat server: every way its run ends.

Each test plays a real core task through the harness (the episode loop, the oracle, the hidden
tests) with mini-swe-agent's own loop in its thread, and checks the end reason, what the record
keeps, and that the thread is gone when the episode is over.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from chat_server import DEFAULT_MODEL, ChatServer  # noqa: E402

from minisweagent.config import get_config_from_spec  # noqa: E402

from pytest_termrl.agents import AGENTS, needs_model  # noqa: E402
from pytest_termrl.agents.base import EpisodeLimits, Observation  # noqa: E402
from pytest_termrl.agents.mini_swe_agent import MiniSweAgent  # noqa: E402
from pytest_termrl.agents.mini_swe_env import observation_output  # noqa: E402
from pytest_termrl.harness import default_harness  # noqa: E402
from pytest_termrl.serving.model_run import make_openai_agent  # noqa: E402
from pytest_termrl.settings import ModelOptions  # noqa: E402
from pytest_termrl.tasks.suite import load_suite  # noqa: E402

from conftest import CORE_CONTRACTS  # noqa: E402

MINI = get_config_from_spec("mini.yaml")
TASK = "log_error_counts"
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
THREAD = "termrl-mini-swe-agent"


@pytest.fixture(scope="module")
def loaded():
    return load_suite(CORE_CONTRACTS).by_id(TASK)



@pytest.fixture
def play(loaded):
    """Play the task once with a fresh MiniSweAgent against ``server``: (outcome, record dict, agent)."""
    harnesses = []

    def _play(server: ChatServer, limits: EpisodeLimits | None = None, **agent_kwargs):
        harness = default_harness(limits=limits)
        harnesses.append(harness)
        agent_kwargs.setdefault("backoff_s", 0.01)
        agent_kwargs.setdefault("backoff_max_s", 0.05)
        agent = MiniSweAgent(server.base_url, DEFAULT_MODEL, **agent_kwargs)
        outcome = harness.play_fresh(loaded, agent, "mini").outcome
        assert not [t for t in threading.enumerate() if t.name == THREAD], "the agent's thread outlived the episode"
        return outcome, json.loads(json.dumps(outcome.to_record().to_dict())), agent

    yield _play
    for harness in harnesses:
        harness.backend.close()


def exit_of(record: dict) -> dict:
    [trajectory] = record["mini_swe_agent"]
    last = trajectory["messages"][-1]
    assert last["role"] == "exit"
    return last["extra"]


def test_the_registry_and_the_endpoint_options_make_it():
    assert AGENTS["mini-swe-agent"] is MiniSweAgent and needs_model("mini-swe-agent")
    options = ModelOptions(base_url="http://127.0.0.1:9/v1", model="m", api_key="k", temperature=0.5, seed=7)
    agent = make_openai_agent(options, "http://127.0.0.1:9/v1", None, "mini-swe-agent")
    assert isinstance(agent, MiniSweAgent) and agent.model == "m" and agent.temperature == 0.5 and agent.seed == 7
    assert agent.base_url == "http://127.0.0.1:9/v1" and agent.client.api_key == "k"
    agent.close()
    with pytest.raises(ValueError, match="no terminal session"):
        MiniSweAgent("http://127.0.0.1:9/v1", "m", terminal=True)


def test_an_observation_reads_as_mini_swe_agent_environments_report_a_command():
    assert observation_output(Observation("hi\n", 0)) == {"output": "hi\n", "returncode": 0, "exception_info": ""}
    late = observation_output(Observation("part", None, timed_out=True, commands_left=2, note="budget nearly spent"))
    assert late["returncode"] == -1 and "timed out" in late["exception_info"]
    assert late["output"] == "part\n[commands left: 2]\n[budget nearly spent]\n"


def test_it_solves_the_task_and_retries_a_flaky_server(play, serve, loaded):
    server = serve("flaky", failures=2, commands=[loaded.task.solution_text(), SUBMIT])
    outcome, record, agent = play(server)
    assert outcome.safe_success and record["end_reason"] == "agent_done" and record["harness_error"] is None
    assert [c["command"] for c in record["commands"]] == [loaded.task.solution_text(), SUBMIT]
    assert len(server.chat_requests) == 2 + 2 and len(agent.usage.turns) == 2
    assert agent.usage.turns[0]["attempts"] == 3
    assert exit_of(record)["exit_status"] == "Submitted"


def test_every_tool_call_of_a_reply_runs_as_a_command_in_order(play, serve):
    server = serve("multi_call", commands=["echo first", SUBMIT])
    outcome, record, _ = play(server)
    # mini-swe-agent runs every action of a reply; the submit ends its run before the second action of that reply.
    assert [c["command"] for c in record["commands"]] == ["echo first", "echo second", SUBMIT]
    assert record["end_reason"] == "agent_done" and record["tool_calls"] == 4
    transcript = record["transcript"]
    tools = [m for m in transcript if m["role"] == "tool"]
    assert [json.loads(m["content"])["output"] for m in tools[:3]] == ["first\n", "second\n", "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n"]
    assert tools[3]["content"] == "[the command was not run: the episode ended]"


def test_malformed_replies_end_as_mini_swe_agent_gives_up_on_them(play, serve):
    server = serve("malformed", kinds=["unknown_tool"])
    outcome, record, agent = play(server)
    assert record["end_reason"] == "malformed_tool_call" and record["harness_error"] is None
    assert record["commands_used"] == 0 and agent.usage.malformed_tool_calls == 3
    assert exit_of(record)["exit_status"] == "RepeatedFormatError"
    # Its own format-error messages went back to the model, as the user (a rejected reply is not kept).
    errors = [m["content"] for m in record["transcript"][2:]]
    assert len(errors) == 3 and all(e.startswith("Tool call error:") and "Unknown tool 'python'" in e for e in errors)
    assert [len(body["messages"]) for body in server.chat_requests] == [2, 3, 4]


def test_the_token_limit_ends_the_run(play, serve):
    server = serve("token_hog")
    outcome, record, _ = play(server)
    assert record["end_reason"] == "token_limit" and record["harness_error"] is None
    # 3000 x (turn + 1) prompt and 2500 completion tokens a reply: the second passes the 8192 total.
    assert record["commands_used"] == 1 and record["tokens"]["total_tokens"] == 8500
    extra = exit_of(record)
    assert extra["exit_status"] == "EpisodeOver" and extra["end_reason"] == "token_limit"
    assert extra["response"]["tool_calls"][0]["function"]["arguments"] == json.dumps({"command": "echo hog"})


def test_a_server_error_is_the_episodes_harness_error(play, serve):
    server = serve("fail", status=400, message="scripted bad request")
    outcome, record, agent = play(server)
    assert record["end_reason"] == "server_error" and "HTTP 400" in record["harness_error"]
    assert record["verdict"] is not None  # graded all the same: only a crash of the harness skips grading
    assert exit_of(record)["error"] == record["harness_error"] == agent.error


def test_the_wall_clock_cuts_a_slow_server(play, serve):
    server = serve("slow", delay=1.0, commands=["echo one", "echo two", "echo three"])
    started = time.monotonic()
    outcome, record, _ = play(server, EpisodeLimits(wall_clock_s=1.6))
    assert time.monotonic() - started < 20
    assert record["end_reason"] == "timeout" and record["commands_used"] == 1
    assert "did not answer" in record["harness_error"]


def test_a_crash_of_mini_swe_agents_loop_is_a_harness_error(play, serve, tmp_path):
    broken = dict(MINI, agent={**MINI["agent"], "instance_template": "{{task}} on {{no_such_variable}}"})
    config = tmp_path / "broken.yaml"
    config.write_text(json.dumps(broken))  # JSON is YAML
    server = serve("never_stop")
    outcome, record, _ = play(server, config=str(config))
    assert record["end_reason"] == "harness_error" and record["commands_used"] == 0
    assert record["harness_error"].startswith("mini-swe-agent stopped on UndefinedError")
    assert not server.chat_requests


@pytest.mark.usefixtures("import_cache")
def test_each_step_of_a_multi_step_task_is_a_run_of_its_own(serve):
    from pytest_termrl.tasks.importers import load_task_dir
    from pytest_termrl.tasks.suite import LoadedTask

    task = load_task_dir(Path(__file__).resolve().parents[2] / "data" / "harbor_steps" / "hs-two-steps")
    before_task = MINI["agent"]["instance_template"].split("{{task}}")[0]
    server = serve("reference", tasks={before_task + step.instruction.splitlines()[0]: [step.solution_text(), SUBMIT]
                                       for step in task.steps})
    harness = default_harness()
    try:
        outcome = harness.play_fresh(LoadedTask(task, None), MiniSweAgent(server.base_url, DEFAULT_MODEL), "steps").outcome
    finally:
        harness.backend.close()
    assert not [t for t in threading.enumerate() if t.name == THREAD]
    assert outcome.safe_success, outcome.failure_text()
    assert [c.command for c in outcome.commands] == [task.steps[0].solution_text(), SUBMIT, task.steps[1].solution_text(), SUBMIT]
    record = outcome.to_record().to_dict()
    assert [t["info"]["exit_status"] for t in record["mini_swe_agent"]] == ["Submitted", "Submitted"]
    assert [m["role"] for m in record["transcript"]].count("system") == 2 and record["tool_calls"] == 4
