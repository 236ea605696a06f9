"""What a Harbor task asks of its environment that a whole-machine sandbox here cannot give, in one line.

Checked at ``start`` (Harbor's error type there, :class:`SandboxBuildFailedError`, marks a
trial that no retry would help): a Docker Compose environment (sidecar services), GPUs or
TPUs, a Windows container, a Dockerfile the daemonless builder cannot build (its blockers,
such as a base image the host cannot stand in for); everything else the task's folder asks for is decided by this
project's task loader and image builder when the session opens (a base image the host
cannot stand in for, a prebuilt image, a refused ``task.toml`` field), whose own words
become the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...sandbox.build.check import read_buildable

COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")


def refusal(environment_dir: Path, env_config: Any) -> str | None:
    """The first reason this environment cannot run the task (``env_config``: Harbor's task ``[environment]``), or None."""
    for name in COMPOSE_FILES:
        if (Path(environment_dir) / name).is_file():
            return f"a Docker Compose environment ({name}): sidecar services are not supported, only one machine"
    gpus = getattr(env_config, "gpus", None) or 0
    if gpus > 0:
        return f"the task asks for {gpus} GPU(s): the sandbox has none"
    if getattr(env_config, "tpu", None) is not None:
        return "the task asks for a TPU slice: the sandbox has none"
    os_name = str(getattr(getattr(env_config, "os", None), "value", "linux"))
    if os_name != "linux":
        return f"the task targets {os_name}: the sandbox is a Linux machine"
    dockerfile = Path(environment_dir) / "Dockerfile"
    if dockerfile.is_file():
        blockers = read_buildable(dockerfile).blockers
        if blockers:
            return "; ".join(one_line(b) for b in blockers)
    return None


def one_line(text: str) -> str:
    """An error's words on one line (a builder's multi-line report joined)."""
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())
