"""Every default is stated once, in settings.py's tree, with one spelling; options, help texts and docs follow it.

The scan reads the package's source: a settings-like position (a dataclass field, a keyword
default, an argparse or pytest option default) that gives one of the tree's settings its
default value as a literal anywhere but settings.py is a second source, and fails here
with its file and line. Another value in such a position (the training demo's smaller
budgets, say) is a setting of its own and is left alone.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_termrl
from conftest import REPO
from pytest_termrl.settings import (
    EpisodeLimits,
    ModelOptions,
    RunSettings,
    SandboxSettings,
    TermrlOptions,
    VerifierSettings,
)

PACKAGE = Path(pytest_termrl.__file__).parent
SETTINGS_FILE = PACKAGE / "settings.py"

DEFAULTS = {
    # setting: (names it is spelled by in code, past spellings included, its value in the tree)
    "command timeout": (r"command_timeout(?:_s)?", SandboxSettings.command_timeout_s),
    "output cap": (r"output_cap(?:_chars)?", SandboxSettings.output_cap_chars),
    "test timeout": (r"(?:per_)?test_timeout(?:_s)?", VerifierSettings.test_timeout_s),
    "setup timeout": (r"setup_timeout(?:_s)?", SandboxSettings.setup_timeout_s),
    "tool calls": (r"max_tool_calls", EpisodeLimits.max_tool_calls),
    "generated tokens": (r"max_generated_tokens", EpisodeLimits.max_generated_tokens),
    "total tokens": (r"max_total_tokens", EpisodeLimits.max_total_tokens),
    "episode wall clock": (r"wall_clock_s|episode_timeout(?:_s)?", EpisodeLimits.wall_clock_s),
    "server timeout": (r"server_timeout(?:_s)?", ModelOptions.server_timeout_s),
}
OPTIONS = {
    # flag: (the tree's value, how docs/options.md writes it)
    "--termrl-command-timeout": SandboxSettings.command_timeout_s,
    "--termrl-setup-timeout": SandboxSettings.setup_timeout_s,
    "--termrl-output-cap": SandboxSettings.output_cap_chars,
    "--termrl-test-timeout": VerifierSettings.test_timeout_s,
    "--termrl-max-tool-calls": EpisodeLimits.max_tool_calls,
    "--termrl-max-generated-tokens": EpisodeLimits.max_generated_tokens,
    "--termrl-max-total-tokens": EpisodeLimits.max_total_tokens,
    "--termrl-episode-timeout": EpisodeLimits.wall_clock_s,
    "--termrl-server-timeout": ModelOptions.server_timeout_s,
    "--termrl-attempts": TermrlOptions.attempts,
}


def _literal(value: float) -> str:
    """A regex for the number as code writes it: 30, 30.0, 30.00; 3000 or 3_000."""
    whole = int(value)
    digits = "_?".join(re.escape(part) for part in f"{whole:,}".split(",")) if whole == value else re.escape(repr(value))
    return rf"(?<![\w.]){digits}(?:\.0+)?(?![\w.])"


def second_sources(source: str, names: str, value: float) -> list[int]:
    """Lines of ``source`` that state ``value`` as the default of a setting spelled ``names``."""
    number = _literal(value)
    positions = (
        rf"\b(?:{names})\b\s*(?::[^=\n]*)?=\s*(?:field\(\s*default\s*=\s*)?{number}",  # a field, a keyword default
        rf"--[\w-]*(?:{names.replace('_', '[-_]')})[\w-]*['\"][^\n]*\bdefault\s*=\s*{number}",  # an option's default
        rf"--[\w-]*(?:{names.replace('_', '[-_]')})[\w-]*['\"][^\n]*help\s*=\s*['\"][^'\"\n]*\(default:?\s*{number}",  # a help text
    )
    return [n for n, line in enumerate(source.splitlines(), 1) if any(re.search(p, line) for p in positions)]


def test_the_scan_finds_a_planted_second_source():
    planted = 'TIMEOUT = 1\n    command_timeout_s: float = 30.0\nadd("--termrl-output-cap", type=int, default=3000)\ndemo_cap = 3000\n'
    assert second_sources(planted, *DEFAULTS["command timeout"]) == [2]
    assert second_sources(planted, *DEFAULTS["output cap"]) == [3]
    assert second_sources('add("--termrl-test-timeout", help="seconds (default 20)")', *DEFAULTS["test timeout"]) == [1]
    assert second_sources("    output_cap_chars: int = field(default=1000)", *DEFAULTS["output cap"]) == []


@pytest.mark.parametrize("setting", sorted(DEFAULTS))
def test_no_default_is_written_twice(setting):
    names, value = DEFAULTS[setting]
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == SETTINGS_FILE:
            continue
        for line in second_sources(path.read_text(encoding="utf-8"), names, value):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{line}")
    assert not found, f"the {setting} default ({value:g}) is stated again outside settings.py: {found}"


def test_one_spelling_per_setting():
    """Seconds end in _s, the cap is output_cap_chars: no older spelling is left as a name in the package."""
    old = re.compile(r"\b(?:per_test_timeout\w*|output_cap|command_timeout|test_timeout|episode_timeout)\b(?!_)")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = re.sub(r"(['\"]).*?\1", "", line.split("#")[0])  # strings (flag names, messages) and comments aside
            if old.search(code) and "args." not in code:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{n}: {line.strip()}")
    assert not found, found


def test_the_tree_composes_the_runs_options():
    options = TermrlOptions(command_timeout_s=7.0, output_cap_chars=99, test_timeout_s=3.0, max_tool_calls=2, episode_timeout_s=60.0)
    tree = options.settings()
    assert isinstance(tree, RunSettings)
    assert (tree.sandbox.command_timeout_s, tree.sandbox.output_cap_chars, tree.verifier.test_timeout_s) == (7.0, 99, 3.0)
    assert (tree.limits.max_tool_calls, tree.limits.wall_clock_s) == (2, 60.0)
    episode = tree.episode
    assert (episode.command_timeout_s, episode.test_timeout_s, episode.limits) == (7.0, 3.0, tree.limits)
    defaults = TermrlOptions().settings()
    assert defaults.sandbox == SandboxSettings() and defaults.limits == EpisodeLimits() and defaults.verifier == VerifierSettings()


def _shown(value: float) -> str:
    return f"{value:g}"


def test_the_help_texts_show_the_trees_defaults(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = re.sub(r"\s+", " ", proc.stdout)
    for flag, value in OPTIONS.items():
        match = re.search(rf"{re.escape(flag)}=\S+ (.*?)(?= --|$)", text)
        assert match, f"{flag} is not in pytest --help"
        assert f"(default {_shown(value)})" in match.group(1), f"{flag}: {match.group(1)[:200]!r} does not show {_shown(value)}"


def test_the_options_page_shows_the_trees_defaults():
    page = (REPO / "docs" / "options.md").read_text(encoding="utf-8")
    rows = {}
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`--termrl-"):
            for flag in re.findall(r"`(--termrl-[\w-]+)`", cells[0]):
                rows.setdefault(flag, []).append(cells[1])
    for flag, value in OPTIONS.items():
        assert flag in rows, f"docs/options.md has no row for {flag}"
        shown = " / ".join(rows[flag])
        assert re.search(rf"(?<![\d.]){re.escape(_shown(value))}(?![\d.])", shown), f"docs/options.md: {flag} shows {shown!r}, the tree says {_shown(value)}"
