"""mini-swe-agent as an agent here (``--termrl-agent=mini-swe-agent``): its own loop and prompts, its commands in the sandbox.

mini-swe-agent's ``DefaultAgent`` runs unchanged, with the system and instance templates and
the model templates of its default config (``mini.yaml``, the one its ``mini`` command uses:
the model answers with ``bash`` tool calls and submits by running ``echo
COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``). It runs in a thread of its own: its environment
(:mod:`.mini_swe_env`) hands each command to this project's episode loop as a
:class:`~.base.Turn` and waits for the observation, so the loop's limits and monitors see every
command; its model (:mod:`.mini_swe_model`) asks the endpoint through the ``openai`` agent's
request path, which this class inherits (same options, retries within the wall clock,
usage counts, endpoint rotation).

Limits: mini-swe-agent's step limit is the episode's tool-call limit, its wall-clock limit the
episode's, its cost limit off (an endpoint of ours has no price; tokens are limited instead,
as for the ``openai`` agent); the command budget, the tool-call limit and the wall clock are
also the loop's own. Whatever ends the episode (mini-swe-agent's exit, a limit, the server,
the loop, a crash), :meth:`MiniSweAgent.close` (and every end of a phase) closes the handoff
and joins the thread.

The record keeps mini-swe-agent's trajectory (``mini_swe_agent``: one per agent phase, in
the shape its own trajectory files have); the transcript is its conversation as plain
OpenAI-format chat, every tool call answered.
"""

from __future__ import annotations

import json
import math
import os
import threading
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")  # mini-swe-agent prints a banner on import otherwise

from minisweagent import __version__ as MINI_SWE_AGENT_VERSION  # noqa: E402
from minisweagent.agents.default import DefaultAgent  # noqa: E402
from minisweagent.config import get_config_from_spec  # noqa: E402
from minisweagent.models.utils.actions_toolcall import BASH_TOOL as MINI_BASH_TOOL  # noqa: E402
from minisweagent.models.utils.actions_toolcall import format_toolcall_observation_messages  # noqa: E402

from ..report.record import EndReason  # noqa: E402
from .base import AgentContext, Observation, Turn  # noqa: E402
from .mini_swe_env import Ended, EpisodeEnvironment, EpisodeOver, Handoff  # noqa: E402
from .mini_swe_model import EndpointModel, EndpointModelConfig, Reply, assistant_message  # noqa: E402
from .openai_agent import NOT_RUN, ContextOverflow, EndpointFailure, OpenAIAgent, OutOfTime  # noqa: E402

__all__ = ["CONFIG", "EXIT_REASONS", "MINI_SWE_AGENT_VERSION", "MiniSweAgent", "chat_transcript"]

CONFIG = "mini.yaml"
"""mini-swe-agent's config whose prompts and templates play the episode (its ``mini`` command's default)."""

EXIT_REASONS = {
    "Submitted": EndReason.AGENT_DONE,
    "LimitsExceeded": EndReason.TOOL_CALL_LIMIT,  # its step limit (its cost limit is off)
    "TimeExceeded": EndReason.TIMEOUT,
    "RepeatedFormatError": EndReason.MALFORMED_TOOL_CALL,
}
"""mini-swe-agent's exit statuses as end reasons (an exit this project caused names its own reason)."""

WAIT_GRACE_S = 2.0
"""How long past the wall clock the loop waits for the thread's next command (its requests end by the deadline)."""
OBSERVATION_GRACE_S = 300.0
"""How long past the wall clock the thread waits for an observation at most: a safety net (closing wakes it at once)."""
JOIN_S = 5.0
"""How long ending a phase waits for the thread to return."""


@dataclass
class _Phase:
    """One run of mini-swe-agent's loop (one per agent phase): its agent, environment, model, handoff and thread."""

    mini: DefaultAgent
    env: EpisodeEnvironment
    model: EndpointModel
    handoff: Handoff
    thread: threading.Thread
    waiting: bool = False
    """Whether the thread waits for the observation of the command the last Turn carried."""
    over: bool = False


