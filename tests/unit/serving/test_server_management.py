"""ManagedServer with tests/chat_server.py as a stand-in for vLLM: start, wait, use, stop."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from pytest_termrl.agents.base import AgentContext, EpisodeLimits, Observation
from pytest_termrl.agents.openai_agent import OpenAIAgent
from pytest_termrl.serving.server import ManagedServer, ServerStartError, free_port

CHAT_SERVER = str(Path(__file__).resolve().parents[2].joinpath("chat_server.py"))


def stand_in(*extra: str) -> list[str]:
    return [sys.executable, CHAT_SERVER, "--host", "{host}", "--port", "{port}",
            "--model", "{model}", *extra]


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def wait_gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def managed(tmp_path):
    servers: list[ManagedServer] = []

    def _make(*extra: str, **kwargs) -> ManagedServer:
        kwargs.setdefault("kind", "command")
        kwargs.setdefault("model", "q9")
        kwargs.setdefault("log_path", tmp_path / "server.log")
        kwargs.setdefault("health_timeout_s", 20)
        kwargs.setdefault("stop_grace_s", 3)
        server = ManagedServer(start_command=stand_in(*extra), **kwargs)
        servers.append(server)
        return server

    yield _make
    for server in servers:
        server.stop()


def test_start_serve_an_episode_and_stop(managed, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"commands": ["ls", "pwd"]}))
    pidfile = tmp_path / "child.pid"
    server = managed("--policy", "replay", "--script", str(script),
                     "--spawn-child", str(pidfile))
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    server.start()
    assert server.running
    leader = server.process.pid
    assert os.getpgid(leader) == leader  # its own process group
    child = int(pidfile.read_text())
    assert os.getpgid(child) == leader

    agent = OpenAIAgent(server.base_url, server.model_id, backoff_s=0.01)
    agent.start(AgentContext("t", "do it", "sys", "p0", EpisodeLimits()))
    commands, last = [], None
    while (turn := agent.next_turn(last)).command is not None:
        commands.append(turn.command)
        last = Observation(output="ok", exit_code=0)
    agent.close()
    assert commands == ["ls", "pwd"] and turn.end_reason == "no_tool_call"

    server.stop()
    assert not server.running
    assert wait_gone(leader) and wait_gone(child)  # the whole group is gone
    log = server.log_path.read_text()
    assert log.startswith("$ " + sys.executable)
    assert "serving replay" in log and "request 2 -> 200" in log
    server.stop()  # idempotent


def test_server_that_exits_at_once_reports_the_log_tail(tmp_path):
    server = ManagedServer(
        "command", "q9", log_path=tmp_path / "s.log", health_timeout_s=20,
        start_command=[sys.executable, "-c",
                       "import sys; print('CUDA out of memory while loading'); sys.exit(3)"],
    )
    t0 = time.monotonic()
    with pytest.raises(ServerStartError) as info:
        server.start()
    assert time.monotonic() - t0 < 10  # noticed the exit, did not wait for the deadline
    message = str(info.value)
    assert "exited with code 3" in message
    assert "CUDA out of memory while loading" in message
    assert str(tmp_path / "s.log") in message
    assert server.process is None


def test_server_that_never_becomes_healthy_times_out(managed):
    server = managed("--unhealthy", health_timeout_s=1.5)
    with pytest.raises(ServerStartError) as info:
        server.start()
    message = str(info.value)
    assert "not ready within 1.5 s" in message and "GET /health -> 503" in message
    assert "chat_server: pid" in message  # log tail
    assert server.process is None


def test_unlisted_model_is_not_ready(managed):
    server = managed(health_timeout_s=1.0, model="q9")
    server.start_command = [a.replace("{model}", "other") for a in server.start_command]
    with pytest.raises(ServerStartError, match=r"model 'q9' not listed \(listed: \['other'\]\)"):
        server.start()


def test_llamacpp_readiness_does_not_need_health(managed):
    server = managed("--no-health", kind="llamacpp", model="/models/q9.gguf")
    assert server.readiness_paths() == ["/v1/models"]
    server.start()
    assert server.running
    server.stop()


def test_interrupt_while_waiting_stops_the_server(managed, monkeypatch):
    server = managed("--startup-delay", "30")
    pids = []

    def interrupted(self, *args):
        pids.append(self.process.pid)
        raise KeyboardInterrupt

    monkeypatch.setattr(ManagedServer, "_probe", interrupted)
    with pytest.raises(KeyboardInterrupt):
        server.start()
    assert server.process is None and wait_gone(pids[0])


def test_context_manager_and_free_port(managed):
    server = managed()
    assert 0 < server.port < 65536
    with server as s:
        assert s.running
        pid = s.process.pid
    assert wait_gone(pid)


def test_vllm_command_line():
    server = ManagedServer("vllm", "Qwen/Qwen3-8B", port=8123,
                           extra_args=["--enable-lora", "--lora-modules", "q9=/ckpt/q9",
                                       "--served-model-name", "base"])
    cmd = server.command()
    assert cmd[0].endswith("vllm") and cmd[1:3] == ["serve", "Qwen/Qwen3-8B"]
    assert cmd[3:] == ["--host", "127.0.0.1", "--port", "8123", "--enable-auto-tool-choice",
                       "--tool-call-parser", "hermes", "--enable-lora", "--lora-modules",
                       "q9=/ckpt/q9", "--served-model-name", "base"]
    assert server.readiness_paths() == ["/health", "/v1/models"]
    assert server.model_id == "base"
    assert server.base_url == "http://127.0.0.1:8123/v1"


def test_llamacpp_command_line():
    server = ManagedServer("llamacpp", "/m/q9.gguf", extra_args=["--n_gpu_layers", "-1"],
                           host="0.0.0.0", port=9000)
    assert server.command() == [
        sys.executable, "-m", "llama_cpp.server", "--model", "/m/q9.gguf", "--host", "0.0.0.0",
        "--port", "9000", "--chat_format", "chatml-function-calling", "--n_gpu_layers", "-1"]
    assert server.model_id == "/m/q9.gguf"
    assert server.base_url == "http://127.0.0.1:9000/v1"  # not the wildcard bind address


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown server kind"):
        ManagedServer("tgi", "m")
    with pytest.raises(ValueError, match="needs start_command"):
        ManagedServer("command", "m")


def test_free_port_is_bindable():
    import socket

    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
