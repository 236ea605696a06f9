"""The OpenAI agent against a real HTTP chat server driven by scripted policies.

No sandbox: the tests play the episode loop themselves and hand the agent made-up
observations.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from chat_server import DEFAULT_MODEL  # noqa: E402

from pytest_termrl.agents.base import AgentContext, EpisodeLimits, Observation  # noqa: E402
from pytest_termrl.agents.openai_agent import (  # noqa: E402
    NOT_RUN,
    ONE_CALL_PER_TURN,
    OpenAIAgent,
    budget_sentence,
    parse_bash_call,
)



def make_agent(server_or_url, **kwargs) -> OpenAIAgent:
    url = server_or_url if isinstance(server_or_url, str) else server_or_url.base_url
    kwargs.setdefault("backoff_s", 0.01)
    kwargs.setdefault("backoff_max_s", 0.05)
    kwargs.setdefault("request_timeout", 10)
    return OpenAIAgent(url, DEFAULT_MODEL, **kwargs)


def context(**limits) -> AgentContext:
    return AgentContext(
        task_id="t1",
        instruction="Count the lines of data.csv and write the number to out.txt.",
        system_prompt="You are a terminal agent.",
        prompt_name="p0_default",
        limits=EpisodeLimits(**limits),
    )


def play(agent: OpenAIAgent, ctx: AgentContext, max_steps: int = 50):
    """Play the episode loop's part; returns (commands run, the final Turn)."""
    agent.start(ctx)
    commands, last = [], None
    for step in range(max_steps):
        turn = agent.next_turn(last)
        if turn.command is None:
            return commands, turn
        commands.append(turn.command)
        last = Observation(output=f"output {step} of {turn.command}", exit_code=0,
                           commands_left=None)
    raise AssertionError("the agent never stopped")


def assert_valid_chat(messages: list[dict]) -> None:
    """Roles in order and every tool_call_id answered once, right after its assistant message."""
    assert [m["role"] for m in messages[:2]] == ["system", "user"]
    i = 2
    while i < len(messages):
        m = messages[i]
        assert m["role"] == "assistant", (i, m)
        assert isinstance(m["content"], str)
        ids = [c["id"] for c in m.get("tool_calls", [])]
        for c in m.get("tool_calls", []):
            assert c["type"] == "function" and isinstance(c["function"]["arguments"], str)
        answered = []
        i += 1
        while i < len(messages) and messages[i]["role"] == "tool":
            answered.append(messages[i]["tool_call_id"])
            assert isinstance(messages[i]["content"], str)
            i += 1
        assert answered == ids, (ids, answered)
    all_ids = [c["id"] for m in messages for c in m.get("tool_calls", [])]
    assert len(all_ids) == len(set(all_ids)), all_ids
    json.loads(json.dumps(messages))  # plain data


# -- end reasons -----------------------------------------------------------------------------


def test_replay_runs_commands_then_stops_without_tool_call(serve):
    server = serve("replay", commands=["wc -l data.csv", "wc -l < data.csv > out.txt"])
    agent = make_agent(server)
    commands, turn = play(agent, context())
    assert commands == ["wc -l data.csv", "wc -l < data.csv > out.txt"]
    assert turn.end_reason == "no_tool_call" and agent.end_reason == "no_tool_call"
    assert turn.error is None
    assert agent.usage.tool_calls == 2 and agent.usage.malformed_tool_calls == 0
    assert len(agent.usage.turns) == 3 == len(server.chat_requests)
    assert agent.next_turn(None).end_reason == "no_tool_call"  # stays ended, asks nothing
    assert len(server.chat_requests) == 3
    agent.close()


def test_tool_results_are_the_observation_text(serve):
    server = serve("replay", commands=["sleep 100"])
    agent = make_agent(server)
    agent.start(context())
    assert agent.next_turn(None).command == "sleep 100"
    obs = Observation(output="partial\n", exit_code=None, timed_out=True, commands_left=3,
                      note="command budget nearly spent")
    assert agent.next_turn(obs).end_reason == "no_tool_call"
    tool = [m for m in agent.messages if m["role"] == "tool"]
    assert tool == [{"role": "tool", "tool_call_id": "call_0", "content": obs.as_tool_text()}]
    # the server saw the tool result in the next request
    assert server.chat_requests[1]["messages"][-1]["content"] == obs.as_tool_text()


