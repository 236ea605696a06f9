"""Harbor's task.toml, field by field: each read and checked, those that change a trial honoured or refused by name.

Harbor 1.x tables: ``[task]``, ``[metadata]``, ``[agent]``, ``[verifier]``,
``[environment]`` (with ``[environment.healthcheck]``), ``[solution]`` and ``[[steps]]``.
How each field that changes a trial is met here:

=================================  ========================================================
``environment.workdir``            the task's workdir (else the Dockerfile's WORKDIR, else /app)
``environment.network_mode``,      recorded as the task's network (``public``, ``no-network``,
``allow_internet`` (deprecated)    ``allowlist``); the sandbox never has a network, so a
                                   grader that installs over it is refused by its line
``agent.user``, ``verifier.user``  unset, ``user``, ``agent`` or 1000: the agent's user (uid 1000,
                                   the native shape); any other user (root, an account of the
                                   machine, a UID): the task runs over the whole machine as that
                                   user (``Task.user``), its grader as ``verifier.user`` (root
                                   unless named); a step's own users are refused by name
``cpus``, ``memory_mb``,           the task's resources (``Task.resources``): cpus and memory
``storage_mb``, ``memory``,        are the limits of the agent's and the verifier's sandboxes,
``storage``                        capped at the machine's; storage is recorded, not enforced
``gpus``, ``mcp_servers``          refused by name (``needs_docker``): bwrap cannot stand in
                                   for a GPU or an MCP server
``healthcheck``                    run after the setup, before the agent (``Task.healthcheck``,
                                   :mod:`pytest_termrl.sandbox.healthcheck`), as the agent's user
``artifacts``                      paths in the workdir kept when the agent ends (``Task.artifacts``)
``verifier.environment_mode``,     'separate': the grader sees the artifacts alone; its image,
``verifier.environment``           ``tests/Dockerfile``, must be one bwrap stands in for; a
                                   prebuilt verifier image is refused by name
``verifier.env``, ``solution.env`` the grader's and the reference's variables
``*.timeout_sec``                  the grader's limit; the agent's is recorded
``[[steps]]``,                     the task's steps (``Task.steps``), run in order in one
``multi_step_reward_strategy``     sandbox, each graded by its own checks; per step ``name``,
                                   ``min_reward`` (ends the episode early), ``agent.timeout_sec``
                                   (recorded), ``verifier.timeout_sec`` and ``verifier.env``
                                   (over the task's); users as above; a step's ``healthcheck``
                                   run after its files and setup hook, before its agent;
                                   ``multi_step_reward_mode`` (before 1.3) dropped, as Harbor does
=================================  ========================================================

A field this module does not know is a warning naming it (``Task.notes``), never silence.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import TaskFormatError
from ..model import STEP_REWARD_STRATEGIES, Healthcheck, Resources
from ..placement import checked_user, checked_workdir
from .metadata import number

KNOWN = {
    "": {
        "version", "schema_version", "task", "metadata", "verifier", "agent", "environment", "solution", "steps", "source",
        "multi_step_reward_strategy", "multi_step_reward_mode", "artifacts",
    },
    "task": {"name", "description", "authors", "keywords"},
    "verifier": {"timeout_sec", "env", "user", "network_mode", "allowed_hosts", "pass_threshold", "environment_mode", "environment"},
    "agent": {"timeout_sec", "user", "network_mode", "allowed_hosts"},
    "environment": {
        "build_timeout_sec", "docker_image", "cpus", "memory_mb", "storage_mb", "gpus", "gpu_types", "allow_internet",
        "network_mode", "allowed_hosts", "mcp_servers", "env", "skills_dir", "healthcheck", "memory", "storage", "workdir",
    },
    "solution": {"env"},
}
"""The fields read, per table ('' is the top level); ``[metadata]`` is free-form in Harbor."""
STEP_KNOWN = {
    "": {"name", "min_reward", "agent", "verifier", "healthcheck"},
    "agent": {"timeout_sec", "user"},
    "verifier": {"timeout_sec", "env", "user"},
}
"""The fields of one ``[[steps]]`` entry read, per table ('' is the entry itself)."""
NETWORK_MODES = ("public", "no-network", "allowlist")
VERIFIER_MODES = ("shared", "separate")
"""``[verifier] environment_mode``: the agent's environment (Harbor's default) or one of the verifier's own."""
AGENT_USERS = (None, "user", "agent", 1000, "1000")
STEP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
"""A step's name is the name of its folder under steps/."""


