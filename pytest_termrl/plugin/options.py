"""Command-line options and ini keys, read once into a plain settings object."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ..agents import agent_names
from ..agents.builtin import AGENT_ALIASES
from ..serving.endpoints import read_endpoint_list
from ..faults import ALIASES as FAMILY_ALIASES
from ..faults import CLEAN, FAMILIES
from ..modes import DEFAULT_MODE, MODES
from ..sandbox.base import backend_names
from .server import played_by_model
from ..settings import ModelOptions, TermrlOptions
from ..tasks.suite import SPLITS

_D = TermrlOptions()
"""The defaults, stated once in settings.py: the help texts and the values read below both come from it."""
KNOWN_FAMILIES = [CLEAN, *FAMILIES]
"""Every family an episode can run under: clean and each fault family."""


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("termrl", "pytest-termrl: terminal-agent episodes as tests")
    add = group.addoption
    add("--termrl-agent", default=None, help=f"agent that plays episodes: reference (runs solution.sh; 'oracle' is accepted too), noop, script, openai (default: ini termrl_agent or {_D.agent})")
    add("--termrl-sandbox", default=None, help=f"sandbox backend (default: {_D.sandbox})")
    add("--termrl-prompt", action="append", default=None, help="system prompt by name or path; repeat to compare prompts (a parametrisation axis)")
    add("--termrl-families", default=None, help="comma-separated fault families or aliases (train, heldout, mix); default: clean")
    add("--termrl-attempts", type=int, default=None, help=f"attempts per task x family x prompt (default {_D.attempts})")
    add("--termrl-salt", default=None, help="salt for fault targets and hidden names (recorded at freeze; default empty)")
    add("--termrl-split", default=None, help="run only tasks of this split (train, dev_search, dev_monitor, test)")
    add("--termrl-predictions", default=None, help="JSONL of {task_id, agent_script} for --termrl-agent=script")
    add("--termrl-reference-from", default=None, help="with --termrl-freeze: recorded trials (a Harbor job, an ATIF file, an episode log) from which a task without a reference takes one: its first recorded-passing trial that passes here twice with the same footprint")
    add("--termrl-unfrozen", action="store_true", default=False, help="also play folders of tasks without contracts.jsonl (clean family only), judged by the policy inferred from each task (ini termrl_unfrozen)")
    add("--termrl-trajectories", default=None, help="recorded trials for --termrl-agent=replay: a Harbor job or trial folder, an ATIF trajectory.json, or an episode log")
    add("--termrl-run-dir", default=None, help="folder for this run's files (default .termrl/run under the rootdir)")
    add("--termrl-episodes", default=None, help="episode JSONL path (default: <run dir>/episodes.jsonl)")
    add("--termrl-report", default=None, help="write the JSON summary here at the end of the run")
    add("--termrl-html", default=None, help="write a self-contained HTML report (plots, transcripts, findings) here at the end of the run (extra: report)")
    add("--termrl-resume", action="store_true", default=False, help="keep the episode log and run only episodes not recorded in it")
    for mode in MODES.values():
        if mode.flag:
            add(mode.flag, action="store_true", default=False, help=mode.flag_help)
    add("--termrl-command-timeout", type=float, default=None, help=f"seconds per command (default {_D.command_timeout_s:g})")
    add("--termrl-setup-timeout", type=float, default=None, help=f"seconds a task's setup.sh may run, for tasks whose task.toml sets no [limits] setup_timeout_s (default {_D.setup_timeout_s:g})")
    add("--termrl-output-cap", type=int, default=None, help=f"characters of output shown per command (default {_D.output_cap_chars})")
    add("--termrl-test-timeout", type=float, default=None, help=f"seconds per hidden test (default {_D.test_timeout_s:g})")
    add("--termrl-max-tool-calls", type=int, default=None, help=f"tool calls per episode (default {_D.max_tool_calls})")
    add("--termrl-max-generated-tokens", type=int, default=None, help=f"generated tokens per episode (default {_D.max_generated_tokens})")
    add("--termrl-max-total-tokens", type=int, default=None, help=f"total tokens per episode (default {_D.max_total_tokens})")
    add("--termrl-max-commands", type=int, default=None, help="disclosed command budget per episode (default: none)")
    add("--termrl-episode-timeout", type=float, default=None, help=f"wall-clock seconds per episode (default {_D.episode_timeout_s:g})")
    add("--termrl-base-url", action="append", default=None, help="OpenAI-compatible endpoint for --termrl-agent=openai (no server is started); repeat it, or give @FILE (one URL a line), to spread episodes over several servers")
    add("--termrl-model", default=None, help="model name sent to the endpoint")
    add("--termrl-api-key", default=None, help="API key (default: $OPENAI_API_KEY or EMPTY)")
    add("--termrl-temperature", type=float, default=None, help="sampling temperature")
    add("--termrl-top-p", type=float, default=None, help="nucleus sampling")
    add("--termrl-top-k", type=int, default=None, help="top-k, sent as an extra body field")
    add("--termrl-seed", type=int, default=None, help="sampling seed")
    add("--termrl-disable-thinking", action="store_true", default=False, help="ask the chat template to disable thinking")
    add("--termrl-terminal", action="store_true", default=False, help="give the openai agent a send_keys tool: keys typed into a terminal session on a pseudo-terminal, the screen back")
    add("--termrl-server", default=None, choices=["vllm", "llamacpp", "command"], help="start this server once per run (on the xdist controller)")
    add("--termrl-server-model", default=None, help="model (or GGUF path) the started server loads; 'embedded': the bundled Gemma 3 270M GGUF on llama.cpp (extra: demo)")
    add("--termrl-server-arg", action="append", default=[], help="extra argument for the started server (repeatable; e.g. --enable-lora)")
    add("--termrl-server-command", default=None, help="start command for --termrl-server=command ({host}, {port}, {model} are filled in)")
    add("--termrl-server-timeout", type=float, default=None, help=f"seconds to wait for the server to become healthy (default {_D.model.server_timeout_s:g})")
    parser.addini("termrl_unfrozen", "play folders of tasks without contracts.jsonl, judged by an inferred policy (default false)", type="bool", default=False)
    parser.addini("termrl_stop_on_broken_tasks", "stop the run on a task's collection error (default: run the others)", type="bool", default=False)
    for key, help_text in (
        ("termrl_agent", "default agent"),
        ("termrl_sandbox", "default sandbox backend"),
        ("termrl_prompts", "default system prompts (names or paths)"),
        ("termrl_families", "default fault families"),
        ("termrl_run_dir", "default run folder"),
    ):
        parser.addini(key, help_text, default=None)


def expand_families(text: str, known: list[str]) -> list[str]:
    names: list[str] = []
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        if part == "mix":
            expanded = list(known)
        else:
            expanded = FAMILY_ALIASES.get(part, [part])
        for name in expanded:
            if name not in known:
                aliases = ", ".join(sorted([*FAMILY_ALIASES, "mix"]))
                raise ValueError(f"--termrl-families: unknown family {name!r}; known: {', '.join(known)} and aliases {aliases}")
            if name not in names:
                names.append(name)
    return names or [CLEAN]


def chosen_mode(config: pytest.Config) -> str:
    """The mode whose flag was given (the default mode without one); two flags are a usage error."""
    chosen = [name for name, mode in MODES.items() if mode.flag and config.getoption(_dest(mode.flag))]
    if len(chosen) > 1:
        raise ValueError(f"{' and '.join(str(MODES[n].flag) for n in chosen)} exclude each other: one run has one mode")
    return chosen[0] if chosen else DEFAULT_MODE


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def read_options(config: pytest.Config) -> TermrlOptions:
    """Options win over ini keys, ini keys over defaults. Raises ValueError on bad values."""
    get = config.getoption

    def pick(option: str, ini: str | None = None, default: Any = None) -> Any:
        value = get(option)
        if value is None and ini is not None:
            value = config.getini(ini) or None
        return default if value is None else value

    rootdir = Path(str(config.rootpath))
    run_dir = Path(pick("termrl_run_dir", "termrl_run_dir", str(rootdir / ".termrl" / "run")))
    prompts = get("termrl_prompt") or (config.getini("termrl_prompts") or "").split() or list(_D.prompts)
    agent = pick("termrl_agent", "termrl_agent", _D.agent)
    opts = TermrlOptions(
        mode=chosen_mode(config),
        agent=AGENT_ALIASES.get(agent, agent),
        sandbox=pick("termrl_sandbox", "termrl_sandbox", _D.sandbox),
        prompts=list(prompts),
        families=expand_families(pick("termrl_families", "termrl_families", CLEAN), KNOWN_FAMILIES),
        attempts=pick("termrl_attempts", default=_D.attempts),
        salt=get("termrl_salt") or "",
        split=get("termrl_split"),
        predictions=Path(get("termrl_predictions")) if get("termrl_predictions") else None,
        trajectories=Path(get("termrl_trajectories")) if get("termrl_trajectories") else None,
        reference_from=Path(get("termrl_reference_from")) if get("termrl_reference_from") else None,
        unfrozen=bool(get("termrl_unfrozen") or config.getini("termrl_unfrozen")),
        run_dir=run_dir,
        episodes=Path(pick("termrl_episodes", default=str(run_dir / "episodes.jsonl"))),
        report=Path(get("termrl_report")) if get("termrl_report") else None,
        resume=bool(get("termrl_resume")),
        command_timeout_s=pick("termrl_command_timeout", default=_D.command_timeout_s),
        setup_timeout_s=pick("termrl_setup_timeout", default=_D.setup_timeout_s),
        output_cap_chars=pick("termrl_output_cap", default=_D.output_cap_chars),
        test_timeout_s=pick("termrl_test_timeout", default=_D.test_timeout_s),
        max_tool_calls=pick("termrl_max_tool_calls", default=_D.max_tool_calls),
        max_generated_tokens=pick("termrl_max_generated_tokens", default=_D.max_generated_tokens),
        max_total_tokens=pick("termrl_max_total_tokens", default=_D.max_total_tokens),
        max_commands=get("termrl_max_commands"),
        episode_timeout_s=pick("termrl_episode_timeout", default=_D.episode_timeout_s),
        model=ModelOptions(
            base_urls=read_endpoint_list(get("termrl_base_url") or []),
            model=get("termrl_model"),
            api_key=get("termrl_api_key") or os.environ.get("OPENAI_API_KEY", "EMPTY"),
            temperature=get("termrl_temperature"),
            top_p=get("termrl_top_p"),
            top_k=get("termrl_top_k"),
            seed=get("termrl_seed"),
            disable_thinking=bool(get("termrl_disable_thinking")),
            terminal=bool(get("termrl_terminal")),
            server=get("termrl_server"),
            server_model=get("termrl_server_model"),
            server_args=list(get("termrl_server_arg") or []),
            server_command=get("termrl_server_command"),
            server_timeout_s=pick("termrl_server_timeout", default=_D.model.server_timeout_s),
        ),
    )
    for flag, value in (("--termrl-setup-timeout", opts.setup_timeout_s), ("--termrl-command-timeout", opts.command_timeout_s),
                        ("--termrl-test-timeout", opts.test_timeout_s), ("--termrl-episode-timeout", opts.episode_timeout_s)):
        if not value > 0:
            raise ValueError(f"{flag}: expected a positive number of seconds, got {value:g}")
    if opts.split is not None and opts.split not in SPLITS:
        raise ValueError(f"--termrl-split: unknown split {opts.split!r}; known: {', '.join(SPLITS)}")
    if opts.attempts < 1:
        raise ValueError("--termrl-attempts: expected a positive integer")
    m = opts.model
    m.base_url = m.base_urls[0] if m.base_urls else None
    if m.server_model == "embedded" and m.server is None and not m.base_url:
        m.server = "llamacpp"  # --termrl-server-model=embedded alone starts the bundled model
    if m.server_model == "embedded" and m.server not in (None, "llamacpp"):
        raise ValueError("--termrl-server-model=embedded runs on llama.cpp: use --termrl-server=llamacpp")
    if m.server and m.base_url:
        raise ValueError("--termrl-server and --termrl-base-url exclude each other: one starts a server, the other uses one")
    if m.server and not (m.server_model or m.server == "command"):
        raise ValueError(f"--termrl-server={m.server} needs --termrl-server-model")
    if m.server == "command" and not m.server_command:
        raise ValueError("--termrl-server=command needs --termrl-server-command")
    if m.base_url and not m.model:
        raise ValueError("--termrl-base-url needs --termrl-model: the name the endpoint serves")
    plays_agent = MODES[opts.mode].plays_agent
    known = agent_names()
    if opts.agent not in known and not config.pluginmanager.hook.pytest_termrl_make_agent.get_hookimpls():
        raise ValueError(f"--termrl-agent: unknown agent {opts.agent!r}; known: {', '.join(known)} (or one a pytest_termrl_make_agent hook supplies)")
    backends = backend_names()
    if opts.sandbox not in backends and not config.pluginmanager.hook.pytest_termrl_make_sandbox.get_hookimpls():
        raise ValueError(f"--termrl-sandbox: unknown sandbox backend {opts.sandbox!r}; known: {', '.join(backends)} (or one a pytest_termrl_make_sandbox hook supplies)")
    if played_by_model(opts.agent) and plays_agent and not (m.base_url or m.server):
        raise ValueError(f"--termrl-agent={opts.agent} needs --termrl-base-url or --termrl-server")
    if opts.agent == "script" and opts.predictions is None and plays_agent:
        raise ValueError("--termrl-agent=script needs --termrl-predictions=FILE")
    if opts.agent == "replay" and opts.trajectories is None and plays_agent:
        raise ValueError("--termrl-agent=replay needs --termrl-trajectories=PATH (a Harbor job or trial folder, an ATIF file or an episode log)")
    return opts
