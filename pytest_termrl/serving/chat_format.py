"""The embedded model's chat format: the conversation as a terminal session in a Markdown document.

The bundled model is the pretrained Gemma 3 270M: its GGUF carries no chat template and it
was never tuned to follow turns (asked in Gemma's ``<start_of_turn>`` turns, it repeats the
question). What it does is continue documents, and a Markdown page with shell blocks is a
document it has read many of. So the conversation is rendered as one, and each of the
model's turns starts inside an open ``bash`` block: what it writes up to the closing fence
is the command. Tool results are ``text`` blocks. A turn whose block holds only ``exit``
(or nothing) ends the episode; the model's prose, if any, rides along as ``#`` comments.

One definition serves both sides: the embedded server's chat handler renders a request's
messages with :func:`render_prompt` and reads the model's reply with :func:`parse_reply`;
training renders an example with :func:`segments`, so what a trained model learns is the
token sequence the server feeds it. No third-party code: pure text in, text out::

    SYSTEM PROMPT

    TOOL DESCRIPTION

    ## Task

    TASK

    ## Terminal session

    ```bash
    ls -la
    ```<end_of_turn>
    ```text
    OUTPUT
    ```
    ```bash
    exit
    ```<end_of_turn>

Generation stops at the closing fence (``<end_of_turn>``, Gemma's end-of-turn token, closes
each turn after it, so training and GRPO have one token that ends a turn). The format offers
one tool, a shell that takes one string: the openai agent's ``bash``. The one command it
cannot carry whole is one holding a line that starts with a fence (a heredoc writing
Markdown): the command ends there, as a reader of the page would read it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

FORMAT_NAME = "termrl-session"
"""The ``--chat_format`` name the embedded server registers this handler under."""

END = "<end_of_turn>"
"""Closes each of the model's turns, after its block (one special token)."""
FENCE = "```"
CALL_CLOSE = "\n" + FENCE
RESULT_OPEN, RESULT_CLOSE = FENCE + "text\n", "\n" + FENCE
SHELL = "bash"
"""The openai agent's tool: a block's language is the name of the tool it calls."""


def call_open(name: str) -> str:
    """The fence that opens a call of tool ``name``."""
    return f"{FENCE}{name}\n"


CALL_OPEN = call_open(SHELL)
GENERATION_PROMPT = CALL_OPEN
"""Every turn of the model's starts inside a block of its shell (the agent's ``bash``)."""
STOP = (CALL_CLOSE, END)
"""Generation ends with its block: the harness runs one command a turn."""
DONE = "exit"
"""A block holding only this (or nothing) is the model saying it is done."""

TASK_HEADING, SESSION_HEADING = "## Task", "## Terminal session"
TOOLS_TEXT = (
    "Commands run one block at a time: each ```bash block is run in the shell and its output "
    "and exit code follow in a ```text block. When the task is done, the last block is `exit`."
)


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


@dataclass(frozen=True)
class Shell:
    """The one tool the format offers: its name and the name of its string parameter."""

    name: str
    parameter: str
    description: str

    @classmethod
    def of(cls, tools: list[dict] | None) -> "Shell":
        tools = list(tools or [])
        if len(tools) != 1:
            raise ChatFormatError(f"tools: the {FORMAT_NAME} format offers one shell tool; got {len(tools)} tools")
        function = tools[0].get("function") or {}
        parameter = single_string_parameter(tools[0])
        if parameter is None:
            raise ChatFormatError(
                f"tools[0].function.parameters: the {FORMAT_NAME} format's tool takes one string (the command); "
                f"{function.get('name', '')!r} takes {json.dumps(function.get('parameters') or {}, sort_keys=True)[:120]}"
            )
        return cls(function.get("name", ""), parameter, (function.get("description") or "").strip())


def tools_text(shell: Shell) -> str:
    """What the model is told about its tool (after the system prompt)."""
    return f"{TOOLS_TEXT} ({shell.description})" if shell.description else TOOLS_TEXT


def _comments(text: str) -> str:
    return "".join(f"# {line}".rstrip() + "\n" for line in text.strip().splitlines())


def call_text(name: str, arguments, tools_by_name: dict[str, dict], where: str) -> str:
    """One tool call's block body: a one-string tool's string verbatim, else its arguments as JSON."""
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
        return arguments[verbatim]
    return json.dumps(arguments, ensure_ascii=False)


