"""The embedded model's chat format: Gemma's turns, tool calls as tagged blocks, tool results shown.

One definition serves both sides: the embedded server's chat handler renders a request's
messages with :func:`render_prompt` and reads the model's reply with :func:`parse_reply`;
training renders an example with :func:`segments`, so what a trained model learns is the
token sequence the server feeds it. No third-party code: pure text in, text out.

The format, for the openai agent's one tool (``bash``, one string argument)::

    <start_of_turn>user
    SYSTEM PROMPT

    TOOL DESCRIPTION (how to call, the tools)

    TASK<end_of_turn>
    <start_of_turn>model
    <tool_call>bash
    ls -la
    </tool_call><end_of_turn>
    <start_of_turn>user
    <tool_response>
    OUTPUT
    </tool_response><end_of_turn>
    <start_of_turn>model
    Done.<end_of_turn>

Gemma has two roles, ``user`` and ``model``: the system prompt opens the first user turn,
and tool results are user turns (consecutive user-side messages share one turn). A tool
whose parameters are one string takes that string verbatim between the tags (no JSON
escaping of a shell script); any other tool takes its arguments as a JSON object.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

FORMAT_NAME = "termrl-gemma"
"""The ``--chat_format`` name the embedded server registers this handler under."""

START, END = "<start_of_turn>", "<end_of_turn>"
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
RESULT_OPEN, RESULT_CLOSE = "<tool_response>", "</tool_response>"
GENERATION_PROMPT = f"{START}model\n"
STOP = (END, CALL_CLOSE)
"""Generation ends with the turn or with its first tool call: the harness runs one call a
turn and the parser drops whatever follows a block, so generating it only spends tokens."""

TOOLS_HEADER = (
    "To run a tool, reply with a block that starts with {open}, the tool's name and a newline, "
    "then the argument, then a newline and {close}. Its result comes back in {result}. "
    "Reply without a block when you are done."
)

_CALL = re.compile(re.escape(CALL_OPEN) + r"([A-Za-z_][\w.-]*)\n(.*?)\n?" + re.escape(CALL_CLOSE), re.S)


class ChatFormatError(ValueError):
    """A conversation this format cannot render (names the message and the field)."""


@dataclass(frozen=True)
class Segment:
    """A piece of the rendered text; ``trainable`` pieces are what the model generates."""

    text: str
    trainable: bool = False


def single_string_parameter(tool: dict) -> str | None:
    """The name of the tool's only parameter when it is a string (passed verbatim), else None."""
    params = (tool.get("function") or {}).get("parameters") or {}
    props = params.get("properties") or {}
    if len(props) == 1:
        (name, schema), = props.items()
        if isinstance(schema, dict) and schema.get("type") == "string":
            return name
    return None


def tools_text(tools: list[dict]) -> str:
    """What the model is told about its tools (first user turn, after the system prompt)."""
    lines = [TOOLS_HEADER.format(open=CALL_OPEN, close=CALL_CLOSE, result=RESULT_OPEN), "", "Tools:"]
    for tool in tools:
        function = tool.get("function") or {}
        name = function.get("name", "")
        verbatim = single_string_parameter(tool)
        if verbatim is not None:
            argument = f"the {verbatim}, as plain text"
        else:
            argument = "a JSON object of " + json.dumps(function.get("parameters") or {}, sort_keys=True)
        description = (function.get("description") or "").strip()
        lines.append(f"- {name}: {description} Argument: {argument}.".replace("  ", " "))
    return "\n".join(lines)


