"""Sandboxes: an ABC with a lazy table of backends (bwrap by default, docker with the extra)."""

from .base import (
    CommandResult,
    IsolatedRequest,
    IsolatedRun,
    Sandbox,
    SandboxBackend,
    SandboxSettings,
    TrustedMount,
    BACKENDS,
    backend_names,
    make_backend,
    register_backend,
)

__all__ = [
    "BACKENDS",
    "CommandResult",
    "IsolatedRequest",
    "IsolatedRun",
    "Sandbox",
    "SandboxBackend",
    "SandboxSettings",
    "TrustedMount",
    "backend_names",
    "make_backend",
    "register_backend",
]
