"""The shipped exec tests (pytest_termrl.sandbox.conformance.test_exec), run here for every backend of the project
that makes whole-machine sandboxes: tests/conftest.py parametrises them (EXEC_BACKENDS: bwrap, docker-local).

Where the shipped suite skips a sandbox that declares no exec, the project's own must declare it: the one case
written here."""

import pytest

from pytest_termrl.sandbox.conformance.test_exec import *  # noqa: F401,F403  (the tests and their fixtures)

from conftest import EXEC_BACKENDS, termrl_backend_factory  # noqa: F401  (the project's backends, not --termrl-sandbox's)


@pytest.mark.parametrize("termrl_backend_factory", EXEC_BACKENDS, indirect=True, scope="module")
def test_the_sandbox_says_it_can(whole_machine):
    assert whole_machine.can_exec
