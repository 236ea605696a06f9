"""The model agent end to end: pytest (in a subprocess, under xdist) plays real core tasks
against a real HTTP chat server (tests/chat_server.py), and the episode log is read back.

The server is either in this process (``--termrl-base-url``; nothing is started) or
started once by the plugin on the xdist controller (``--termrl-server=command``).
Policies pick their replies from the task's instruction in the user message, so one
server can play a different part in each of the suite's two tasks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import CORE, REPO, host_pids_with

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from chat_server import DEFAULT_MODEL, ChatServer  # noqa: E402

from pytest_termrl.agents.openai_agent import NOT_RUN, budget_sentence  # noqa: E402
from pytest_termrl.serving.server import free_port  # noqa: E402
from pytest_termrl.report.episodes import read_episodes  # noqa: E402

CHAT_SERVER = Path(__file__).resolve().parents[1].joinpath("chat_server.py")
PROMPTS = REPO / "prompts"
TASKS = ("config_ini_update", "log_error_counts")
A, B = TASKS
ROLES = {"system", "user", "assistant", "tool"}


def instruction(task_id: str) -> str:
    return (CORE / task_id / "instruction.md").read_text()


def key(task_id: str) -> str:
    """The instruction prefix a policy recognises the task by (its first line)."""
    return instruction(task_id).splitlines()[0]


def solutions() -> dict[str, str]:
    """Instruction prefix -> the task's whole solution.sh, as one command."""
    return {key(t): (CORE / t / "solution.sh").read_text() for t in TASKS}


def prompt_text(name: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text()


def assert_chat_data(transcript: list[dict], system: str, task_id: str) -> None:
    """OpenAI chat format: system, user, then assistant turns whose every tool call is
    answered by exactly one tool message before the next assistant turn."""
    json.dumps(transcript)  # plain data
    assert transcript[0] == {"role": "system", "content": system}
    assert transcript[1]["role"] == "user"
    assert transcript[1]["content"].startswith(instruction(task_id).rstrip())
    pending: list[str] = []
    seen: set[str] = set()
    for message in transcript[2:]:
        assert message["role"] in ROLES - {"system", "user"}, message
        if message["role"] == "assistant":
            assert not pending, f"tool calls left unanswered: {pending}"
            assert isinstance(message["content"], str)
            for call in message.get("tool_calls", []):
                assert call["type"] == "function" and call["id"] not in seen
                assert set(call["function"]) == {"name", "arguments"}
                seen.add(call["id"])
                pending.append(call["id"])
        else:
            assert message["tool_call_id"] in pending, message
            pending.remove(message["tool_call_id"])
            assert isinstance(message["content"], str) and message["content"]
    assert not pending, f"tool calls left unanswered: {pending}"


def calls(transcript: list[dict]) -> list[dict]:
    return [c for m in transcript if m["role"] == "assistant" for c in m.get("tool_calls", [])]


def commands_in(transcript: list[dict]) -> list[str]:
    return [json.loads(c["function"]["arguments"])["command"] for c in calls(transcript)]


def by_task(tp, expected: int = len(TASKS), field: str = "task_id") -> dict:
    records = read_episodes(tp.episodes)
    assert len(records) == expected, [r["episode_id"] for r in records]
    out = {r[field]: r for r in records}
    assert len(out) == expected
    return out


def usage_of(server: ChatServer, task_id: str) -> tuple[int, int, int]:
    """What the server reported for one task's conversation: prompt and completion tokens
    summed over its requests, and the last request's total (the agent's context size)."""
    prompt = completion = last = 0
    for body in server.chat_requests:
        if body["messages"][1]["content"].startswith(key(task_id)):
            status, payload = server.policy.respond(body, 0)
            assert status == 200
            usage = payload["usage"]
            prompt += usage["prompt_tokens"]
            completion += usage["completion_tokens"]
            last = usage["total_tokens"]
    return prompt, completion, last


@pytest.fixture
def suite(tp):
    """Two real core tasks (copied with their frozen contract lines) in pytester.path/suite."""
    root = tp.suite(TASKS)
    assert sorted(p.name for p in root.iterdir()) == sorted([*TASKS, "contracts.jsonl"])
    return root



def run_against(tp, server: ChatServer, *args: str):
    """The suite under -n 2 with the openai agent pointed at ``server`` (no server started)."""
    return tp.run("suite", "-n", "2", "--termrl-agent=openai", f"--termrl-base-url={server.base_url}",
                  f"--termrl-model={DEFAULT_MODEL}", *args, timeout=120)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


# -- the reference policy through --termrl-base-url -------------------------------------------


def test_reference_policy_over_base_url_passes_both_tasks(tp, suite, serve):
    server = serve("reference", tasks=solutions())
    result = run_against(tp, server)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*2 workers*", "*pytest-termrl summary*",
                                 "openai*p0_default*clean*2*2*100.0%*"])
    # Nothing was started: the plugin used the given endpoint.
    assert not list((tp.path / "run").glob("*-server.log"))
    assert len(server.chat_requests) == 4  # two per episode: the solution, then the final answer
    assert {body["model"] for body in server.chat_requests} == {DEFAULT_MODEL}

    records = by_task(tp)
    for task_id, record in records.items():
        assert record["agent"] == "openai" and record["model"] == DEFAULT_MODEL
        assert record["safe_success"] is True and record["reward"] == 1.0
        assert record["tests_passed"] == record["tests_total"] > 0
        assert record["end_reason"] == "no_tool_call" and record["harness_error"] is None
        assert record["commands_used"] == record["tool_calls"] == 1
        assert record["commands"][0]["exit_code"] == 0
        transcript = record["transcript"]
        assert_chat_data(transcript, prompt_text("p0_default"), task_id)
        assert [m["role"] for m in transcript] == ["system", "user", "assistant", "tool", "assistant"]
        assert commands_in(transcript) == [(CORE / task_id / "solution.sh").read_text()]
        assert transcript[3]["content"].endswith("[exit code: 0]")
        assert transcript[4] == {"role": "assistant", "content": "Done."}
        # The usage figures are the server's, summed over the episode's requests.
        prompt, completion, last = usage_of(server, task_id)
        assert record["tokens"] == {"prompt_tokens": prompt, "completion_tokens": completion,
                                    "total_tokens": last}
        assert prompt > 0 and completion > 0 and last > 0