def call_text(name: str, arguments, tools_by_name: dict[str, dict], where: str) -> str:
    """One tool call as the model writes it."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            raise ChatFormatError(f"{where}.function.arguments: not JSON: {arguments[:80]!r}") from None
    if not isinstance(arguments, dict):
        raise ChatFormatError(f"{where}.function.arguments: expected a JSON object, got {type(arguments).__name__}")
    tool = tools_by_name.get(name)
    verbatim = single_string_parameter(tool) if tool else None
    if verbatim is not None and set(arguments) == {verbatim} and isinstance(arguments[verbatim], str):
        body = arguments[verbatim]
    else:
        body = json.dumps(arguments, ensure_ascii=False)
    return f"{CALL_OPEN}{name}\n{body}\n{CALL_CLOSE}"


def segments(messages: list[dict], tools: list[dict] | None) -> list[Segment]:
    """The conversation as text, cut into prompt pieces and the model's (trainable) pieces.

    Ends after the last message; the prompt for the model's next turn adds
    :data:`GENERATION_PROMPT`. The newline after each ``<end_of_turn>`` belongs to the
    prompt, since generation stops at the turn's end.
    """
    tools = list(tools or [])
    by_name = {(t.get("function") or {}).get("name", ""): t for t in tools}
    out: list[Segment] = []
    user_parts: list[str] = []
    system: str | None = None
    first_user = True

    def flush_user() -> None:
        nonlocal first_user, system
        if not user_parts:
            return
        head = []
        if first_user:
            if system:
                head.append(system)
            if tools:
                head.append(tools_text(tools))
            first_user = False
        out.append(Segment(f"{START}user\n" + "\n\n".join(head + user_parts) + f"{END}\n"))
        user_parts.clear()

    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        role = message.get("role")
        content = message.get("content")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise ChatFormatError(f"{where}.content: expected text, got {type(content).__name__}")
        if role == "system":
            if not first_user or system is not None or user_parts:
                raise ChatFormatError(f"{where}.role: a system message comes first, once")
            system = content
        elif role == "user":
            user_parts.append(content)
        elif role == "tool":
            user_parts.append(f"{RESULT_OPEN}\n{content}\n{RESULT_CLOSE}")
        elif role == "assistant":
            if user_parts or first_user:
                flush_user()
            pieces = [content] if content else []
            for j, call in enumerate(message.get("tool_calls") or []):
                function = call.get("function") or {}
                pieces.append(call_text(function.get("name", ""), function.get("arguments"), by_name, f"{where}.tool_calls[{j}]"))
            out.append(Segment(GENERATION_PROMPT))
            out.append(Segment("\n".join(pieces) + END, trainable=True))
            out.append(Segment("\n"))
        else:
            raise ChatFormatError(f"{where}.role: expected system, user, assistant or tool, got {role!r}")
    flush_user()
    return out


def render_prompt(messages: list[dict], tools: list[dict] | None) -> str:
    """The server's prompt text for the model's next turn (BOS is the tokenizer's)."""
    return "".join(s.text for s in segments(messages, tools)) + GENERATION_PROMPT


@dataclass(frozen=True)
class Reply:
    content: str
    tool_calls: list[dict]
    """``{"name", "arguments"}`` with arguments as a JSON string, in the order written."""


def close_stopped_call(text: str) -> str:
    """The reply as written when generation stopped at :data:`CALL_CLOSE` (llama.cpp drops the
    stop string): a block left open at the end gets its closing tag back."""
    opened = text.rfind(CALL_OPEN)
    return text + CALL_CLOSE if opened >= 0 and CALL_CLOSE not in text[opened:] else text


def parse_reply(text: str, tools: list[dict] | None) -> Reply:
    """The model's text as a message: free text before the first block, and each tool call."""
    by_name = {(t.get("function") or {}).get("name", ""): t for t in (tools or [])}
    calls = []
    for match in _CALL.finditer(text):
        name, body = match.group(1), match.group(2)
        tool = by_name.get(name)
        verbatim = single_string_parameter(tool) if tool else None
        if verbatim is not None:
            arguments = json.dumps({verbatim: body}, ensure_ascii=False)
        else:
            arguments = body.strip()  # JSON as written; the agent reports it when it is not
        calls.append({"name": name, "arguments": arguments})
    first = text.find(CALL_OPEN) if calls else -1
    content = (text[:first] if first >= 0 else text).strip()
    return Reply(content, calls)
