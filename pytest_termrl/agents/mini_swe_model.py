"""mini-swe-agent's model protocol over this project's endpoint: its tool-call parsing and templates, our requests.

mini-swe-agent reaches models through litellm. Here the request itself is the ``openai``
agent's (the same ``--termrl-base-url``/``--termrl-model``/``--termrl-api-key``, its retries
bounded by the episode's wall clock, its usage counts, endpoint rotation), because litellm's
retry loop can neither be cut at the episode's deadline nor stopped when the episode ends.
Everything mini-swe-agent decides about a reply stays its own: its ``bash`` tool schema,
:func:`parse_toolcall_actions` (and so its format errors), and the observation and
format-error templates of its config.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from types import SimpleNamespace
from typing import Any, Protocol

from minisweagent.exceptions import FormatError
from minisweagent.models.utils.actions_toolcall import format_toolcall_observation_messages, parse_toolcall_actions

from .base import AgentUsage


@dataclass(frozen=True)
class Reply:
    """One completion as mini-swe-agent's model needs it: text, tool calls (plain dicts, each with a unique id)."""

    content: str
    tool_calls: list[dict]
    finish_reason: str | None
    usage: dict[str, int]


class Endpoint(Protocol):
    """What the model asks of the agent: one completion of the conversation, within the episode's limits."""

    usage: AgentUsage

    def complete(self, messages: list[dict]) -> Reply:
        """The model's reply; raises :class:`~.mini_swe_env.EpisodeOver` when a limit, the server or the episode ends the run."""
        ...


@dataclass
class EndpointModelConfig:
    """The model section of mini-swe-agent's config that this model reads (its templates), and the served name."""

    model_name: str
    observation_template: str
    format_error_template: str
    endpoint: str = ""


class EndpointModel:
    """mini-swe-agent's ``Model`` protocol: query, format_message, format_observation_messages, get_template_vars, serialize."""

    def __init__(self, endpoint: Endpoint, config: EndpointModelConfig) -> None:
        self.endpoint = endpoint
        self.config = config

    def query(self, messages: list[dict], **kwargs: Any) -> dict:
        """Ask the endpoint; the assistant message with its parsed actions, or mini-swe-agent's FormatError."""
        reply = self.endpoint.complete(api_messages(messages))
        self.endpoint.usage.tool_calls += len(reply.tool_calls)
        extra: dict[str, Any] = {"cost": 0.0, "usage": reply.usage, "finish_reason": reply.finish_reason,
                                 "timestamp": time.time()}
        calls = [SimpleNamespace(id=c["id"], function=SimpleNamespace(**c["function"])) for c in reply.tool_calls]
        try:
            actions = parse_toolcall_actions(calls, format_error_template=self.config.format_error_template,
                                             template_kwargs={"finish_reason": reply.finish_reason})
        except FormatError as exc:
            self.endpoint.usage.malformed_tool_calls += 1
            exc.messages[0]["extra"].update(extra, response=assistant_message(reply))
            raise
        message = assistant_message(reply)
        message["extra"] = {"actions": actions, **extra}
        return message

    def format_message(self, **kwargs: Any) -> dict:
        return dict(kwargs)

    def format_observation_messages(self, message: dict, outputs: list[dict], template_vars: dict | None = None) -> list[dict]:
        return format_toolcall_observation_messages(
            actions=message.get("extra", {}).get("actions", []),
            outputs=outputs,
            observation_template=self.config.observation_template,
            template_vars=template_vars,
        )

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        return {**asdict(self.config), **kwargs}

    def serialize(self) -> dict:
        return {"info": {"config": {"model": asdict(self.config),
                                    "model_type": f"{type(self).__module__}.{type(self).__name__}"}}}


def assistant_message(reply: Reply) -> dict:
    """The reply as an OpenAI-format assistant message (tool calls only when there are some)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [dict(c) for c in reply.tool_calls]
    return message


def api_messages(messages: list[dict]) -> list[dict]:
    """mini-swe-agent's messages as the chat API takes them: its ``extra`` bookkeeping left out."""
    return [{k: v for k, v in m.items() if k != "extra"} for m in messages]
