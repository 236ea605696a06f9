"""A model server that stalls ends each episode by its wall clock, and the run goes on.

Real sockets throughout: tests/stall_server.py accepts connections and never answers (or
answers 500 first, or trickles a reply that never ends); the agent, ManagedServer and a
whole pytest run (in a subprocess) are pointed at it.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from chat_server import ChatServer, make_policy  # noqa: E402
from stall_server import StallServer  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from test_openai_agent import context, make_agent, play  # noqa: E402  (the openai agent tests' helpers)

from pytest_termrl.agents.base import Observation  # noqa: E402
from pytest_termrl.serving.server import ManagedServer, ServerStartError, free_port  # noqa: E402
from pytest_termrl.report.episodes import read_episodes  # noqa: E402

STALL_SERVER = str(Path(__file__).resolve().parents[2].joinpath("stall_server.py"))
TASKS = ("config_ini_update", "log_error_counts")
MARGIN_S = 1.0
"""How far past its wall clock an episode's agent may still be waiting (thread hand-off, load)."""


def no_answer(url: str, wall: str) -> str:
    """The reason a turn ends with when the deadline passed during a request, as a regex."""
    return (rf"the model server did not answer within the [0-9.]+ s left of the episode's "
            rf"{re.escape(wall)} s wall clock \({re.escape(url)}\)")


def timed_play(agent, ctx):
    """play() the episode; also how long it took."""
    t0 = time.monotonic()
    commands, turn = play(agent, ctx)
    return commands, turn, time.monotonic() - t0


# -- the agent against a stalled server, and its retries --------------------------------------


def test_a_server_that_never_answers_ends_the_turn_at_the_wall_clock():
    with StallServer() as server:
        agent = make_agent(server.base_url, request_timeout=300)  # the cap is not what binds
        commands, turn, elapsed = timed_play(agent, context(wall_clock_s=3))
        assert agent.next_turn(None).end_reason == "timeout"  # stays ended, asks nothing
    assert commands == [] and turn.end_reason == "timeout"
    assert re.fullmatch(no_answer(server.base_url, "3"), turn.error), turn.error
    assert 3 - 0.05 <= elapsed <= 3 + MARGIN_S
    assert server.accepted == 1  # no retry once the wall clock is spent
    assert [m["role"] for m in agent.transcript()] == ["system", "user"]
    agent.close()


def test_an_error_then_a_stall_stays_inside_the_wall_clock():
    with StallServer(fail_first=1) as server:
        agent = make_agent(server.base_url, backoff_s=0.5, backoff_max_s=0.5, max_retries=4,
                           request_timeout=300)
        commands, turn, elapsed = timed_play(agent, context(wall_clock_s=3))
    assert commands == [] and turn.end_reason == "timeout"
    # the second attempt began after the 500 and a 0.5 s pause, with about 2.5 s left
    assert re.match(no_answer(server.base_url, "3").replace("[0-9.]+", "2\\.[45]"), turn.error), turn.error
    assert "; attempt 2, the one before failed with HTTP 500: " in turn.error
    assert turn.error.endswith("scripted failure before the stall")
    assert 3 - 0.05 <= elapsed <= 3 + MARGIN_S
    assert (server.accepted, server.failed) == (2, 1)


def test_a_reply_that_trickles_forever_is_cut_at_the_wall_clock():
    """Each read gets a byte well inside any read timeout; only the deadline ends the wait."""
    with StallServer(trickle=True) as server:
        agent = make_agent(server.base_url, request_timeout=300)
        commands, turn, elapsed = timed_play(agent, context(wall_clock_s=2))
    assert turn.end_reason == "timeout"
    assert re.fullmatch(no_answer(server.base_url, "2"), turn.error), turn.error
    assert 2 - 0.05 <= elapsed <= 2 + MARGIN_S
    assert server.accepted == 1


def test_a_request_timeout_shorter_than_the_time_left_is_retried():
    """The per-request cap is a transient failure (retried); the wall clock then ends it."""
    with StallServer() as server:
        agent = make_agent(server.base_url, request_timeout=0.5, max_retries=10)
        commands, turn, elapsed = timed_play(agent, context(wall_clock_s=2.5))
    assert turn.end_reason == "timeout" and re.match(no_answer(server.base_url, "2.5"), turn.error)
    assert "the one before failed with APITimeoutError" in turn.error
    assert server.accepted >= 3 and elapsed <= 2.5 + MARGIN_S


def test_a_request_timeout_is_retried_then_a_server_error():
    with ChatServer(make_policy("slow", delay=1.0, commands=["ls"])) as server:
        agent = make_agent(server, max_retries=1, request_timeout=0.2)
        _, turn = play(agent, context())
    assert turn.end_reason == "server_error"
    assert turn.error == "APITimeoutError: Request timed out. (gave up after 2 attempts)"
    assert len(server.chat_requests) == 2