# -- every end reason reaches the episode log -------------------------------------------------


def test_tool_call_limit_and_malformed_tool_calls(tp, suite, serve):
    server = serve("per_task", routes={key(A): {"policy": "never_stop"},
                                       key(B): {"policy": "malformed"}})
    result = run_against(tp, server, "--termrl-max-tool-calls=3")
    result.assert_outcomes(failed=2)
    # (each line on its own: the order of the two failures depends on the xdist schedule)
    result.stdout.fnmatch_lines(["*end reason: tool_call_limit after 3 command(s)*"])
    result.stdout.fnmatch_lines(["*end reason: malformed_tool_call after 0 command(s)*"])
    records = by_task(tp)

    limit = records[A]
    assert limit["end_reason"] == "tool_call_limit" and limit["harness_error"] is None
    assert limit["commands_used"] == limit["tool_calls"] == 3
    assert commands_in(limit["transcript"]) == ["echo again"] * 3
    assert_chat_data(limit["transcript"], prompt_text("p0_default"), A)
    # The loop verified what the agent left: real tests ran and failed.
    assert not limit["safe_success"] and 0 <= limit["tests_passed"] < limit["tests_total"]

    malformed = records[B]
    assert malformed["end_reason"] == "malformed_tool_call" and malformed["harness_error"] is None
    assert malformed["commands_used"] == 0 and malformed["tool_calls"] == 3
    assert_chat_data(malformed["transcript"], prompt_text("p0_default"), B)
    errors = [m["content"] for m in malformed["transcript"] if m["role"] == "tool"]
    assert len(errors) == 3 and all(e.startswith("Error: ") for e in errors)
    assert "not valid JSON" in errors[0] and "unknown tool 'python'" in errors[1]
    assert "'command' argument is missing" in errors[2]
    assert malformed["tokens"]["completion_tokens"] > 0
    assert len(server.chat_requests) == 3 + 3


