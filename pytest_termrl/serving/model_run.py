"""The run-wide side of the model agent: start (or find) the server once, make agents for it."""

from __future__ import annotations

import shlex
from pathlib import Path

from ..agents.openai_agent import OpenAIAgent
from .server import ManagedServer


def start_server(model_options, run_dir: Path) -> ManagedServer:
    """Start the configured server and wait until it serves; the caller stops it."""
    m = model_options
    start_command = shlex.split(m.server_command) if m.server_command else None
    server = ManagedServer(
        kind=m.server,
        model=m.server_model or m.model or "model",
        extra_args=m.server_args,
        log_path=run_dir / f"{m.server}-server.log",
        start_command=start_command,
        health_timeout_s=m.server_timeout_s,
    )
    run_dir.mkdir(parents=True, exist_ok=True)
    return server.start()


def model_name(model_options, served_model: str | None) -> str:
    """The model name sent to the endpoint and recorded with each episode."""
    return model_options.model or served_model or "model"


def make_openai_agent(model_options, base_url: str, served_model: str | None, agent: str = "openai") -> OpenAIAgent:
    """The model's agent ``agent`` (``openai``, or an agent built on it such as ``mini-swe-agent``) for this endpoint."""
    from ..agents import AGENTS

    cls = AGENTS[agent]
    if not (isinstance(cls, type) and issubclass(cls, OpenAIAgent)):
        raise TypeError(f"the agent {agent!r} is not played through an OpenAI-compatible endpoint")
    m = model_options
    return cls(
        base_url=base_url,
        model=model_name(m, served_model),
        api_key=m.api_key,
        temperature=m.temperature,
        top_p=m.top_p,
        top_k=m.top_k,
        seed=m.seed,
        disable_thinking=m.disable_thinking,
        terminal=m.terminal,
    )
