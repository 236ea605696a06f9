"""The model server a run starts once, on the controller, and the endpoint every process uses."""

from __future__ import annotations

import pytest

from ..agents import agent_names, needs_model
from ..modes import MODES
from ..settings import TermrlOptions
from .keys import ENDPOINT_KEY, SERVER_KEY


def played_by_model(agent: str) -> bool:
    """Whether --termrl-agent names a registered agent that a model behind an OpenAI-compatible endpoint plays.

    An agent only a ``pytest_termrl_make_agent`` hook supplies is not in the registry: not a model's.
    """
    return agent in agent_names() and needs_model(agent)


def start_model_server(config: pytest.Config, options: TermrlOptions) -> None:
    """On the controller only: start the model server once for the whole run, or note the given endpoint."""
    m = options.model
    if m.server and MODES[options.mode].plays_agent and played_by_model(options.agent):
        from ..serving.model_run import start_server

        try:
            if m.server_model == "embedded":
                from ..serving.embedded import resolve_model_options

                resolve_model_options(m)  # the bundled GGUF on llama.cpp; raises if not installed
            server = start_server(m, options.run_dir)
        except Exception as exc:  # noqa: BLE001 - reported to the user as a usage error
            raise pytest.UsageError(f"the {m.server} server did not start: {exc}") from None
        config.stash[SERVER_KEY] = server
        config.stash[ENDPOINT_KEY] = (server.base_url, server.model_id)
    elif m.base_url:
        config.stash[ENDPOINT_KEY] = (m.base_url, m.model)


def stop_model_server(config: pytest.Config) -> None:
    server = config.stash.get(SERVER_KEY, None)
    if server is not None:
        server.stop()


def model_endpoint(config: pytest.Config) -> tuple[str | None, str | None]:
    """(base URL, served model): handed to workers by the controller, else from this process's stash."""
    if hasattr(config, "workerinput") and "termrl_endpoint" in config.workerinput:
        base_url, served = config.workerinput["termrl_endpoint"]
        return base_url, served
    return config.stash.get(ENDPOINT_KEY, (None, None))