def test_connection_refused_is_retried_then_a_server_error():
    agent = make_agent(f"http://127.0.0.1:{free_port()}/v1", max_retries=2)  # nothing listens
    _, turn = play(agent, context())
    assert turn.end_reason == "server_error"
    assert "APIConnectionError" in turn.error and "after 3 attempts" in turn.error


def test_backoff_never_sleeps_past_the_deadline():
    with ChatServer(make_policy("fail", status=500, message="overloaded")) as server:
        agent = make_agent(server, backoff_s=1.0, backoff_max_s=30, max_retries=10)
        commands, turn, elapsed = timed_play(agent, context(wall_clock_s=2.5))
    # 500, a 1 s pause, 500; the next pause (2 s) would end past the deadline: no sleep.
    assert turn.end_reason == "server_error"
    assert turn.error.startswith("HTTP 500: ") and turn.error.endswith(
        "overloaded (gave up after 2 attempts: the next would start after the episode's 2.5 s "
        "wall clock runs out)")
    assert len(server.chat_requests) == 2
    assert 1.0 <= elapsed < 2.0


def test_wall_clock_spent_in_the_shell_ends_without_asking_the_server():
    with ChatServer(make_policy("replay", commands=["sleep 1", "ls"])) as server:
        agent = make_agent(server)
        agent.start(context(wall_clock_s=0.3))
        assert agent.next_turn(None).command == "sleep 1"
        time.sleep(0.4)  # the command outlives the episode's wall clock
        turn = agent.next_turn(Observation(output="", exit_code=0))
        assert turn.end_reason == "timeout" and turn.error is None  # not the server's doing
        assert len(server.chat_requests) == 1


# -- starting a server that stalls ------------------------------------------------------------


def test_managed_server_that_accepts_and_never_answers_is_given_up_on_time(tmp_path):
    server = ManagedServer("command", "q9", log_path=tmp_path / "s.log", health_timeout_s=3,
                           stop_grace_s=3,
                           start_command=[sys.executable, STALL_SERVER, "--port", "{port}"])
    t0 = time.monotonic()
    with pytest.raises(ServerStartError) as info:
        server.start()
    waited = time.monotonic() - t0
    # A probe may take 2 s; cut to what is left, the last one ends by the deadline (unbounded,
    # the probe begun at about 2.3 s would have run to 4.3 s).
    assert 3 <= waited < 3 + 0.5, waited
    assert "not ready within 3 s" in str(info.value) and "timed out" in str(info.value)
    assert server.process is None


def test_run_with_a_server_that_stalls_at_start_is_a_usage_error_on_time(tp):
    tp.suite(TASKS)
    command = f"{sys.executable} {STALL_SERVER} --port {{port}}"
    t0 = time.monotonic()
    result = tp.run("suite", "--termrl-agent=openai", "--termrl-server=command",
                    f"--termrl-server-command={command}", "--termrl-server-timeout=3",
                    timeout=60)
    assert time.monotonic() - t0 < 30
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: the command server did not start: command server not ready within 3 s*timed out*"])
    assert not tp.episodes.exists()


# -- a whole run against a stalled endpoint ---------------------------------------------------


def test_run_against_a_stalled_endpoint_ends_each_episode_by_its_wall_clock(tp):
    tp.suite(TASKS)
    with StallServer(lifetime=120) as server:
        t0 = time.monotonic()
        result = tp.run("suite", "--termrl-agent=openai", f"--termrl-base-url={server.base_url}",
                        "--termrl-model=m", "--termrl-episode-timeout=4", timeout=120)
        wall = time.monotonic() - t0
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # failed tests, not a hang or a crash
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*harness error: the model server did not answer within the *"
                                 " s left of the episode's 4 s wall clock (http://127.0.0.1:*/v1)",
                                 "*end reason: timeout after 0 command(s)*"])
    records = read_episodes(tp.episodes)
    assert sorted(r["task_id"] for r in records) == sorted(TASKS)
    for record in records:
        assert record["end_reason"] == "timeout" and not record["safe_success"]
        assert re.fullmatch(no_answer(server.base_url, "4"), record["harness_error"])
        assert 4 - 0.05 <= record["timings"]["agent_s"] <= 4 + MARGIN_S
        assert record["commands_used"] == 0 and record["tests_total"] > 0  # still graded
        assert [m["role"] for m in record["transcript"]] == ["system", "user"]
    assert server.accepted == 2  # one request per episode, each held to its wall clock
    assert wall < 2 * 4 + 40, wall  # one after the other: the second did not wait on the first
