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