def test_transcript_is_valid_chat_data(serve):
    server = serve("replay", commands=["ls", "cat data.csv", "echo 3 > out.txt"])
    agent = make_agent(server)
    play(agent, context())
    transcript = agent.transcript()
    assert_valid_chat(transcript)
    assert [m["role"] for m in transcript] == (
        ["system", "user"] + ["assistant", "tool"] * 3 + ["assistant"]
    )
    assert transcript[-1]["content"] == "Done."
    assert transcript == agent.messages


def test_tool_call_limit(serve):
    server = serve("never_stop")
    agent = make_agent(server)
    commands, turn = play(agent, context(max_tool_calls=3))
    assert commands == ["echo again"] * 3
    assert turn.end_reason == "tool_call_limit"
    assert len(server.chat_requests) == 3  # never asked for a fourth
    assert_valid_chat(agent.transcript())


def test_token_limit_on_generated_tokens(serve):
    server = serve("token_hog", prompt=100, completion_tokens=400)
    agent = make_agent(server)
    commands, turn = play(agent, context(max_generated_tokens=1000, max_total_tokens=100_000))
    # 400 + 400 = 800 generated: both commands run; the third reply pushes it to 1200.
    assert commands == ["echo hog", "echo hog"]
    assert turn.end_reason == "token_limit"
    assert agent.usage.completion_tokens == 1200
    # max_tokens is the generated budget that remains
    assert [r["max_tokens"] for r in server.chat_requests] == [1000, 600, 200]
    assert_valid_chat(agent.transcript())
    assert agent.transcript()[-1]["content"].startswith("[not run: the token limit")


def test_token_limit_on_total_context(serve):
    server = serve("token_hog", prompt=3000, completion_tokens=10)
    agent = make_agent(server)
    commands, turn = play(agent, context(max_generated_tokens=100_000, max_total_tokens=8192))
    # contexts 3010, 6010 fit; the third reply (9010) exceeds 8192
    assert commands == ["echo hog", "echo hog"]
    assert turn.end_reason == "token_limit"
    assert agent.usage.total_tokens == 9010
    assert agent.usage.prompt_tokens == 3000 + 6000 + 9000
    # max_tokens never asks for more than either budget has left
    assert [r["max_tokens"] for r in server.chat_requests] == [8192, 8192 - 3010, 8192 - 6010]


def test_reply_cut_off_at_max_tokens_is_a_token_limit(serve):
    server = serve("truncated")
    agent = make_agent(server)
    commands, turn = play(agent, context(max_generated_tokens=300))
    assert commands == [] and turn.end_reason == "token_limit"
    assert agent.usage.completion_tokens == 300
    assert server.chat_requests[0]["max_tokens"] == 300


def test_repeated_call_ids_are_made_unique(serve):
    server = serve("repeated_ids", commands=["ls", "pwd"])
    agent = make_agent(server)
    commands, _ = play(agent, context())
    assert commands == ["ls", "pwd"]
    transcript = agent.transcript()
    assert_valid_chat(transcript)
    ids = [m["tool_call_id"] for m in transcript if m["role"] == "tool"]
    assert len(set(ids)) == 2


def test_server_context_overflow_is_a_token_limit(serve):
    message = ("This model's maximum context length is 8192 tokens. However, you requested "
               "9000 tokens (3000 in the messages, 6000 in the completion).")
    server = serve("fail", status=400, message=message)
    agent = make_agent(server)
    _, turn = play(agent, context())
    assert turn.end_reason == "token_limit"
    assert turn.error is None  # not a harness error: the conversation outgrew the model
    assert "maximum context length" in agent.end_detail
    assert len(server.chat_requests) == 1


def test_token_limit_reached_exactly_stops_before_asking(serve):
    server = serve("token_hog", prompt=10, completion_tokens=500)
    agent = make_agent(server)
    commands, turn = play(agent, context(max_generated_tokens=1000))
    assert commands == ["echo hog", "echo hog"]
    assert turn.end_reason == "token_limit"
    assert len(server.chat_requests) == 2


def test_malformed_calls_are_answered_and_end_the_episode_at_the_limit(serve):
    server = serve("malformed")
    agent = make_agent(server)
    commands, turn = play(agent, context(max_tool_calls=3))
    assert commands == []
    assert turn.end_reason == "malformed_tool_call"
    assert agent.usage.malformed_tool_calls == 3 and agent.usage.tool_calls == 3
    errors = [m["content"] for m in agent.messages if m["role"] == "tool"]
    assert "not valid JSON" in errors[0]
    assert "unknown tool 'python'" in errors[1]
    assert "'command' argument is missing" in errors[2]
    assert_valid_chat(agent.transcript())


