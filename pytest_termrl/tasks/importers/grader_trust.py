"""Where a parsed grader's script runs the agent's code outside the trusted pytest.

A parsed grader's verdict is what its script prints, so a program of the agent's that the
script runs before pytest prints its summary (a ``make`` of the agent's Makefile, the
agent's binary, ``cargo build``) or after it can print status lines of its own, as it can
in Terminal-Bench. Nothing here can stop that; it is found in the script's text and named
(admission's notes, the self-check's summary), so a task author can move such steps inside
the tests, where pytest captures their output.
"""

from __future__ import annotations

import os

from .toolchains import TOOLCHAINS, command_words, shell_commands

PYTEST = ("pytest", "py.test")
QUIET = {
    "echo", "printf", "cd", "export", "set", "unset", "exit", "true", "false", ":", "mkdir", "cp", "mv", "rm", "ls", "cat",
    "test", "[", "[[", "source", ".", "apt-get", "apt", "pip", "pip3", "uv", "uvx", "curl", "wget", "chmod", "chown",
    "touch", "tee", "head", "tail", "grep", "sed", "awk", "wc", "sort", "sleep", "return", "shift", "local", "trap",
}
"""Commands whose output is their own (shell builtins, file tools, the installers' stand-ins)."""
INTERPRETERS = {"bash", "sh", "python", "python3", "node", "ruby", "perl"}
VERSION_ONLY = {"--version", "-version", "-V", "version"}


def _runs_pytest(words: list[str]) -> bool:
    names = [os.path.basename(w) for w in words[:4]]
    return bool(names) and (names[0] in PYTEST or "pytest" in names[1:3] and names[0] in ("python", "python3", "uv", "uvx"))


def _agents_code(words: list[str], workdir: str) -> bool:
    """Does this command run what the agent may have written (its build, its programs, its scripts)?"""
    first = words[0]
    name = os.path.basename(first)
    if name in TOOLCHAINS:
        return not set(words[1:]) <= VERSION_ONLY  # `gcc --version` prints the compiler's own line
    if "/" in first:
        return not first.startswith(("/usr/", "/bin/", "/tests/", "$TEST_DIR"))
    if name in INTERPRETERS and len(words) > 1 and not words[1].startswith("-"):
        script = words[1]  # relative paths are the workdir's: the grader runs there
        return script.startswith(workdir.rstrip("/") + "/") or not script.startswith(("/", "$"))
    return False


def agent_code_around_summary(text: str, workdir: str) -> tuple[str, ...]:
    """One line per command of a grader script that runs the agent's code before or after pytest's summary."""
    commands = [(line, command, command_words(command)) for line, command in shell_commands(text)]
    pytest_lines = [line for line, _, words in commands if words and _runs_pytest(words)]
    if not pytest_lines:
        return ()
    found = []
    for line, command, words in commands:
        if not words or _runs_pytest(words) or os.path.basename(words[0]) in QUIET or not _agents_code(words, workdir):
            continue
        when = "before" if line < pytest_lines[-1] else "after"
        shown = " ".join(words) if len(" ".join(words)) <= 60 else " ".join(words)[:57] + "..."
        found.append(f"line {line} runs `{shown}` {when} pytest prints its summary: what the agent's code or its build "
                     f"prints there is read by the parser too")
    return tuple(found)