@dataclass
class StepConfig:
    """One ``[[steps]]`` entry of task.toml, checked; its files are read by the importer from ``steps/<name>/``."""

    name: str
    min_reward: tuple[tuple[str, float], ...] = ()
    """(reward name, least value): Harbor's ``min_reward``, a number (the step's reward) or a table of named rewards."""
    agent_timeout: float | None = None
    verifier_timeout: float | None = None
    verifier_env: dict[str, str] = field(default_factory=dict)
    """The step's ``[steps.verifier] env`` over the task's ``[verifier] env``."""
    healthcheck: Healthcheck | None = None
    """The step's ``[steps.healthcheck]``: tried after its files and setup hook are in place, before its agent."""


@dataclass
class HarborConfig:
    """What task.toml says beyond the metadata, checked."""

    workdir: str | None = None
    network_mode: str | None = None
    """'public', 'no-network' or 'allowlist' (from network_mode, else the deprecated allow_internet)."""
    allow_internet: bool | None = None
    resources: Resources | None = None
    verifier_env: dict[str, str] = field(default_factory=dict)
    solution_env: dict[str, str] = field(default_factory=dict)
    verifier_timeout: float | None = None
    agent_timeout: float | None = None
    build_timeout: float | None = None
    """``[environment] build_timeout_sec``: the limit of the setup that stands for the image build."""
    threshold: float = 1.0
    steps: list[StepConfig] = field(default_factory=list)
    """The ``[[steps]]`` of a multi-step task, in order (empty for a task of one step)."""
    healthcheck: Healthcheck | None = None
    verifier_mode: str = "shared"
    """``[verifier] environment_mode``: 'shared' or 'separate' (the verifier sees only the declared artifacts)."""
    artifacts: tuple[str, ...] = ()
    """The top-level ``artifacts``: absolute paths copied out of the agent's environment when it ends."""
    verifier_environment: dict | None = None
    agent_user_named: str | None = None
    """``[agent] user`` as written, the agent's own names included ('user', 'agent', 1000)."""
    agent_user: str | None = None
    """``[agent] user`` when it is not the agent's usual user: the task runs over the whole machine as it."""
    verifier_user: str | None = None
    """``[verifier] user`` when it is not the agent's usual user: the grader runs as it."""
    """``[verifier.environment]`` as written (a separate verifier's own environment)."""
    step_reward_strategy: str = "mean"
    """``multi_step_reward_strategy``: 'mean' (Harbor's default) or 'final'."""
    refusals: list[str] = field(default_factory=list)
    """Why the task cannot run here as its author meant (each names the field)."""
    image_refusals: list[str] = field(default_factory=list)
    """Why a bwrap sandbox cannot stand in for its environment (the docker backend may)."""
    notes: list[str] = field(default_factory=list)
    """Warnings (unknown fields) and what was recorded rather than enforced."""


def _table(path: Path, data: dict, key: str) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise TaskFormatError(path, key, "expected a table")
    return value


def _strings(path: Path, where: str, value) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise TaskFormatError(path, where, "expected a table of strings")
    return dict(value)


def _size_mb(path: Path, where: str, value) -> int | None:
    """A size in MiB from an integer or a '2G' / '512M' / '1024K' string (Harbor's deprecated memory/storage)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, str) and value.strip()[:-1].replace(".", "", 1).isdigit() and value.strip()[-1:].upper() in "GMK":
        amount, unit = float(value.strip()[:-1]), value.strip()[-1].upper()
        return max(1, int(amount * 1024 if unit == "G" else amount if unit == "M" else amount / 1024))
    raise TaskFormatError(path, where, "expected a positive number of MiB (or a size like '2G', '512M')")


def _network(path: Path, where: str, table: dict) -> str | None:
    mode = table.get("network_mode")
    if mode is None:
        return "allowlist" if table.get("allowed_hosts") else None
    if mode not in NETWORK_MODES:
        raise TaskFormatError(path, f"{where}.network_mode", f"expected one of {', '.join(NETWORK_MODES)}")
    return mode


def _unknown(data: dict) -> list[str]:
    found = [f"warning: unknown field {key!r} in task.toml (not read)" for key in sorted(set(data) - KNOWN[""])]
    for table, known in KNOWN.items():
        if table and isinstance(data.get(table), dict):
            found += [f"warning: unknown field '{table}.{key}' in task.toml (not read)" for key in sorted(set(data[table]) - known)]
    healthcheck = data.get("environment", {}).get("healthcheck") if isinstance(data.get("environment"), dict) else None
    if isinstance(healthcheck, dict):
        known = {"command", "interval_sec", "timeout_sec", "start_period_sec", "start_interval_sec", "retries"}
        found += [f"warning: unknown field 'environment.healthcheck.{key}' in task.toml (not read)" for key in sorted(set(healthcheck) - known)]
    return found


def _artifacts(path: Path, value: object) -> tuple[str, ...]:
    """The top-level ``artifacts``: each an absolute path, or a table whose ``source`` is one."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise TaskFormatError(path, "artifacts", "expected a list of absolute paths")
    found = []
    for index, entry in enumerate(value):
        source = entry.get("source") if isinstance(entry, dict) else entry
        if not isinstance(source, str) or not source.startswith("/") or "\0" in source:
            raise TaskFormatError(path, f"artifacts[{index}]", "expected an absolute path, or a table whose 'source' is one")
        found.append(source.rstrip("/") or "/")
    return tuple(found)