def test_model_can_recover_from_a_malformed_call(serve):
    server = serve("malformed", kinds=["bad_json"], then=["ls"])
    agent = make_agent(server)
    commands, turn = play(agent, context(max_tool_calls=5))
    assert commands == ["ls"] and turn.end_reason == "no_tool_call"
    assert agent.usage.malformed_tool_calls == 1 and agent.usage.tool_calls == 2
    # the second request carried the error so the model could react to it
    assert "not valid JSON" in server.chat_requests[1]["messages"][-1]["content"]
    assert_valid_chat(agent.transcript())


def test_tool_call_limit_after_valid_calls_is_not_malformed(serve):
    server = serve("malformed", kinds=["bad_json"], then=["ls", "pwd", "id"])
    agent = make_agent(server)
    commands, turn = play(agent, context(max_tool_calls=3))
    assert commands == ["ls", "pwd"]
    assert turn.end_reason == "tool_call_limit"


def test_multiple_calls_run_the_first_and_answer_the_rest(serve):
    server = serve("multi_call", commands=["ls", "pwd"])
    agent = make_agent(server)
    commands, turn = play(agent, context())
    assert commands == ["ls", "pwd"]  # "echo second" never runs
    assert turn.end_reason == "no_tool_call"
    transcript = agent.transcript()
    assert_valid_chat(transcript)
    assert transcript[3]["tool_call_id"] == "call_0"
    assert transcript[3]["content"].startswith("output")
    assert transcript[4] == {"role": "tool", "tool_call_id": "call_1", "content": ONE_CALL_PER_TURN}
    assert agent.usage.tool_calls == 4  # the refused calls count against the limit too


def test_transcript_answers_a_call_left_pending(serve):
    """The loop may stop after a command (budget, wall clock) without another next_turn."""
    server = serve("multi_call", commands=["ls"])
    agent = make_agent(server)
    agent.start(context())
    assert agent.next_turn(None).command == "ls"
    transcript = agent.transcript()
    assert_valid_chat(transcript)
    assert transcript[3]["content"] == NOT_RUN
    assert len(agent.messages) == 3  # transcript() does not change the conversation


# -- server errors and retries ---------------------------------------------------------------


def test_flaky_server_is_retried_and_recovers(serve):
    server = serve("flaky", failures=2, commands=["ls"])
    agent = make_agent(server, max_retries=3)
    commands, turn = play(agent, context())
    assert commands == ["ls"] and turn.end_reason == "no_tool_call"
    assert len(server.chat_requests) == 4  # 2 failures + 2 answers
    assert agent.usage.turns[0]["attempts"] == 3
    assert agent.usage.turns[1]["attempts"] == 1


def test_rate_limit_is_retried(serve):
    server = serve("flaky", failures=1, commands=[], status=429)
    agent = make_agent(server, max_retries=1)
    _, turn = play(agent, context())
    assert turn.end_reason == "no_tool_call"


def test_retries_exhausted_is_a_server_error(serve):
    server = serve("flaky", failures=10, commands=["ls"])
    agent = make_agent(server, max_retries=2)
    commands, turn = play(agent, context())
    assert commands == [] and turn.end_reason == "server_error"
    assert "HTTP 500" in turn.error and "scripted failure 3" in turn.error
    assert "after 3 attempts" in turn.error
    assert len(server.chat_requests) == 3
    assert agent.error == turn.error


def test_permanent_error_is_not_retried(serve):
    server = serve("fail", status=400, message="model 'x' does not support tools")
    agent = make_agent(server, max_retries=5)
    _, turn = play(agent, context())
    assert turn.end_reason == "server_error"
    assert "HTTP 400" in turn.error and "does not support tools" in turn.error
    assert len(server.chat_requests) == 1


# -- what reaches the server -----------------------------------------------------------------


def test_budget_is_disclosed_in_the_user_message(serve):
    server = serve("replay", commands=[])
    agent = make_agent(server)
    play(agent, context(max_commands=7))
    user = server.chat_requests[0]["messages"][1]
    assert user["role"] == "user"
    assert user["content"].startswith("Count the lines")
    assert user["content"].endswith(budget_sentence(7))
    assert "at most 7 commands" in user["content"]


