"""Toolchains a task's grader script calls: which compilers and runtimes, and whether a bwrap sandbox has them.

A classic Terminal-Bench grader (``run-tests.sh``) or a Harbor ``tests/test.sh`` often builds
and runs the agent's code with a compiler or a language runtime: ``go test``, ``cargo test``,
``cmake`` and ``make``, ``gcc``, ``javac``, ``npm test``. On bwrap such a grader runs with the
host's toolchain, which the sandbox sees through its read-only ``/usr``, ``/bin`` and
``/lib``: a command counts as installed when it is on the sandbox's PATH
(``/usr/local/bin:/usr/bin:/bin``) and resolves inside those folders (a link into
``/opt`` or a home, such as rustup's ``~/.cargo/bin``, does not). A task whose grader needs
a toolchain that is not installed, or whose image installs one (``apt-get install -y
golang-go``) that is not, is refused when it is loaded, naming the script's or the
Dockerfile's line, the command and the Debian package that brings it
(:func:`task_toolchains`, :func:`check_toolchains`). A task whose image a bwrap sandbox cannot
stand in for anyway (``FROM golang:1.22``) is the docker backend's: its image brings its
toolchains, and nothing is checked here.

The commands are found in the script's text where a shell would run them: the first word
of a command at the start of a line or after ``&&``, ``||``, ``|``, ``;``, ``&``, ``(`` or
``then`` / ``do`` (past ``sudo``, ``env``, ``time``, ``exec``, ``timeout N`` and variable
assignments), by its base name (``/usr/bin/gcc`` is ``gcc``). Words in comments, in
quoted strings and in heredoc bodies are not commands.

:data:`TOOLCHAINS` maps each command to its toolchain and Debian package:

===============================  =====================  ==========================
command                          toolchain              Debian package
===============================  =====================  ==========================
``go``, ``gofmt``                Go                     ``golang-go``
``cargo``                        Rust (cargo)           ``cargo``
``rustc``                        Rust                   ``rustc``
``gcc``, ``cc``                  C (GCC)                ``gcc``
``g++``, ``c++``                 C++ (GCC)              ``g++``
``clang``, ``clang++``           C/C++ (Clang)          ``clang``
``make``                         make                   ``make``
``cmake``                        CMake                  ``cmake``
``ninja``                        Ninja                  ``ninja-build``
``javac``                        Java (JDK)             ``default-jdk-headless``
``java``                         Java (runtime)         ``default-jre-headless``
``mvn``                          Java (Maven)           ``maven``
``gradle``                       Java (Gradle)          ``gradle``
``node``, ``nodejs``             Node.js                ``nodejs``
``npm``, ``npx``                 Node.js (npm)          ``npm``
===============================  =====================  ==========================

:data:`PACKAGE_COMMANDS` is the reverse, for a Dockerfile's ``apt-get install`` of a
toolchain (``golang-go`` is there when ``go`` is).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from ...errors import TaskFormatError

SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
"""PATH inside the sandbox: the host's /usr and /bin are what a bwrap task gets."""
SANDBOX_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
"""The host folders a bwrap sandbox binds read-only: a toolchain resolving outside them is not seen there."""


@dataclass(frozen=True)
class Toolchain:
    """A compiler or runtime a grader may call, and the Debian package that installs it."""

    command: str
    name: str
    package: str


TOOLCHAINS: dict[str, Toolchain] = {
    tool.command: tool
    for tool in (
        Toolchain("go", "Go", "golang-go"),
        Toolchain("gofmt", "Go", "golang-go"),
        Toolchain("cargo", "Rust (cargo)", "cargo"),
        Toolchain("rustc", "Rust", "rustc"),
        Toolchain("gcc", "C (GCC)", "gcc"),
        Toolchain("cc", "C (GCC)", "gcc"),
        Toolchain("g++", "C++ (GCC)", "g++"),
        Toolchain("c++", "C++ (GCC)", "g++"),
        Toolchain("clang", "C/C++ (Clang)", "clang"),
        Toolchain("clang++", "C/C++ (Clang)", "clang"),
        Toolchain("make", "make", "make"),
        Toolchain("cmake", "CMake", "cmake"),
        Toolchain("ninja", "Ninja", "ninja-build"),
        Toolchain("javac", "Java (JDK)", "default-jdk-headless"),
        Toolchain("java", "Java (runtime)", "default-jre-headless"),
        Toolchain("mvn", "Java (Maven)", "maven"),
        Toolchain("gradle", "Java (Gradle)", "gradle"),
        Toolchain("node", "Node.js", "nodejs"),
        Toolchain("nodejs", "Node.js", "nodejs"),
        Toolchain("npm", "Node.js (npm)", "npm"),
        Toolchain("npx", "Node.js (npm)", "npm"),
    )
}
"""Command -> toolchain, for every command this module recognises."""