def _healthcheck(path: Path, table: object, where: str = "environment.healthcheck") -> Healthcheck:
    """``[environment.healthcheck]`` (or a step's, at ``where``), checked field by field; Harbor's defaults where a field is absent."""
    if not isinstance(table, dict) or not isinstance(table.get("command"), str) or not table["command"].strip():
        raise TaskFormatError(path, f"{where}.command", "expected a non-empty shell command")
    values: dict[str, float] = {}
    for key, positive in (("interval_sec", True), ("timeout_sec", True), ("start_period_sec", False), ("start_interval_sec", True)):
        value = table.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0 or (positive and value == 0):
            raise TaskFormatError(path, f"{where}.{key}", "expected a positive number of seconds" if positive else "expected a number of seconds, 0 or more")
        values[key] = float(value)
    retries = table.get("retries", 3)
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 1:
        raise TaskFormatError(path, f"{where}.retries", "expected a whole number, at least 1")
    defaults = Healthcheck("")
    return Healthcheck(
        command=table["command"],
        interval_s=values.get("interval_sec", defaults.interval_s),
        timeout_s=values.get("timeout_sec", defaults.timeout_s),
        start_period_s=values.get("start_period_sec", defaults.start_period_s),
        start_interval_s=values.get("start_interval_sec", defaults.start_interval_s),
        retries=retries,
        source=f"{path} [{where}]",
    )


def read_config(path: Path, data: dict) -> HarborConfig:
    """The checked configuration of a parsed task.toml; TaskFormatError names the field of a bad value."""
    verifier, agent = _table(path, data, "verifier"), _table(path, data, "agent")
    environment, solution = _table(path, data, "environment"), _table(path, data, "solution")
    config = HarborConfig(notes=_unknown(data))
    config.verifier_timeout = number(path, "verifier.timeout_sec", verifier.get("timeout_sec"))
    config.agent_timeout = number(path, "agent.timeout_sec", agent.get("timeout_sec"))
    config.build_timeout = number(path, "environment.build_timeout_sec", environment.get("build_timeout_sec"))
    config.threshold = number(path, "verifier.pass_threshold", verifier.get("pass_threshold"), 1.0)
    config.verifier_env = _strings(path, "verifier.env", verifier.get("env"))
    config.solution_env = _strings(path, "solution.env", solution.get("env"))

    workdir = environment.get("workdir")
    if workdir is not None:
        config.workdir = checked_workdir(path, "environment.workdir", workdir)

    allow = environment.get("allow_internet")
    if allow is not None and not isinstance(allow, bool):
        raise TaskFormatError(path, "environment.allow_internet", "expected true or false")
    mode = _network(path, "environment", environment)
    if mode is None and allow is not None:
        mode = "public" if allow else "no-network"
        config.notes.append(f"environment.allow_internet = {str(allow).lower()} (deprecated) read as network_mode = {mode!r}")
    config.network_mode = mode
    config.allow_internet = None if mode is None else mode != "no-network"
    if mode in ("public", "allowlist"):
        config.notes.append(f"environment.network_mode = {mode!r}: the agent has no network here")
    for table_name, table in (("agent", agent), ("verifier", verifier)):
        phase = _network(path, table_name, table)
        if phase in ("public", "allowlist"):
            config.notes.append(f"{table_name}.network_mode = {phase!r}: the {table_name} has no network here")
        user = table.get("user")
        if table_name == "agent" and user is not None:
            config.agent_user_named = str(user)
        if user not in AGENT_USERS:
            setattr(config, f"{table_name}_user", checked_user(path, f"{table_name}.user", user))

    cpus = environment.get("cpus")
    if cpus is not None and (isinstance(cpus, bool) or not isinstance(cpus, (int, float)) or cpus <= 0):
        raise TaskFormatError(path, "environment.cpus", "expected a positive number")
    memory = _size_mb(path, "environment.memory_mb", environment.get("memory_mb")) or _size_mb(path, "environment.memory", environment.get("memory"))
    storage = _size_mb(path, "environment.storage_mb", environment.get("storage_mb")) or _size_mb(path, "environment.storage", environment.get("storage"))
    if cpus is not None or memory is not None or storage is not None:
        config.resources = Resources(cpus=float(cpus) if cpus is not None else None, memory_mb=memory, storage_mb=storage)

    gpus = environment.get("gpus", 0)
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 0:
        raise TaskFormatError(path, "environment.gpus", "expected a whole number of GPUs")
    if gpus:
        config.image_refusals.append(f"{path}: environment.gpus = {gpus}: the task needs GPUs, which a sandbox here has none of")
    if environment.get("mcp_servers"):
        config.image_refusals.append(f"{path}: environment.mcp_servers: the task needs MCP servers beside its container")
    config.artifacts = _artifacts(path, data.get("artifacts"))
    mode = verifier.get("environment_mode", "shared")
    if mode not in VERIFIER_MODES:
        raise TaskFormatError(path, "verifier.environment_mode", f"expected one of {', '.join(VERIFIER_MODES)}")
    config.verifier_mode = mode
    own = verifier.get("environment")
    if own is not None and not isinstance(own, dict):
        raise TaskFormatError(path, "verifier.environment", "expected a table")
    config.verifier_environment = own
    if own and own.get("docker_image"):
        config.refusals.append(
            f"verifier.environment.docker_image = {own['docker_image']!r}: the verifier's own prebuilt image is not run here"
        )
    elif own:
        config.notes.append(f"verifier.environment ({', '.join(sorted(own))}) recorded: the verifier sandbox has the agent's limits")
    if environment.get("healthcheck") is not None:
        config.healthcheck = _healthcheck(path, environment["healthcheck"])
    if isinstance(environment.get("env"), dict) and environment["env"]:
        config.refusals.append(
            f"environment.env ({', '.join(sorted(environment['env']))}): variables resolved from the host for the agent are not passed here"
        )
    _read_steps(path, data, config)
    return config


