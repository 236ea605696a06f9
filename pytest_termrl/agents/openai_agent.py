"""An agent backed by a model behind an OpenAI-compatible chat API (vLLM, llama.cpp, ...).

The model gets one tool, ``bash``, and with ``terminal=True`` a second, ``send_keys``, that
types into a terminal session (Terminus' tmux model: keys in, the screen out). Each reply
with a tool call becomes one command or keystroke batch; a reply without one ends the episode. The agent itself enforces the tool-call and token
limits, because only it sees the server's usage figures, and it keeps the conversation
as plain OpenAI-format messages so a transcript loads directly as chat training data.

Every wait on the server (each request, its retries and the pauses between them) ends by
the episode's deadline (its start plus the wall clock): a server that stalls ends the
episode as ``timeout`` with the reason in ``Turn.error``, and the run goes on.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Callable

import openai

from pytest_termrl.agents.base import Agent, AgentContext, AgentUsage, Observation, Turn
from pytest_termrl.agents.tool_calls import BASH_TOOL, SEND_KEYS_TOOL, parse_bash_call, parse_tool_call
from pytest_termrl.report.record import EndReason

__all__ = ["BASH_TOOL", "NOT_RUN", "ONE_CALL_PER_TURN", "SEND_KEYS_TOOL", "OpenAIAgent", "budget_sentence", "parse_bash_call"]

ONE_CALL_PER_TURN = "Error: only one command per turn; this call was not run. Call bash again."
NOT_RUN = "[the command was not run: the episode ended]"


def budget_sentence(max_commands: int) -> str:
    """The line appended to the task when the episode has a disclosed command budget."""
    return (
        f"You may run at most {max_commands} commands (bash tool calls) for this task; "
        "plan accordingly."
    )


class EndpointFailure(Exception):
    """A request that failed for good; carries the server's message for Turn.error."""


class ContextOverflow(EndpointFailure):
    """The server refused the request because the conversation no longer fits its context."""


class OutOfTime(EndpointFailure):
    """The episode's wall clock ran out while the agent waited on the server."""


class _NoAnswer(Exception):
    """A call still running when its time was up (it is left behind in its thread)."""