def test_no_budget_sentence_without_a_budget(serve):
    server = serve("replay", commands=[])
    agent = make_agent(server)
    play(agent, context())
    assert server.chat_requests[0]["messages"][1]["content"] == context().instruction
    assert server.chat_requests[0]["messages"][0] == {
        "role": "system", "content": "You are a terminal agent."}


def test_sampling_options_reach_the_server(serve):
    server = serve("replay", commands=[])
    agent = make_agent(server, temperature=0.6, top_p=0.95, top_k=20, seed=1234,
                       disable_thinking=True)
    play(agent, context())
    body = server.chat_requests[0]
    assert body["model"] == DEFAULT_MODEL
    assert body["temperature"] == 0.6 and body["top_p"] == 0.95
    assert body["top_k"] == 20 and body["seed"] == 1234
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["tools"][0]["function"]["name"] == "bash"
    assert body["tools"][0]["function"]["parameters"] == {
        "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}


def test_unset_options_are_not_sent(serve):
    server = serve("replay", commands=[])
    agent = make_agent(server)
    play(agent, context())
    body = server.chat_requests[0]
    for key in ("temperature", "top_p", "top_k", "seed", "chat_template_kwargs"):
        assert key not in body


def test_start_resets_the_agent_for_a_new_episode(serve):
    server = serve("never_stop")
    agent = make_agent(server)
    play(agent, context(max_tool_calls=2))
    commands, turn = play(agent, context(max_tool_calls=1))
    assert commands == ["echo again"] and turn.end_reason == "tool_call_limit"
    assert agent.usage.tool_calls == 1 and len(agent.usage.turns) == 1
    assert len(agent.messages) == 4


@pytest.mark.parametrize(
    "name, arguments, expect",
    [
        ("bash", '{"command": "ls -la"}', ("ls -la", None)),
        ("bash", '{"command": "ls"', "not valid JSON"),
        ("bash", '["ls"]', "must be a JSON object"),
        ("bash", '{"command": ""}', "missing or empty"),
        ("bash", '{"command": 3}', "missing or empty"),
        ("shell", '{"command": "ls"}', "unknown tool 'shell'"),
    ],
)
def test_parse_bash_call(name, arguments, expect):
    command, problem = parse_bash_call(name, arguments)
    if isinstance(expect, tuple):
        assert (command, problem) == expect
    else:
        assert command is None and expect in problem


# -- system prompts (they feed AgentContext.system_prompt) -----------------------------------


def test_load_prompt_by_name_and_by_path(tmp_path):
    from pytest_termrl.agents.prompts import REPO_PROMPTS_DIR, load_prompt

    name, text = load_prompt("p6_env_aware", [REPO_PROMPTS_DIR])
    assert name == "p6_env_aware"
    for rule in ("no network", "no standard input", "30 seconds", "cut", "fabricate"):
        assert rule in text
    own = tmp_path / "mine.txt"
    own.write_text("Be careful.")
    assert load_prompt(str(own), [REPO_PROMPTS_DIR]) == ("mine", "Be careful.")
    assert load_prompt("mine", [tmp_path, REPO_PROMPTS_DIR]) == ("mine", "Be careful.")


def test_repo_prompts_exist_and_name_the_faults():
    from pytest_termrl.agents.prompts import available_prompts, load_prompt

    names = available_prompts()
    assert {"p0_default", "p6_env_aware", "p7_budget", "p8_fault_runbook"} <= set(names)
    _, runbook = load_prompt("p8_fault_runbook")
    for family in ("perm_denied", "moved_input", "blocking_fifo", "stale_lock",
                   "readonly_output", ".bak", "chmod", "fabricate"):
        assert family in runbook
    assert "few commands" in load_prompt("p7_budget")[1]


def test_unknown_prompt_lists_the_available_names(tmp_path):
    from pytest_termrl.agents.prompts import PromptNotFoundError, load_prompt
    from pytest_termrl.errors import TermrlError

    (tmp_path / "a1.txt").write_text("x")
    (tmp_path / "b2.txt").write_text("y")
    expected = r"unknown prompt 'zz'; available prompts: a1, b2"
    with pytest.raises(PromptNotFoundError, match=expected):
        load_prompt("zz", [tmp_path])
    with pytest.raises(TermrlError, match="prompt file not found"):
        load_prompt(str(tmp_path / "missing.txt"), [tmp_path])