PACKAGE_COMMANDS: dict[str, str] = {
    "golang-go": "go", "golang": "go", "cargo": "cargo", "rustc": "rustc", "gcc": "gcc", "g++": "g++", "clang": "clang",
    "make": "make", "cmake": "cmake", "ninja-build": "ninja", "default-jdk": "javac", "default-jdk-headless": "javac",
    "openjdk-17-jdk": "javac", "openjdk-17-jdk-headless": "javac", "default-jre": "java", "default-jre-headless": "java",
    "openjdk-17-jre": "java", "openjdk-17-jre-headless": "java", "maven": "mvn", "gradle": "gradle", "nodejs": "node",
    "npm": "npm",
}
"""Debian package -> the command it installs, for the toolchain packages a Dockerfile may install."""

_PREFIXES = {"time", "exec", "command", "nohup", "builtin", "then", "do", "else", "elif", "if", "while", "until", "!", "{", "}"}
_OPTION_VALUES = {"sudo": ("-u", "-g", "-C", "-D", "-h"), "timeout": ("-s", "-k", "--signal", "--kill-after"), "env": ("-u", "-C", "-S")}
"""Options of the prefix commands that take the next word as their value."""
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")


@dataclass(frozen=True)
class ToolUse:
    """A toolchain command where the script runs it."""

    tool: Toolchain
    line: int
    command: str
    """The command as the script writes it (cut at 60 characters): ``go test ./...``."""


def _split_line(line: str) -> list[str]:
    """The simple commands of one shell line: cut at unquoted ``&& || | ; & ( )`` and backquotes, comments dropped.

    A ``)`` with no ``(`` before it ends a ``case`` pattern, which is no command.
    """
    parts, current, quote, depth, i = [], "", None, 0, 0
    while i < len(line):
        ch = line[i]
        if quote:
            current += ch
            if ch == "\\" and quote == '"' and i + 1 < len(line):
                current += line[i + 1]
                i += 1
            elif ch == quote:
                quote = None
        elif ch == "\\" and i + 1 < len(line):
            current += line[i:i + 2]
            i += 1
        elif ch in "'\"":
            quote = ch
            current += ch
        elif ch == "#" and (not current or current[-1].isspace()):
            break
        elif ch == ")" and depth == 0:
            current = ""  # a case pattern: ``go)`` runs nothing
        elif ch in "|;()`" or (ch == "&" and (line[i + 1:i + 2] == "&" or (current[-1:] not in ("<", ">") and line[i + 1:i + 2] != ">"))):
            depth += 1 if ch == "(" else -1 if ch == ")" else 0
            parts.append(current)
            current = ""
            if line[i:i + 2] in ("&&", "||", ";;", "|&"):
                i += 1
        else:
            current += ch
        i += 1
    parts.append(current)
    return [part.strip() for part in parts if part.strip()]


def _heredoc_words(line: str) -> list[tuple[bool, str]]:
    """(strips tabs, delimiter) of each heredoc a line opens (``<<EOF``, ``<<-'EOF'``), none inside quotes."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:
        return [(m.group(1) == "-", m.group(3)) for m in _HEREDOC.finditer(line)]
    found = []
    for index, token in enumerate(tokens[:-1]):
        if token in ("<<", "<<-"):
            word = tokens[index + 1]
            strip = token == "<<-" or word.startswith("-")
            word = word[1:] if word.startswith("-") else word
            if word:
                found.append((strip, word))
    return found


def command_words(command: str) -> list[str]:
    """The words of a simple command from the one it runs: past prefixes (``sudo -E``, ``env X=1``,
    ``timeout 30``, ``then``) and variable assignments (empty: it runs none)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    index = 0
    while index < len(words):
        word = words[index]
        if word in _PREFIXES or _ASSIGNMENT.match(word):
            index += 1
        elif word in ("env", "sudo", "timeout"):
            index += 1
            while index < len(words) and (words[index].startswith("-") or (word == "env" and _ASSIGNMENT.match(words[index]))):
                index += 2 if words[index] in _OPTION_VALUES.get(word, ()) else 1
            if word == "timeout":
                index += 1  # the duration
        else:
            return words[index:]
    return []


