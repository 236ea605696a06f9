"""The run's settings as plain dataclasses: what the command line and ini keys say, read once.

The plugin fills them in (:mod:`pytest_termrl.plugin.options`); modes, the model server
and scripts read them without importing pytest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

CLEAN = "clean"
"""The family of episodes played with no fault (pytest_termrl.faults re-exports it)."""
COMMAND_TIMEOUT_S = 30.0
"""Seconds one command of the agent may run before its process group is killed and the agent told."""
OUTPUT_CAP_CHARS = 3000
"""Characters of a command's output the agent is shown (head and tail kept, the cut marked)."""
TEST_TIMEOUT_S = 20.0
"""Seconds one hidden test may run in the verifier."""


@dataclass
class TermrlOptions:
    mode: str = "run"
    """A name of pytest_termrl.modes.MODES, chosen by its flag."""
    agent: str = "reference"
    sandbox: str = "bwrap"
    prompts: list[str] = field(default_factory=lambda: ["p0_default"])
    prompt_names: list[str] = field(default_factory=lambda: ["p0_default"])
    prompt_texts: dict[str, str] = field(default_factory=dict)
    families: list[str] = field(default_factory=lambda: [CLEAN])
    attempts: int = 1
    salt: str = ""
    split: str | None = None
    predictions: Path | None = None
    run_dir: Path = Path(".termrl/run")
    episodes: Path = Path(".termrl/run/episodes.jsonl")
    report: Path | None = None
    resume: bool = False
    command_timeout_s: float = COMMAND_TIMEOUT_S
    setup_timeout_s: float = 180.0
    output_cap: int = OUTPUT_CAP_CHARS
    test_timeout_s: float = TEST_TIMEOUT_S
    max_tool_calls: int = 16
    max_generated_tokens: int = 6144
    max_total_tokens: int = 8192
    max_commands: int | None = None
    episode_timeout_s: float = 900.0
    model: ModelOptions = field(default_factory=lambda: ModelOptions())


@dataclass
class ModelOptions:
    """How the openai agent reaches its model, and whether the run starts the server."""

    base_url: str | None = None
    """The first (or only) endpoint; ``base_urls`` holds them all."""
    base_urls: list[str] = field(default_factory=list)
    """Every endpoint given (``--termrl-base-url`` repeated or ``@FILE``): episodes are spread over them."""
    model: str | None = None
    api_key: str = "EMPTY"
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    seed: int | None = None
    disable_thinking: bool = False
    server: str | None = None
    server_model: str | None = None
    server_args: list[str] = field(default_factory=list)
    server_command: str | None = None
    server_timeout_s: float = 900.0
