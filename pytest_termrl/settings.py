"""The run's settings, every default stated once: one tree of plain dataclasses (sandbox, episode, verifier, model).

Each default lives in exactly one place, the field of its section below, spelled with its
unit (``*_s`` for seconds, ``output_cap_chars``); the command line's flags and ini keys
(:mod:`pytest_termrl.plugin.options`), their help texts, the training commands and the
scripts all read it from here, and ``tests/unit/test_settings.py`` fails on a second
source. :class:`TermrlOptions` is what one run was asked for (its defaults are the
sections'); :meth:`TermrlOptions.settings` composes it into the :class:`RunSettings` tree
the harness is built from. Imports nothing of the package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

CLEAN = "clean"
"""The family of episodes played with no fault (pytest_termrl.faults re-exports it)."""
DEFAULT_PROMPT = "p0_default"
"""The system prompt a run uses when none is named."""
GiB = 1024**3
MiB = 1024**2


@dataclass(frozen=True)
class SandboxSettings:
    """The agent's machine: its limits, the shell's command timeout and output cap, the setup's time, the agent's ids."""

    memory_bytes: int = 2 * GiB
    max_processes: int = 256
    cpus: float = 1.0
    file_size_bytes: int = 256 * MiB
    command_timeout_s: float = 30.0
    """Seconds one command of the agent may run before its process group is killed and the agent told."""
    output_cap_chars: int = 3000
    """Characters of a command's output the agent is shown (head and tail kept, the cut marked)."""
    terminal_size: tuple[int, int] = (160, 40)
    """The terminal session's window, columns by rows."""
    setup_timeout_s: float = 180.0
    """Seconds a task's setup may run, unless its task.toml sets its own."""
    agent_uid: int = 1000
    agent_gid: int = 1000
    storage_bytes: int = 4 * GiB
    """Size of a whole-machine sandbox's upper layers (everything the agent may write), unless the task asks its ``storage_mb``."""


@dataclass(frozen=True)
class EpisodeLimits:
    """When the episode loop stops the agent: tool calls, tokens, the disclosed command budget, wall clock."""

    max_tool_calls: int = 16
    max_generated_tokens: int = 6144
    max_total_tokens: int = 8192
    max_commands: int | None = None
    """The disclosed command budget; None when no budget is set."""
    wall_clock_s: float = 900.0


@dataclass
class VerifierSettings:
    """How the hidden tests run."""

    test_timeout_s: float = 20.0
    """Seconds one hidden test may run."""


@dataclass
class EpisodeSettings:
    """What the episode loop reads: its limits, each command's timeout, each hidden test's timeout."""

    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    command_timeout_s: float = SandboxSettings.command_timeout_s
    test_timeout_s: float = VerifierSettings.test_timeout_s


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
    terminal: bool = False
    """Offer the model ``send_keys``, a terminal session on a pseudo-terminal, besides ``bash``."""
    server: str | None = None
    server_model: str | None = None
    server_args: list[str] = field(default_factory=list)
    server_command: str | None = None
    server_timeout_s: float = 900.0


COMMAND_TIMEOUT_S = SandboxSettings.command_timeout_s
OUTPUT_CAP_CHARS = SandboxSettings.output_cap_chars
TEST_TIMEOUT_S = VerifierSettings.test_timeout_s
"""Short names of the three defaults most code asks for; the values are the sections'."""


@dataclass
class RunSettings:
    """One run's settings tree: the sandbox, the episode's limits, the verifier, the model."""

    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    verifier: VerifierSettings = field(default_factory=VerifierSettings)
    model: ModelOptions = field(default_factory=ModelOptions)

    @property
    def episode(self) -> EpisodeSettings:
        """The episode loop's view of the tree."""
        return EpisodeSettings(self.limits, self.sandbox.command_timeout_s, self.verifier.test_timeout_s)


@dataclass
class TermrlOptions:
    """What one run was asked for (flags over ini keys over the sections' defaults); :meth:`settings` is its tree."""

    mode: str = "run"
    """A name of pytest_termrl.modes.MODES, chosen by its flag."""
    agent: str = "reference"
    sandbox: str = "bwrap"
    prompts: list[str] = field(default_factory=lambda: [DEFAULT_PROMPT])
    prompt_names: list[str] = field(default_factory=lambda: [DEFAULT_PROMPT])
    prompt_texts: dict[str, str] = field(default_factory=dict)
    families: list[str] = field(default_factory=lambda: [CLEAN])
    attempts: int = 1
    salt: str = ""
    split: str | None = None
    predictions: Path | None = None
    reference_from: Path | None = None
    """Recorded trials a freeze may take a reference from, for tasks that ship none (``--termrl-reference-from``)."""
    unfrozen: bool = False
    """Play tasks that have no frozen contract (clean family only), judged by the policy inferred from the task."""
    trajectories: Path | None = None
    """Recorded trials for ``--termrl-agent=replay``: a Harbor job or trial folder, an ATIF file or an episode log."""
    run_dir: Path = Path(".termrl/run")
    episodes: Path = Path(".termrl/run/episodes.jsonl")
    report: Path | None = None
    resume: bool = False
    command_timeout_s: float = SandboxSettings.command_timeout_s
    setup_timeout_s: float = SandboxSettings.setup_timeout_s
    output_cap_chars: int = SandboxSettings.output_cap_chars
    test_timeout_s: float = VerifierSettings.test_timeout_s
    max_tool_calls: int = EpisodeLimits.max_tool_calls
    max_generated_tokens: int = EpisodeLimits.max_generated_tokens
    max_total_tokens: int = EpisodeLimits.max_total_tokens
    max_commands: int | None = EpisodeLimits.max_commands
    episode_timeout_s: float = EpisodeLimits.wall_clock_s
    model: ModelOptions = field(default_factory=ModelOptions)

    def settings(self) -> RunSettings:
        """The run's settings tree, composed from what the run was asked for."""
        return RunSettings(
            sandbox=SandboxSettings(
                command_timeout_s=self.command_timeout_s,
                output_cap_chars=self.output_cap_chars,
                setup_timeout_s=self.setup_timeout_s,
            ),
            limits=EpisodeLimits(
                max_tool_calls=self.max_tool_calls,
                max_generated_tokens=self.max_generated_tokens,
                max_total_tokens=self.max_total_tokens,
                max_commands=self.max_commands,
                wall_clock_s=self.episode_timeout_s,
            ),
            verifier=VerifierSettings(test_timeout_s=self.test_timeout_s),
            model=self.model,
        )
