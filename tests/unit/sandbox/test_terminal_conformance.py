"""The shipped terminal tests (pytest_termrl.sandbox.conformance.test_terminal), run here for every backend the
project has: tests/conftest.py parametrises them (bwrap, docker-local, docker-remote)."""

from pytest_termrl.sandbox.conformance.test_terminal import *  # noqa: F401,F403  (the tests and their fixtures)

from conftest import termrl_backend_factory  # noqa: F401  (the project's backends, not --termrl-sandbox's)