class MiniSweAgent(OpenAIAgent):
    """Plays one episode with mini-swe-agent's ``DefaultAgent``, its commands run by the episode loop."""

    name = "mini-swe-agent"
    needs_model = True

    def __init__(self, base_url: str, model: str, *, config: str = CONFIG, **kwargs: Any) -> None:
        if kwargs.get("terminal"):
            raise ValueError("mini-swe-agent runs bash commands only; it has no terminal session (drop --termrl-terminal)")
        super().__init__(base_url, model, **kwargs)
        self.tools = [MINI_BASH_TOOL]
        self.config_spec = config
        self.mini_config: dict = get_config_from_spec(config)
        """mini-swe-agent's config (agent, environment, model sections), as its own loader reads it."""
        self.trajectories: list[dict] = []
        """mini-swe-agent's trajectory of each agent phase played so far (the record's ``mini_swe_agent``)."""
        self._phase: _Phase | None = None
        self._outgoing: list[dict] = []

    # -- the episode loop's side ---------------------------------------------------------------

    def start(self, context: AgentContext) -> None:
        """Start mini-swe-agent's loop on the task in its thread (a previous phase's is ended first)."""
        self._end_phase()
        task = self.begin(context)
        handoff = Handoff()
        env = EpisodeEnvironment(handoff, self.deadline + OBSERVATION_GRACE_S)
        sections = self.mini_config.get("model") or {}
        model = EndpointModel(self, EndpointModelConfig(
            model_name=self.model or "", endpoint=self.base_url,
            observation_template=sections["observation_template"],
            format_error_template=sections["format_error_template"],
        ))
        mini = DefaultAgent(model, env, **self.agent_settings(context))
        thread = threading.Thread(target=_play, args=(mini, task, handoff), name="termrl-mini-swe-agent", daemon=True)
        self._phase = _Phase(mini, env, model, handoff, thread)
        thread.start()

    def agent_settings(self, context: AgentContext) -> dict[str, Any]:
        """mini-swe-agent's agent section with the episode's limits in place of its own."""
        settings = {k: v for k, v in (self.mini_config.get("agent") or {}).items() if k != "mode"}
        settings.update(
            step_limit=context.limits.max_tool_calls,
            cost_limit=0.0,
            wall_time_limit_seconds=max(1, math.ceil(context.limits.wall_clock_s)),
            output_path=None,
        )
        return settings

    def next_turn(self, last: Observation | None) -> Turn:
        phase = self._phase
        if phase is None or self.context is None:
            raise RuntimeError("MiniSweAgent.next_turn() called before start()")
        if self.end_reason is not None:
            return Turn(end_reason=self.end_reason, error=self.error)
        if phase.waiting:
            phase.handoff.answer(last if last is not None else Observation("", None, note="the command was not run"))
            phase.waiting = False
        item = phase.handoff.next(self.time_left() + WAIT_GRACE_S)
        if item is None:
            return self._end(EndReason.TIMEOUT, f"mini-swe-agent neither ran a command nor stopped within the "
                                                 f"episode's {self._wall_clock()} s wall clock")
        if isinstance(item, Ended):
            return self._end(item.reason, item.error)
        phase.waiting = True
        return Turn(command=item)

    def transcript(self) -> list[dict]:
        """The phase's conversation as OpenAI-format chat (its loop is ended first: the loop asked for it because it stopped)."""
        phase = self._phase
        if phase is None:
            return []
        self._end_phase()
        return chat_transcript(phase.mini.messages, phase.env.outputs, phase.model.config.observation_template)

    def record_fields(self) -> dict:
        self._end_phase()
        return {"mini_swe_agent": list(self.trajectories)}

    def close(self) -> None:
        self._end_phase()
        super().close()

    # -- mini-swe-agent's side (called in its thread) -----------------------------------------

    def complete(self, messages: list[dict]) -> Reply:
        """One completion within the episode's limits (the ``openai`` agent's request); EpisodeOver when the episode ends the run."""
        if self.context is None or (self._phase is not None and self._phase.handoff.closed):
            raise EpisodeOver(EndReason.STOPPED, "the episode ended before the model was asked")
        limits = self.context.limits
        generated_left = limits.max_generated_tokens - self.usage.completion_tokens
        context_left = limits.max_total_tokens - self._last_context_tokens
        if generated_left <= 0 or context_left <= 0:
            raise EpisodeOver(EndReason.TOKEN_LIMIT, "the token limit was reached")
        if self.time_left() <= 0:
            raise EpisodeOver(EndReason.TIMEOUT, "the episode's wall clock ran out")
        self._outgoing = messages
        try:
            response = self._request(max_tokens=min(generated_left, context_left))
        except ContextOverflow as exc:  # the model's doing, not the harness's: no harness error
            raise EpisodeOver(EndReason.TOKEN_LIMIT, str(exc)) from None
        except OutOfTime as exc:
            raise EpisodeOver(EndReason.TIMEOUT, str(exc), error=str(exc)) from None
        except EndpointFailure as exc:
            raise EpisodeOver(EndReason.SERVER_ERROR, str(exc), error=str(exc)) from None
        finally:
            self._outgoing = []
        choice = response.choices[0]
        turn = self.usage.turns[-1]
        reply = Reply(
            content=choice.message.content or "",
            tool_calls=[self._normalise_call(tc) for tc in (choice.message.tool_calls or [])],
            finish_reason=choice.finish_reason,
            usage={"prompt_tokens": turn["prompt_tokens"], "completion_tokens": turn["completion_tokens"]},
        )
        if (self.usage.completion_tokens > limits.max_generated_tokens
                or self._last_context_tokens > limits.max_total_tokens
                or choice.finish_reason == "length"):  # cut off at max_tokens: the budget is spent
            raise EpisodeOver(EndReason.TOKEN_LIMIT, "the token limit was exceeded", response=assistant_message(reply))
        return reply

    def request_kwargs(self, max_tokens: int) -> dict[str, Any]:
        """The ``openai`` agent's request, with mini-swe-agent's conversation and its ``bash`` tool."""
        kwargs = super().request_kwargs(max_tokens)
        kwargs["messages"] = self._outgoing
        return kwargs

    # -- phases ------------------------------------------------------------------------------

    def _end_phase(self) -> None:
        """End the current phase's run (wake its thread, join it) and keep its trajectory; idempotent."""
        phase = self._phase
        if phase is None or phase.over:
            return
        phase.over = True
        phase.handoff.close()
        phase.thread.join(JOIN_S)
        self.trajectories.append(trajectory(phase.mini))