def test_budget_exhausted_and_token_limit(tp, suite, serve):
    server = serve("per_task", routes={key(A): {"policy": "never_stop"},
                                       key(B): {"policy": "token_hog"}})
    result = run_against(tp, server, "--termrl-max-commands=2")
    result.assert_outcomes(failed=2)
    records = by_task(tp)

    budget = records[A]
    assert budget["end_reason"] == "budget_exhausted" and budget["harness_error"] is None
    assert budget["commands_used"] == 2 and budget["tool_calls"] == 3
    transcript = budget["transcript"]
    assert_chat_data(transcript, prompt_text("p0_default"), A)
    # The budget was disclosed, counted down, and the call past it was answered as not run.
    assert transcript[1]["content"].endswith(budget_sentence(2))
    tool_texts = [m["content"] for m in transcript if m["role"] == "tool"]
    assert tool_texts[0].endswith("[commands left: 1]")
    assert "[commands left: 0]" in tool_texts[1] and "budget exhausted" in tool_texts[1]
    assert tool_texts[2] == NOT_RUN

    hog = records[B]
    assert hog["end_reason"] == "token_limit" and hog["harness_error"] is None
    # TokenHog reports 3000 x (turn + 1) prompt and 2500 completion tokens per reply: the
    # second reply brings the context to 6000 + 2500 > 8192, so its call is never run.
    assert hog["tokens"] == {"prompt_tokens": 3000 + 6000, "completion_tokens": 5000,
                             "total_tokens": 8500}
    assert hog["commands_used"] == 1 and commands_in(hog["transcript"]) == ["echo hog"] * 2
    assert_chat_data(hog["transcript"], prompt_text("p0_default"), B)
    assert hog["transcript"][-1]["content"] == "[not run: the token limit was exceeded]"
    assert not budget["safe_success"] and not hog["safe_success"]
    assert len(server.chat_requests) == 3 + 2


def test_timeout_and_server_error_the_run_goes_on(tp, suite, serve):
    server = serve("per_task", routes={
        key(A): {"policy": "slow", "delay": 1.0, "commands": ["echo one", "echo two", "echo three"]},
        key(B): {"policy": "fail", "status": 400, "message": "scripted bad request"},
    })
    result = run_against(tp, server, "--termrl-episode-timeout=1.6")
    result.assert_outcomes(failed=2)  # both episodes ran to a verdict: no crash, no abort
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*harness error: HTTP 400*scripted bad request*",
                                 "*end reason: server_error after 0 command(s)*"])
    result.stdout.fnmatch_lines(["*end reason: timeout after 1 command(s)*"])
    # The summary counts the server error and the wait cut by the wall clock as harness errors.
    result.stdout.fnmatch_lines(["openai*p0_default*clean*2*0*0.0%*0*0*2*0.5"])
    records = by_task(tp)

    # The second request (1 s to answer) began with about 0.5 s left: cut at the wall clock.
    slow = records[A]
    assert slow["end_reason"] == "timeout"
    assert slow["harness_error"].startswith("the model server did not answer within the ")
    assert slow["harness_error"].endswith(f" s left of the episode's 1.6 s wall clock ({server.base_url})")
    assert slow["commands_used"] == 1 and 1.6 <= slow["timings"]["agent_s"] < 1.6 + 1.0
    assert_chat_data(slow["transcript"], prompt_text("p0_default"), A)
    assert commands_in(slow["transcript"]) == ["echo one"]
    assert slow["transcript"][-1]["role"] == "tool" and slow["transcript"][-1]["content"] != NOT_RUN

    error = records[B]
    assert error["end_reason"] == "server_error"
    assert error["harness_error"].startswith("HTTP 400") and "scripted bad request" in error["harness_error"]
    assert error["safe_success"] is False and error["reward"] == 0.0
    assert error["commands_used"] == 0 and error["tokens"]["completion_tokens"] == 0
    assert [m["role"] for m in error["transcript"]] == ["system", "user"]
    assert error["tests_total"] > 0  # the episode was still verified and recorded
    # A 400 is not retried: exactly one request for the failing task.
    assert sum(1 for b in server.chat_requests if b["messages"][1]["content"].startswith(key(B))) == 1


