"""The conversation an episode starts from: the openai agent's first messages and its tool schemas.

Training builds its prompts (GRPO rows, the rollout agent's transcript, SFT examples'
``tools``) from these, so a trained model sees exactly what evaluation sends it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, cast

from .base import AgentContext
from .openai_agent import OpenAIAgent

if TYPE_CHECKING:
    import openai


def initial_messages(context: AgentContext) -> list[dict]:
    """System prompt, then the task (with the command budget sentence when one applies)."""
    # A stand-in for the client, never called: start() only builds the messages.
    agent = OpenAIAgent(base_url="http://unused.invalid/v1", model="unused", client=cast("openai.OpenAI", _NoClient()))
    agent.start(context)
    return [dict(m) for m in agent.messages]


def tool_schemas() -> list[dict]:
    """The tool schemas a model is sent with every request, as plain dicts."""
    return json.loads(json.dumps(OpenAIAgent.tools))


class _NoClient:
    """Stands in for the OpenAI client: building the first messages sends no request."""

    def close(self) -> None:  # pragma: no cover - never owned
        pass
