"""Sandboxes: an ABC with a registry of backends (bwrap by default)."""

from .base import (
    CommandResult,
    IsolatedRun,
    Sandbox,
    SandboxBackend,
    SandboxSettings,
    TrustedMount,
    backend_names,
    make_backend,
    register_backend,
)
from . import bwrap  # noqa: F401  (registers the default backend)


def _docker_backend(settings, workroot):
    from .docker import DockerBackend  # needs the [docker] extra; imported only when chosen

    return DockerBackend(settings, workroot)


register_backend("docker", _docker_backend)

__all__ = [
    "CommandResult",
    "IsolatedRun",
    "Sandbox",
    "SandboxBackend",
    "SandboxSettings",
    "TrustedMount",
    "backend_names",
    "make_backend",
    "register_backend",
]
