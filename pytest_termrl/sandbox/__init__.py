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
    """The docker backend, imported only when chosen; without the Docker SDK its construction
    fails with an error naming the extra: pip install 'pytest-termrl[docker]'."""
    from .docker import DockerBackend

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