def _read_steps(path: Path, data: dict, config: HarborConfig) -> None:
    """The ``[[steps]]`` entries and the reward strategy into ``config``; bad values name the field."""
    steps = data.get("steps")
    if data.get("multi_step_reward_mode") is not None:
        config.notes.append("multi_step_reward_mode (before schema 1.3) is dropped, as Harbor drops it")
    strategy = data.get("multi_step_reward_strategy")
    if strategy is not None and strategy not in STEP_REWARD_STRATEGIES:
        raise TaskFormatError(path, "multi_step_reward_strategy", f"expected one of {', '.join(STEP_REWARD_STRATEGIES)}")
    if steps is None:
        if strategy is not None:
            config.notes.append("multi_step_reward_strategy is set but the task has no [[steps]] (not read)")
        return
    if not isinstance(steps, list) or not steps or not all(isinstance(step, dict) for step in steps):
        raise TaskFormatError(path, "steps", "expected one or more [[steps]] tables")
    config.step_reward_strategy = strategy or "mean"
    seen: set[str] = set()
    for index, step in enumerate(steps):
        where = f"steps[{index}]"
        name = step.get("name")
        if not isinstance(name, str) or not STEP_NAME.fullmatch(name):
            raise TaskFormatError(path, f"{where}.name", "expected a folder name under steps/ (letters, digits, '.', '_', '-')")
        if name in seen:
            raise TaskFormatError(path, f"{where}.name", f"expected a name no other step has; {name!r} is repeated")
        seen.add(name)
        agent, verifier = _table(path, step, "agent"), _table(path, step, "verifier")
        for key in sorted(set(step) - STEP_KNOWN[""]):
            config.notes.append(f"warning: unknown field '{where}.{key}' ({name}) in task.toml (not read)")
        for table_name, table in (("agent", agent), ("verifier", verifier)):
            for key in sorted(set(table) - STEP_KNOWN[table_name]):
                config.notes.append(f"warning: unknown field '{where}.{table_name}.{key}' ({name}) in task.toml (not read)")
            user = table.get("user")
            if user not in AGENT_USERS:
                config.refusals.append(
                    f"{where}.{table_name}.user = {user!r} (step {name}): the {table_name} runs as the agent's user here (uid 1000), never as another user"
                )
        config.steps.append(StepConfig(
            name=name,
            min_reward=_min_reward(path, f"{where}.min_reward", step.get("min_reward")),
            agent_timeout=number(path, f"{where}.agent.timeout_sec", agent.get("timeout_sec"), config.agent_timeout),
            verifier_timeout=number(path, f"{where}.verifier.timeout_sec", verifier.get("timeout_sec"), config.verifier_timeout),
            verifier_env={**config.verifier_env, **_strings(path, f"{where}.verifier.env", verifier.get("env"))},
            healthcheck=_healthcheck(path, step["healthcheck"], f"{where}.healthcheck") if step.get("healthcheck") is not None else None,
        ))


def _min_reward(path: Path, where: str, value) -> tuple[tuple[str, float], ...]:
    """Harbor's ``min_reward``: a number (the step's reward) or a table of named rewards, as (name, value) pairs."""
    if value is None:
        return ()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (("reward", float(value)),)
    if isinstance(value, dict) and value and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value.values()):
        return tuple(sorted((str(k), float(v)) for k, v in value.items()))
    raise TaskFormatError(path, where, "expected a number or a table of named rewards and numbers")