def shell_commands(text: str) -> list[tuple[int, str]]:
    """(line number, simple command) of each command a shell script runs, heredoc bodies and comments left out."""
    found: list[tuple[int, str]] = []
    lines = text.splitlines()
    heredocs: list[tuple[bool, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(lines, start=1):
        if heredocs:
            strip_tabs, word = heredocs[0]
            if (raw.lstrip("\t") if strip_tabs else raw) == word:
                heredocs.pop(0)
            continue
        if not pending:
            start = number
        if raw.rstrip().endswith("\\") and not raw.lstrip().startswith("#"):
            pending += raw.rstrip()[:-1] + " "
            continue
        line, pending = pending + raw, ""
        for command in _split_line(line):
            found.append((start, command))
        # A heredoc's body follows its line: skip it (quotes on the delimiter only change expansion).
        if "<<" in line:
            heredocs += _heredoc_words(line)
    return found


def toolchain_uses(text: str) -> list[ToolUse]:
    """The toolchain commands a script runs, the first use of each, in the order they come."""
    uses: dict[str, ToolUse] = {}
    for number, command in shell_commands(text):
        words = command_words(command)
        name = os.path.basename(words[0]) if words else None
        if name in TOOLCHAINS and name not in uses:
            shown = " ".join(words)
            uses[name] = ToolUse(TOOLCHAINS[name], number, shown if len(shown) <= 60 else shown[:57] + "...")
    return list(uses.values())


def sandbox_has(command: str) -> bool:
    """Whether a bwrap sandbox can run ``command``: on its PATH, resolving inside the folders it binds from the host."""
    found = shutil.which(command, path=SANDBOX_PATH)
    if found is None:
        return False
    real = os.path.realpath(found)
    return any(real == root or real.startswith(root + "/") for root in SANDBOX_SYSTEM)


def missing_toolchains(text: str, has=sandbox_has) -> list[ToolUse]:
    """The toolchain commands the script runs that ``has`` says are not installed."""
    return [use for use in toolchain_uses(text) if not has(use.tool.command)]


def refusal(missing: list[ToolUse]) -> str:
    """The reason a grader needing the ``missing`` toolchains is refused, naming each command and package."""
    parts = [
        f"line {use.line} runs `{use.command}`: the {use.tool.name} toolchain is not installed here "
        f"(no `{use.tool.command}` on the sandbox's PATH {SANDBOX_PATH}); install the Debian package {use.tool.package}"
        for use in missing
    ]
    return "; ".join(parts)


def check_toolchains(script: Path, has=sandbox_has, shown: Path | None = None) -> tuple[str, ...]:
    """The toolchain commands ``script`` runs; raise TaskFormatError naming the script (``shown``:
    the task's own file it was copied from), command and package of each missing one."""
    text = script.read_text(errors="replace")
    missing = missing_toolchains(text, has)
    if missing:
        raise TaskFormatError(shown or script, None, refusal(missing))
    return tuple(use.tool.command for use in toolchain_uses(text))


def task_toolchains(plan, needs_docker: list[str], graders: list[Path | tuple[Path, Path]]) -> tuple[str, ...]:
    """The toolchain commands a task runs on bwrap: those its image installs, then those its grader scripts run.

    ``plan`` is the task's :class:`.dockerfile.DockerPlan` (its ``toolchains``,
    ``missing_toolchains`` and ``toolchain_blockers``); ``needs_docker`` every reason bwrap
    cannot stand in for its image. A grader given as ``(script, source)`` is read from
    ``script`` and named by ``source`` (a multi-step task's merged copy and the task's file).

    Only for a task a bwrap sandbox stands in for but for its toolchains (when ``needs_docker``
    holds any other reason, the image brings its toolchains and nothing is checked here). A
    toolchain the sandbox lacks raises TaskFormatError naming the Dockerfile's line (an
    image install) or the script's (a grader's command), the command and the Debian package.
    """
    if any(why not in plan.toolchain_blockers for why in needs_docker):
        return ()
    if plan.missing_toolchains:
        raise TaskFormatError(plan.dockerfile, None, "; ".join(
            f"line {line} installs {package}: the {TOOLCHAINS[PACKAGE_COMMANDS[package]].name} toolchain is not installed "
            f"here (no `{PACKAGE_COMMANDS[package]}` on the sandbox's PATH {SANDBOX_PATH}); install the Debian package {package}"
            for line, package in plan.missing_toolchains
        ))
    found = list(plan.toolchains)
    for grader in graders:
        script, shown = grader if isinstance(grader, tuple) else (grader, None)
        found += check_toolchains(script, shown=shown)
    return tuple(dict.fromkeys(found))