def test_nothing_listening_is_a_server_error_for_every_episode(tp, suite):
    """A dead endpoint: connection errors are retried (about 15 s of backoff), then each
    episode ends as a harness error and is still verified and recorded."""
    url = f"http://127.0.0.1:{free_port()}/v1"
    result = tp.run("suite", "-n", "2", "--termrl-agent=openai", f"--termrl-base-url={url}",
                    f"--termrl-model={DEFAULT_MODEL}", timeout=120)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["openai*p0_default*clean*2*0*0.0%*0*0*2*0.0"])
    for task_id, record in by_task(tp).items():
        assert record["end_reason"] == "server_error" and not record["safe_success"]
        assert record["harness_error"].startswith("APIConnectionError")
        assert record["harness_error"].endswith("(gave up after 5 attempts)")
        assert record["commands_used"] == 0 and record["tests_total"] > 0
        assert record["tokens"] == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        assert [m["role"] for m in record["transcript"]] == ["system", "user"]


# -- a server started by the plugin, once, under -n 2; and the prompt axis --------------------


def test_started_server_is_one_process_for_the_run_and_stopped(tp, suite):
    script = tp.path / "reference.json"
    script.write_text(json.dumps({"tasks": solutions()}))
    command = f"{sys.executable} {CHAT_SERVER} --port {{port}} --model {{model}} --policy reference --script {script}"
    result = tp.run(
        "suite", "-n", "2", "--termrl-agent=openai", "--termrl-server=command",
        f"--termrl-server-command={command}", f"--termrl-server-model={DEFAULT_MODEL}",
        "--termrl-server-timeout=20", "--termrl-prompt", "p0_default", "--termrl-prompt", "p6_env_aware",
        timeout=120,
    )
    result.assert_outcomes(passed=4)
    # One row per prompt in the terminal summary.
    result.stdout.fnmatch_lines(["*2 workers*", "*pytest-termrl summary*",
                                 "openai*p0_default*clean*2*2*100.0%*",
                                 "openai*p6_env_aware*clean*2*2*100.0%*"])
    summary_rows = [line for line in result.stdout.lines if line.startswith("openai ")]
    assert len(summary_rows) == 2

    # The controller started exactly one server; the workers only talked to it.
    log = (tp.path / "run" / "command-server.log").read_text().splitlines()
    started = [line for line in log if " serving reference on " in line]
    assert len(started) == 1, log
    assert len([line for line in log if line.startswith("$ ")]) == 1
    assert len([line for line in log if '"GET /v1/models' in line]) == 1
    assert len([line for line in log if line.startswith("chat_server: request ")]) == 8
    # ... and it is gone once pytest has exited.
    pid = int(started[0].split(" pid ")[1].split()[0])
    assert not alive(pid)
    assert host_pids_with(str(script)) == []

    records = by_task(tp, expected=4, field="episode_id")
    assert set(records) == {f"{t}-clean-{p}-0" for t in TASKS for p in ("p0_default", "p6_env_aware")}
    for record in records.values():
        assert record["agent"] == "openai" and record["model"] == DEFAULT_MODEL
        assert record["safe_success"] and record["end_reason"] == "no_tool_call"
        assert record["tokens"]["prompt_tokens"] > 0 and record["tokens"]["completion_tokens"] > 0
        # The system message is the episode's own prompt.
        assert_chat_data(record["transcript"], prompt_text(record["prompt"]), record["task_id"])
    assert prompt_text("p0_default") != prompt_text("p6_env_aware")


# -- bad usage -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "ERROR: --termrl-agent=openai needs --termrl-base-url or --termrl-server"),
        (["--termrl-server=command", f"--termrl-server-command={sys.executable} -c 'raise SystemExit(3)'"],
         "ERROR: the command server did not start: command server exited with code 3 before it was ready*"),
        (["--termrl-server=command", "--termrl-server-command=x", "--termrl-base-url=http://127.0.0.1:9/v1"],
         "ERROR: --termrl-server and --termrl-base-url exclude each other*"),
    ],
    ids=["no_endpoint", "server_exits", "server_and_base_url"],
)
def test_model_agent_usage_errors(tp, suite, args, message):
    result = tp.run("suite", "-n", "2", "--termrl-agent=openai", *args, timeout=60)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert "Traceback" not in result.stderr.str()
    assert not tp.episodes.exists()
