"""The tools a model is offered (``bash``, and ``send_keys`` for the terminal session) and how its calls are read.

A well-formed call becomes the agent's :class:`~.base.Turn`; anything else becomes the error
text the model is shown instead, so that it can call again.
"""

from __future__ import annotations

import json
from typing import Any

from .base import Turn
from ..sandbox.base import KeystrokeBatch

BASH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": (
            "Run one bash command in a persistent shell and return its output and exit code."
        ),
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
}

SEND_KEYS_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "send_keys",
        "description": (
            "Type keys into an interactive terminal session (a pseudo-terminal running bash) and return "
            "the screen after waiting up to wait_s seconds (less once the prompt is back or the screen is "
            "quiet). Each item of keys is text to type (a newline presses Enter) or one key name as tmux "
            "spells it: Enter, Escape, Tab, BSpace, Up, Down, Left, Right, C-c, C-d, C-z, M-x, F1..F12. "
            "Use it for interactive programs (a REPL, an editor, a pager, a prompt that asks for input)."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "keys": {"type": "array", "items": {"type": "string"}},
                "wait_s": {"type": "number", "description": "longest wait for the screen, in seconds (default 1)"},
            },
            "required": ["keys"],
        },
    },
}


MAX_WAIT_S = 30.0
"""The longest ``wait_s`` a model may ask of ``send_keys`` (the command timeout caps it too)."""


def parse_tool_call(name: str, arguments: str, terminal: bool = False) -> tuple[Turn | None, str | None]:
    """``(turn, None)`` for a well-formed ``bash`` (or, with ``terminal``, ``send_keys``) call, else ``(None, error for the model)``."""
    if terminal and name == "send_keys":
        return parse_keys_call(arguments)
    if terminal and name != "bash":
        return None, f"Error: unknown tool {name!r}; the tools are 'bash' and 'send_keys'."
    command, problem = parse_bash_call(name, arguments)
    return (Turn(command=command) if command is not None else None), problem


def parse_keys_call(arguments: str) -> tuple[Turn | None, str | None]:
    """A ``send_keys`` call's turn, or the error the model is shown."""
    usage = 'Call send_keys with arguments like {"keys": ["python3", "Enter"], "wait_s": 1}.'
    try:
        args = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError as exc:
        return None, f"Error: the tool call arguments are not valid JSON ({exc}). {usage}"
    keys = args.get("keys") if isinstance(args, dict) else None
    if isinstance(keys, str):
        keys = [keys]
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
        return None, f"Error: 'keys' must be a non-empty list of strings. {usage}"
    wait = args.get("wait_s", 1.0)
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or wait < 0:
        return None, f"Error: 'wait_s' must be a number of seconds, 0 or more. {usage}"
    return Turn(keys=KeystrokeBatch(tuple(keys), min(float(wait), MAX_WAIT_S))), None


def parse_bash_call(name: str, arguments: str) -> tuple[str | None, str | None]:
    """``(command, None)`` for a well-formed bash call, else ``(None, error for the model)``."""
    usage = 'Call the bash tool with arguments like {"command": "ls -la"}.'
    if name != "bash":
        return None, f"Error: unknown tool {name!r}; the only tool is 'bash'. {usage}"
    try:
        args = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError as exc:
        return None, f"Error: the tool call arguments are not valid JSON ({exc}). {usage}"
    if not isinstance(args, dict):
        return None, f"Error: the tool call arguments must be a JSON object. {usage}"
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        return None, f"Error: the 'command' argument is missing or empty. {usage}"
    return command, None
