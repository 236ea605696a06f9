"""What a task's shell scripts and tests need to run offline: network steps, pytest runs, rewards, imports."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

_NETWORK = [
    (re.compile(r"\bcurl\b"), "downloads with curl"),
    (re.compile(r"\bwget\b"), "downloads with wget"),
    (re.compile(r"\b(?:pip3?|python3?\s+-m\s+pip)\s+install\b"), "pip install"),
    (re.compile(r"\buv\s+(?:pip\s+install|add|sync|tool\s+install|run\s+--with)\b"), "uv installs packages"),
    (re.compile(r"\buvx\b"), "uvx fetches packages"),
    (re.compile(r"\bapt(?:-get)?\s+(?:-\S+\s+)*(?:update|install|upgrade|dist-upgrade)\b"), "apt"),
    (re.compile(r"\b(?:apk\s+add|yum\s+install|dnf\s+install|zypper\s+install|pacman\s+-S)\b"), "a package manager"),
    (re.compile(r"\b(?:npm\s+(?:install|ci|i)\b|npx\b|yarn\s+(?:add|install)\b|pnpm\s+(?:add|install)\b)"), "npm"),
    (re.compile(r"\bgit\s+(?:clone|fetch|pull)\b"), "git over the network"),
    (re.compile(r"\b(?:conda|mamba|micromamba)\s+(?:install|create)\b"), "conda"),
    (re.compile(r"\b(?:cargo\s+install|go\s+(?:get|install)|gem\s+install)\b"), "a language package manager"),
]


def network_need(command: str) -> str | None:
    """What a command fetches over the network ('pip install', 'downloads with curl', ...), or None."""
    return next((label for pattern, label in _NETWORK if pattern.search(command)), None)


_PYTEST = re.compile(r"(?:^|[\s;&|(])(?:pytest|py\.test)\b|-m\s+pytest\b")
_BENIGN = re.compile(
    r"^(?:#.*|set\s+[-+]\w+.*|source\s+.*|\.\s+\S.*|export\s+.*|cd\s+.*|echo\b.*|printf\b.*|"
    r"uv\s+(?:venv|init)\b.*|python3?\s+-m\s+venv\b.*|deactivate|if\b.*|then|else|elif\b.*|fi|"
    r"mkdir\s+-p\s+\S*/logs/\S*|exit\b.*|true|:|ls\b.*|cat\b.*|rm\s+-f\s+\S*/logs/\S*|"
    r"\w+=\S*)$"
)
_REWARD = re.compile(r"reward\.(?:txt|json)")


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each logical line, continuations joined, comments dropped."""
    out: list[tuple[int, str]] = []
    current, start = "", 0
    for number_, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not current:
            start = number_
            if not stripped or stripped.startswith("#"):
                continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        out.append((start, (current + stripped).strip()))
        current = ""
    if current.strip():
        out.append((start, current.strip()))
    return out


@dataclass
class ScriptFindings:
    """What a grader or setup script does, line by line, as far as matters for running offline."""

    network: list[str] = field(default_factory=list)
    """'line N: <text> (<what>)' for each line that needs the network."""
    pytest: list[str] = field(default_factory=list)
    """Lines that run pytest."""
    rewards: list[str] = field(default_factory=list)
    """Lines that write /logs/verifier/reward.*."""
    other: list[str] = field(default_factory=list)
    """Lines that are none of the above nor plain shell plumbing (echo, cd, export, if ...)."""

    @property
    def offline(self) -> bool:
        return not self.network


def analyse_script(text: str) -> ScriptFindings:
    findings = ScriptFindings()
    for lineno, line in logical_lines(text):
        shown = f"line {lineno}: {line[:160]}"
        what = network_need(line)
        if what is not None:
            findings.network.append(f"{shown} ({what})")
            if _PYTEST.search(line):
                findings.pytest.append(shown)
            continue
        if _REWARD.search(line):
            findings.rewards.append(shown)
        elif _PYTEST.search(line):
            findings.pytest.append(shown)
        elif not _BENIGN.match(line.rstrip(";").strip()):
            findings.other.append(shown)
    return findings


def split_segments(command: str) -> list[str]:
    """Split a shell command on top-level '&&' and ';' (quotes respected, subshells not parsed)."""
    parts, current, quote, i = [], "", None, 0
    while i < len(command):
        ch = command[i]
        if quote:
            current += ch
            if ch == "\\" and quote == '"' and i + 1 < len(command):
                current += command[i + 1]
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            current += ch
        elif command.startswith("&&", i) or ch == ";":
            parts.append(current.strip())
            current = ""
            i += 2 if ch == "&" else 1
            continue
        else:
            current += ch
        i += 1
    parts.append(current.strip())
    return [p for p in parts if p]


_NAMED_MODULE = re.compile(r"\b([A-Za-z_]\w*)\.py\b")
_TEXT_SUFFIXES = {"", ".md", ".sh", ".yaml", ".yml", ".toml", ".txt", ".py"}


def _modules_the_task_names(task_dir: Path, tests_dir: Path) -> set[str]:
    """Module names the task's files outside its tests name as ``NAME.py`` (or are): instruction, solution, environment."""
    names: set[str] = set()
    for path in sorted(task_dir.rglob("*"))[:2000]:
        if tests_dir in path.parents or not path.is_file() or path.is_symlink():
            continue
        if path.suffix == ".py":
            names.add(path.stem)
        if path.suffix in _TEXT_SUFFIXES and path.stat().st_size <= 256 * 1024:
            names.update(_NAMED_MODULE.findall(path.read_text(errors="replace")))
    return names


def missing_test_imports(tests_dir: Path) -> list[str]:
    """Top-level modules the tests import that the harness's own Python cannot import.

    A module the task's other files name (``service.py`` in its instruction or solution, a
    ``.py`` file of its environment) is the agent's to write or the task's to place, not a
    package the toolchain lacks.
    """
    local = {p.stem for p in tests_dir.rglob("*.py")} | {p.name for p in tests_dir.iterdir() if p.is_dir()}
    local |= _modules_the_task_names(tests_dir.parent, tests_dir)
    names: set[str] = set()
    for path in sorted(tests_dir.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(errors="replace"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    missing = []
    for name in sorted(names - local - set(sys.stdlib_module_names) - {"pytest", "_pytest"}):
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing
