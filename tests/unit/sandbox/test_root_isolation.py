"""The shipped root-inside isolation tests (pytest_termrl.sandbox.conformance.test_root_isolation), run
here on the backends that offer whole-machine sandboxes (tests/conftest.py: WHOLE_MACHINE_BACKENDS)."""

import pytest

from pytest_termrl.sandbox.conformance.test_root_isolation import *  # noqa: F401,F403  (the tests and their fixtures)

from conftest import termrl_backend_factory  # noqa: F401  (the project's backends, not --termrl-sandbox's)


@pytest.fixture
def storage_must_hold() -> bool:
    """Every backend here enforces a task's storage_mb: bwrap's upper layers and a local engine's container layer
    (the harness root) lie on a tmpfs of its size."""
    return True