def _play(mini: DefaultAgent, task: str, handoff: Handoff) -> None:
    """The thread: mini-swe-agent's run, then its end handed to the loop (a crash is a harness error)."""
    try:
        ended = ended_by(mini.run(task))
    except Exception as exc:  # noqa: BLE001 - handed to the loop as the episode's harness error
        ended = Ended(EndReason.HARNESS_ERROR, f"mini-swe-agent stopped on {type(exc).__name__}: {exc}")
    handoff.finished(ended)


def ended_by(exit_extra: dict) -> Ended:
    """The end reason of a run by its exit message's ``extra``: this project's own, or mini-swe-agent's status mapped."""
    if exit_extra.get("end_reason"):
        return Ended(EndReason(exit_extra["end_reason"]), exit_extra.get("error"))
    status = str(exit_extra.get("exit_status", ""))
    if status in EXIT_REASONS:
        return Ended(EXIT_REASONS[status])
    return Ended(EndReason.HARNESS_ERROR, f"mini-swe-agent exited with status {status!r}")


def trajectory(mini: DefaultAgent) -> dict:
    """mini-swe-agent's trajectory as its own files hold it (info, messages, format), as plain JSON data."""
    return json.loads(json.dumps(mini.serialize(), default=str))


def chat_transcript(messages: list[dict], outputs: list[dict], observation_template: str) -> list[dict]:
    """mini-swe-agent's messages as OpenAI-format chat: no ``extra``, no exit message, every tool call answered.

    The k-th tool call ran as the k-th command (``outputs[k]``). A call its loop left unanswered
    is answered here: with its output rendered by the observation template when it ran (the
    submitting ``echo``), else as not run (the episode stopped first).
    """
    chat: list[dict] = []
    pending: list[tuple[int, dict]] = []
    calls = 0

    def answer_pending() -> None:
        for index, call in pending:
            if index < len(outputs):
                content = format_toolcall_observation_messages(
                    actions=[{"command": "", "tool_call_id": call["id"]}], outputs=[outputs[index]],
                    observation_template=observation_template)[0]["content"]
            else:
                content = NOT_RUN
            chat.append({"role": "tool", "tool_call_id": call["id"], "content": content})
        pending.clear()

    for message in messages:
        role = message.get("role")
        if role == "tool":
            pending[:] = [(i, c) for i, c in pending if c["id"] != message.get("tool_call_id")]
            chat.append({"role": "tool", "tool_call_id": message.get("tool_call_id"), "content": str(message.get("content") or "")})
            continue
        answer_pending()
        if role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": str(message.get("content") or "")}
            if message.get("tool_calls"):
                entry["tool_calls"] = [dict(c) for c in message["tool_calls"]]
                for call in entry["tool_calls"]:
                    pending.append((calls, call))
                    calls += 1
            chat.append(entry)
        elif role in ("system", "user"):
            chat.append({"role": role, "content": message.get("content")})
    answer_pending()
    return chat