def segments(messages: list[dict], tools: list[dict] | None) -> list[Segment]:
    """The conversation as text, cut into prompt pieces and the model's (trainable) pieces.

    Ends after the last message; the prompt for the model's next turn adds
    the shell's opening fence. Each of the model's turns is its block's body, the closing
    fence and :data:`END`; the opening fence is the prompt's. Rendering without tools (or a
    call of another tool) works too, each block named for its tool, its arguments as JSON.
    """
    tools = list(tools or [])
    by_name = {(t.get("function") or {}).get("name", ""): t for t in tools}
    shell = Shell.of(tools) if tools else None
    out: list[Segment] = []
    system: str | None = None
    started = False
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        role = message.get("role")
        content = message.get("content")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise ChatFormatError(f"{where}.content: expected text, got {type(content).__name__}")
        if role not in ("system", "user", "assistant", "tool"):
            raise ChatFormatError(f"{where}.role: expected system, user, assistant or tool, got {role!r}")
        if role == "system":
            if started or system is not None:
                raise ChatFormatError(f"{where}.role: a system message comes first, once")
            system = content
        elif role == "user" and not started:
            head = [system.strip()] if system and system.strip() else []
            head += ([tools_text(shell)] if shell else []) + [TASK_HEADING, content.strip(), SESSION_HEADING]
            out.append(Segment("\n\n".join(head) + "\n\n"))
            started = True
        elif not started:
            raise ChatFormatError(f"{where}.role: the conversation starts with the user's task, got {role!r}")
        elif role == "user":
            out.append(Segment(content.strip() + "\n\n"))
        elif role == "tool":
            out.append(Segment(f"{RESULT_OPEN}{content.rstrip(chr(10))}{RESULT_CLOSE}\n"))
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            prose = _comments(content)
            names = [(c.get("function") or {}).get("name", "") for c in calls] or [shell.name if shell else SHELL]
            bodies = [call_text(names[j], (c.get("function") or {}).get("arguments"), by_name, f"{where}.tool_calls[{j}]")
                      for j, c in enumerate(calls)] or [DONE]
            out.append(Segment(call_open(names[0])))
            text = prose + bodies[0] + "".join(f"{CALL_CLOSE}\n{call_open(n)}{b}" for n, b in zip(names[1:], bodies[1:]))
            out.append(Segment(text + CALL_CLOSE + END, trainable=True))
            out.append(Segment("\n"))
    if not started:
        raise ChatFormatError("messages: the conversation has no user message (the task)")
    return out


def render_prompt(messages: list[dict], tools: list[dict] | None) -> str:
    """The server's prompt text for the model's next turn (BOS is the tokenizer's): it opens the shell's block."""
    name = Shell.of(tools).name if tools else SHELL
    return "".join(s.text for s in segments(messages, tools)) + call_open(name)


@dataclass(frozen=True)
class Reply:
    content: str
    tool_calls: list[dict]
    """``{"name", "arguments"}`` with arguments as a JSON string, in the order written."""


def close_stopped_call(text: str) -> str:
    """The reply as written when generation stopped at a stop string (llama.cpp drops it): every
    turn starts inside a block, so a stopped one is a finished block and gets its fence back."""
    return text if CALL_CLOSE in text else text + CALL_CLOSE


PROMPT, CONTINUATION = "$ ", "> "


def console_commands(body: str) -> str:
    """A block written as a console transcript (its first line starts with the ``$ `` prompt)
    read as one: the commands are its prompted lines and their ``> `` continuations, and the
    other lines are output the writer showed, not commands. Any other block is the command."""
    lines = body.split("\n")
    first = next((line for line in lines if line.strip()), "")
    if not first.startswith(PROMPT):
        return body
    kept: list[str] = []
    command = False
    for line in lines:
        if line.startswith(PROMPT):
            kept.append(line[len(PROMPT):])
            command = True
        elif command and line.startswith(CONTINUATION):
            kept.append(line[len(CONTINUATION):])
        else:
            command = False
    return "\n".join(kept)


def parse_reply(text: str, tools: list[dict] | None) -> Reply:
    """What the model wrote after the shell's opening fence, as a message.

    A closed block is the command (verbatim, comments included; a console transcript's
    prompts taken off, :func:`console_commands`), unless it holds only ``exit``: then the
    turn is the model's last, its comments the content. A block the
    token limit cut before its fence is no call: its text is the content.
    """
    shell = Shell.of(tools)
    cut = text.find(CALL_CLOSE)
    if cut < 0:
        return Reply(text.strip(), [])
    body = console_commands(text[:cut])
    lines = body.splitlines()
    code = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not code or (len(code) == 1 and code[0].strip() == DONE):
        prose = "\n".join(line.lstrip()[1:].strip() for line in lines if line.lstrip().startswith("#"))
        return Reply(prose.strip(), [])
    return Reply("", [{"name": shell.name, "arguments": json.dumps({shell.parameter: body}, ensure_ascii=False)}])
