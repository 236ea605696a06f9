"""``Sandbox.exec`` on the docker backend's home sandbox, on a real local engine: the agent's user and its home.

The whole-machine cases (any user, any folder, variables, input, outputs, exit code, timeout,
output cap, change record) are the shipped conformance suite's
(pytest_termrl.sandbox.conformance.test_exec), which tests/unit/sandbox/test_exec_conformance.py
runs on bwrap, docker-local and docker-remote alike.

Without an engine (or without the base image, or not as root) the module skips on a developer
machine, and fails in CI (``CI=true``): CI runs ``.ci/docker-setup.sh`` first.
"""

from __future__ import annotations

import time

import pytest

from conftest import host_pids_with, unique_sleep

from pytest_termrl.sandbox.conformance.test_exec import execute, sh  # the shipped suite's helpers
from pytest_termrl.tasks.model import Task

pytestmark = pytest.mark.usefixtures("docker_engine")  # skips (developer machine) or fails (CI) without an engine


def test_the_home_sandbox_execs_as_the_agent_in_its_home(local_docker_backend, tmp_path):
    task = Task(id="home-execs", title="home", instruction="-", root=tmp_path)
    home = local_docker_backend.create("home-execs", task)
    try:
        home.prepare(task)
        assert home.can_exec
        done = sh(home, 'id -u; pwd; cat; echo oops >&2; echo x > made-by-exec', stdin=b"fed\n")
        assert (done.returncode, done.stdout.decode().split(), done.stderr) == (0, ["1000", "/home/user", "fed"], b"oops\n")
        assert (home.home / "made-by-exec").read_text() == "x\n"
        assert execute(home, "id", "-u", user="root").stdout == b"0\n"
        marker = unique_sleep()
        slow = sh(home, f"sleep {marker} & sleep {marker}", timeout_s=1)
        assert slow.timed_out and slow.returncode is None
        time.sleep(0.3)
        assert host_pids_with(marker) == []
    finally:
        home.close()