class OpenAIAgent(Agent):
    """Plays one episode by asking a chat model for one bash tool call per turn."""

    name = "openai"
    needs_model = True
    tools = [BASH_TOOL]
    """The tool schemas sent with every request (training data needs them with the messages)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str = "EMPTY",
        temperature: float | None = None,
        top_p: float | None = None,
        top_k: int | None = None,
        seed: int | None = None,
        disable_thinking: bool = False,
        max_retries: int = 4,
        request_timeout: float = 300.0,
        backoff_s: float = 1.0,
        backoff_max_s: float = 30.0,
        client: openai.OpenAI | None = None,
        terminal: bool = False,
    ) -> None:
        super().__init__()
        self.terminal = terminal
        """Whether the model also gets ``send_keys`` (a terminal session) besides ``bash``."""
        self.tools = [BASH_TOOL, SEND_KEYS_TOOL] if terminal else [BASH_TOOL]
        self.base_url = base_url
        self.model = model
        self.temperature = temperature
        self.top_p = top_p
        self.top_k = top_k
        self.seed = seed
        self.disable_thinking = disable_thinking
        self.max_retries = max_retries
        self.request_timeout = request_timeout
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        # Our own retry loop (not the client's) so that backoff is bounded and testable.
        self._own_client = client is None
        self.client = client or openai.OpenAI(
            base_url=base_url, api_key=api_key, max_retries=0, timeout=request_timeout
        )
        self.context: AgentContext | None = None
        self.deadline = float("inf")
        """time.monotonic() when the episode's wall clock runs out (set by start())."""
        self.end_reason: EndReason | None = None
        self.error: str | None = None
        """Why the server failed the episode ('server_error'), or why the wall clock ran out
        while the agent waited on it ('timeout'); also Turn.error, hence the harness error."""
        self._reset()

    # -- episode -------------------------------------------------------------------------

    def _reset(self) -> None:
        self.endpoint_failed = False
        """Whether the server stopped answering (no reply, or transient errors past the retries):
        a pool of several endpoints then takes this one out of rotation."""
        self.end_reason = None
        self.error = None
        self.end_detail: str | None = None
        self._pending_id: str | None = None
        self._deferred: list[dict] = []
        self._last_malformed = False
        self._last_context_tokens = 0
        self._call_seq = 0
        self._seen_ids: set[str] = set()

    def begin(self, context: AgentContext) -> str:
        """A phase's fresh state (usage, clock, context); the task as the model reads it (with its command budget)."""
        self.usage = AgentUsage()
        self._reset()
        self.context = context
        self.deadline = time.monotonic() + context.limits.wall_clock_s
        instruction = context.instruction.rstrip()
        if context.limits.max_commands is not None:
            instruction += "\n\n" + budget_sentence(context.limits.max_commands)
        return instruction

    def start(self, context: AgentContext) -> None:
        """Begin a fresh conversation: system prompt, then the task (and its command budget)."""
        instruction = self.begin(context)
        self.messages = [
            {"role": "system", "content": context.system_prompt},
            {"role": "user", "content": instruction},
        ]

    def next_turn(self, last: Observation | None) -> Turn:
        if self.context is None:
            raise RuntimeError("OpenAIAgent.next_turn() called before start()")
        if self.end_reason is not None:
            return Turn(end_reason=self.end_reason, error=self.error)
        if self._pending_id is not None:
            text = last.as_tool_text() if last is not None else NOT_RUN
            self._answer(self._pending_id, text)
            self._pending_id = None
            self._flush_deferred()

        limits = self.context.limits
        while True:
            if self.usage.tool_calls >= limits.max_tool_calls:
                reason = EndReason.MALFORMED_TOOL_CALL if self._last_malformed else EndReason.TOOL_CALL_LIMIT
                return self._end(reason)
            generated_left = limits.max_generated_tokens - self.usage.completion_tokens
            context_left = limits.max_total_tokens - self._last_context_tokens
            if generated_left <= 0 or context_left <= 0:
                return self._end(EndReason.TOKEN_LIMIT)
            if self.time_left() <= 0:  # spent in the shell, not waiting on the server
                return self._end(EndReason.TIMEOUT)
            try:
                reply = self._request(max_tokens=min(generated_left, context_left))
            except ContextOverflow as exc:  # the model's doing, not the harness's: no Turn.error
                self.end_detail = str(exc)
                return self._end(EndReason.TOKEN_LIMIT)
            except OutOfTime as exc:
                return self._end(EndReason.TIMEOUT, str(exc))
            except EndpointFailure as exc:
                return self._end(EndReason.SERVER_ERROR, str(exc))
            turn = self._handle_reply(reply)
            if turn is not None:
                return turn

    # -- one reply -----------------------------------------------------------------------

    def _handle_reply(self, reply: Any) -> Turn | None:
        """Record the assistant message and decide: a command, an end, or ask again (None)."""
        message = reply.choices[0].message
        calls = [self._normalise_call(tc) for tc in (message.tool_calls or [])]
        assistant: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
        if calls:
            assistant["tool_calls"] = calls
        self.messages.append(assistant)

        limits = self.context.limits  # type: ignore[union-attr]
        if (
            self.usage.completion_tokens > limits.max_generated_tokens
            or self._last_context_tokens > limits.max_total_tokens
            or reply.choices[0].finish_reason == "length"  # cut off at max_tokens: budget spent
        ):
            for call in calls:
                self._answer(call["id"], "[not run: the token limit was exceeded]")
            return self._end(EndReason.TOKEN_LIMIT)
        if not calls:
            return self._end(EndReason.NO_TOOL_CALL)

        self.usage.tool_calls += len(calls)
        first, extra = calls[0], calls[1:]
        self._deferred = [
            {"role": "tool", "tool_call_id": c["id"], "content": ONE_CALL_PER_TURN} for c in extra
        ]
        fn = first["function"]
        turn, problem = parse_tool_call(fn["name"], fn["arguments"], self.terminal)
        if turn is None:
            self.usage.malformed_tool_calls += 1
            self._last_malformed = True
            self._answer(first["id"], problem or "")
            self._flush_deferred()
            return None
        self._last_malformed = False
        self._pending_id = first["id"]
        return turn

    def _normalise_call(self, tc: Any) -> dict[str, Any]:
        """A plain-dict tool call with an id (some servers omit ids; every call needs one)."""
        self._call_seq += 1
        fn = getattr(tc, "function", None)
        name = getattr(fn, "name", None) or getattr(tc, "name", None) or ""
        args = getattr(fn, "arguments", None)
        if args is None:
            args = getattr(tc, "input", "") or ""
        if not isinstance(args, str):
            args = json.dumps(args)
        call_id = getattr(tc, "id", None) or f"call_{self._call_seq}"
        if call_id in self._seen_ids:  # ids must be unique within the conversation
            call_id = f"{call_id}_{self._call_seq}"
        self._seen_ids.add(call_id)
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}

    def _answer(self, call_id: str, text: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": text})

    def _flush_deferred(self) -> None:
        self.messages.extend(self._deferred)
        self._deferred = []

    def _end(self, reason: EndReason, error: str | None = None) -> Turn:
        self.end_reason = reason
        self.error = error
        return Turn(end_reason=reason, error=error)

    # -- the server ----------------------------------------------------------------------

    def request_kwargs(self, max_tokens: int) -> dict[str, Any]:
        """The arguments of one chat-completions call (sampling options only when set)."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": self.messages,
            "tools": self.tools,
            "tool_choice": "auto",
            "max_tokens": max_tokens,
        }
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.top_p is not None:
            kwargs["top_p"] = self.top_p
        if self.seed is not None:
            kwargs["seed"] = self.seed
        extra: dict[str, Any] = {}
        if self.top_k is not None:
            extra["top_k"] = self.top_k
        if self.disable_thinking:
            extra["chat_template_kwargs"] = {"enable_thinking": False}
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    def time_left(self) -> float:
        """Seconds until the episode's wall clock runs out."""
        return self.deadline - time.monotonic()

    def _request(self, max_tokens: int) -> Any:
        """One completion, retrying transient failures; records usage; raises EndpointFailure.

        Each attempt may take at most ``min(time left, request_timeout)``; a pause before a
        retry that would end past the deadline is not taken.
        """
        kwargs = self.request_kwargs(max_tokens)
        attempt = 0
        last: str | None = None
        started = time.monotonic()
        while True:
            t0 = time.monotonic()
            left = self.deadline - t0
            timeout = min(left, self.request_timeout)
            try:
                reply = _call_within(timeout + _GRACE_S, self.client.chat.completions.create,
                                     timeout=timeout, **kwargs)
                break
            except (_NoAnswer, openai.APITimeoutError) as exc:
                if timeout >= left:  # this attempt had all the time that was left
                    self.endpoint_failed = True
                    raise OutOfTime(self._no_answer(left, attempt, last)) from None
                transient, overflow = True, False
                message = (f"APITimeoutError: {exc.message}" if isinstance(exc, openai.APIError)
                           else f"APITimeoutError: no reply within {_seconds(timeout)} s")
            except openai.APIStatusError as exc:
                transient = exc.status_code == 429 or exc.status_code >= 500
                message = f"HTTP {exc.status_code}: {exc.message}"
                overflow = _is_context_overflow(exc)
            except openai.APIConnectionError as exc:
                transient, overflow = True, False
                message = f"{type(exc).__name__}: {exc.message}"
            except openai.OpenAIError as exc:  # e.g. a response that does not parse
                transient, overflow = False, False
                message = f"{type(exc).__name__}: {exc}"
            if not transient:
                if overflow:
                    raise ContextOverflow(message)
                raise EndpointFailure(message)
            if attempt >= self.max_retries:
                self.endpoint_failed = True
                raise EndpointFailure(f"{message} (gave up after {attempt + 1} attempts)")
            pause = min(self.backoff_max_s, self.backoff_s * 2**attempt)
            if pause >= self.time_left():
                self.endpoint_failed = True
                raise EndpointFailure(f"{message} (gave up after {attempt + 1} attempts: the next "
                               f"would start after the episode's {self._wall_clock()} s wall "
                               "clock runs out)")
            time.sleep(pause)
            attempt += 1
            last = message
        if not getattr(reply, "choices", None):
            raise EndpointFailure("the server returned no choices")
        self._record_usage(reply, attempts=attempt + 1,
                           latency=time.monotonic() - t0, elapsed=time.monotonic() - started)
        return reply

    def _wall_clock(self) -> str:
        return f"{self.context.limits.wall_clock_s:g}" if self.context else "?"

    def _no_answer(self, left: float, attempt: int, last: str | None) -> str:
        """Why the turn ended when the deadline passed during a request."""
        text = (f"the model server did not answer within the {_seconds(left)} s left of the "
                f"episode's {self._wall_clock()} s wall clock ({self.base_url})")
        if last is not None:
            text += f"; attempt {attempt + 1}, the one before failed with {last}"
        return text

    def _record_usage(self, reply: Any, attempts: int, latency: float, elapsed: float) -> None:
        """Generated tokens add up; the context size is the last prompt plus its completion."""
        usage = getattr(reply, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        self.usage.prompt_tokens += prompt
        self.usage.completion_tokens += completion
        self._last_context_tokens = prompt + completion
        self.usage.total_tokens = self._last_context_tokens
        choice = reply.choices[0]
        self.usage.turns.append(
            {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "latency_s": round(latency, 4),
                "elapsed_s": round(elapsed, 4),
                "attempts": attempts,
                "finish_reason": choice.finish_reason,
                "tool_calls": len(choice.message.tool_calls or []),
            }
        )

    # -- output --------------------------------------------------------------------------

    def transcript(self) -> list[dict]:
        """The messages, with any call still awaiting its result answered as not run.

        Every ``tool_call_id`` then has a tool message, so the list is valid chat data
        even when the episode loop stopped right after a command (budget, wall clock).
        """
        messages = [dict(m) for m in self.messages]
        if self._pending_id is not None:
            messages.append({"role": "tool", "tool_call_id": self._pending_id, "content": NOT_RUN})
            messages.extend(dict(m) for m in self._deferred)
        return messages

    def close(self) -> None:
        if self._own_client:
            self.client.close()


_GRACE_S = 0.25
"""How long past an attempt's own timeout the agent still waits for the client to give up."""


def _call_within(seconds: float, fn: Callable[..., Any], **kwargs: Any) -> Any:
    """``fn(**kwargs)``, or _NoAnswer once ``seconds`` have passed without it returning.

    The client's timeouts bound each connect and each read, not a whole reply: a server that
    sends a byte now and then would hold a request far past them. The call runs in a daemon
    thread, so one that is given up on is left behind (its reply, if any, is dropped).
    """
    outcome: dict[str, Any] = {}

    def call() -> None:
        try:
            outcome["value"] = fn(**kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            outcome["error"] = exc

    worker = threading.Thread(target=call, name="termrl-model-request", daemon=True)
    worker.start()
    worker.join(max(seconds, 0.0))
    if worker.is_alive():
        raise _NoAnswer
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _seconds(value: float) -> str:
    """A duration as a person reads it: 12, 3.4, 0.55."""
    if value >= 10:
        return f"{value:.0f}"
    return f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def _is_context_overflow(exc: Exception) -> bool:
    """vLLM and llama.cpp answer 400 when prompt + max_tokens exceeds the model's context."""
    text = str(getattr(exc, "message", exc)).lower()
    return getattr(exc, "status_code", None) == 400 and (
        "context length" in text or "context window" in text or "maximum context" in text
    )
