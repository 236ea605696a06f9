"""Fixtures of the conformance suite: the backend under test, and sandboxes made from it.

The backend is the one a run with ``--termrl-sandbox=NAME`` gets: a ``pytest_termrl_make_sandbox``
hook first (a plugin's, or a conftest's), then the registry (:func:`pytest_termrl.sandbox.make_backend`).
Every backend and every sandbox made here is closed at teardown.

``termrl_backend_factory`` is the one fixture the others build on: a callable from
:class:`SandboxSettings` to a new backend. A project that runs the suite for several backends
overrides it where it collects the tests.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Callable, Iterator

import pytest

from .. import SandboxBackend, SandboxSettings, make_backend
from ..layout import default_workroot

BackendFactory = Callable[[SandboxSettings], SandboxBackend]
"""Makes a new backend for the given settings; whoever calls it closes the backend."""

DEFAULT_SANDBOX = "bwrap"


def sandbox_name(config: pytest.Config) -> str:
    """The backend under test: ``--termrl-sandbox``, else the ini key ``termrl_sandbox``, else bwrap."""
    name = config.getoption("termrl_sandbox", default=None)
    if not name:
        try:
            name = config.getini("termrl_sandbox")
        except ValueError:  # the plugin is not loaded: no such ini key
            name = None
    return name or DEFAULT_SANDBOX


def backend_factory(config: pytest.Config, name: str) -> BackendFactory:
    """Backends named ``name``: the ``pytest_termrl_make_sandbox`` hook's if one answers, else the registry's."""

    def make(settings: SandboxSettings) -> SandboxBackend:
        hook = getattr(config.hook, "pytest_termrl_make_sandbox", None)
        backend = hook(config=config, name=name, settings=settings, workroot=None) if hook is not None else None
        if backend is None:
            backend = make_backend(name, settings, default_workroot())
        return backend

    return make


@pytest.fixture(scope="session")
def termrl_backend_factory(pytestconfig: pytest.Config) -> BackendFactory:
    """Makes backends of the one under test (``--termrl-sandbox``, default bwrap)."""
    return backend_factory(pytestconfig, sandbox_name(pytestconfig))


@pytest.fixture
def make_sandbox(termrl_backend_factory: BackendFactory) -> Iterator[Callable[..., object]]:
    """``make_sandbox(label, **settings)``: a new sandbox, from a backend of its own made with those
    settings (``command_timeout_s`` 10 unless given); every sandbox and backend is closed at teardown."""
    with ExitStack() as made:

        def _make(label: str = "test", **settings):
            settings.setdefault("command_timeout_s", 10.0)
            backend = termrl_backend_factory(SandboxSettings(**settings))
            made.callback(backend.close)
            sandbox = backend.create(label)
            made.callback(sandbox.close)  # closed before its backend
            return sandbox

        yield _make


@pytest.fixture(scope="module")
def backend(termrl_backend_factory: BackendFactory) -> Iterator[SandboxBackend]:
    """One backend under test for a module's episodes and verifier runs (commands time out after 20 s)."""
    made = termrl_backend_factory(SandboxSettings(command_timeout_s=20))
    try:
        yield made
    finally:
        made.close()
