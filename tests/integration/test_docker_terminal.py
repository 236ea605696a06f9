"""The terminal session of the docker sandboxes on a real engine, beyond the shipped conformance tests (which
tests/unit/sandbox/test_terminal_conformance.py runs on docker-local and docker-remote too): the remote home read
back after a batch, the first screen holding only the prompt, no process left behind, the whole-machine sandbox.

Each test runs against the engine as a local one (the home bind-mounted from this machine) and as a
remote one (``local=False``: nothing bind-mounted, the home a volume read back after each batch); the
whole-machine sandbox gets one test of its own. tests/unit/sandbox/test_terminal.py holds the bwrap cases.

Without an engine (or without the base image, or not as root) the module skips on a developer
machine, and fails in CI (``CI=true``): CI runs ``.ci/docker-setup.sh`` first.
"""

from __future__ import annotations

import re
import time

import pytest

from conftest import backend_factory, require_engine

from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.conformance.test_terminal import keys, last_line  # the shipped suite's helpers
from pytest_termrl.tasks.model import Task

PROMPT = re.compile(r"\$$")


pytestmark = pytest.mark.usefixtures("docker_engine")  # skips (developer machine) or fails (CI) without an engine


@pytest.fixture(scope="module", params=["local", "remote"])
def backend(request, engine_check):
    require_engine(engine_check)
    made = backend_factory(f"docker-{request.param}")(SandboxSettings(command_timeout_s=10.0))
    yield made
    made.close()


@pytest.fixture
def sandbox(backend):
    made = backend.create("terminal")
    made.prepare(Task(id="terminal", title="terminal", instruction="-", root=made.home.parent))
    yield made
    made.close()


def sessions_left(sandbox) -> list[str]:
    """The container's processes that belong to a terminal session (its gate or its bash), as ps shows them."""
    found = sandbox.container.exec_run(["ps", "-eo", "pid=,args="], user="0:0").output.decode()
    return [line for line in found.splitlines() if "--rcfile" in line or "termrl-terminal" in line]


def test_what_was_typed_reaches_the_home_the_harness_reads(sandbox):
    done = keys(sandbox, "printf 'typed\\n' > f.txt", "Enter")
    assert PROMPT.search(last_line(done)), done.output
    assert (sandbox.home / "f.txt").read_text() == "typed\n", "the home (the remote one's mirror) has it"

def test_the_screen_holds_no_escape_sequence_and_the_session_starts_where_the_shell_is(sandbox):
    sandbox.run("mkdir -p work && cd work")
    shown = keys(sandbox, r"printf '\033[1;31mred\033[0m \033]0;title\007plain\n'; ls --color=always /; echo $PWD $TERM $(id -u)",
                 "Enter")
    lines = shown.output.splitlines()
    assert "red plain" in lines and "/home/user/work xterm 1000" in lines, shown.output
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", shown.output), repr(shown.output)
    assert lines[0].endswith("$ printf '\\033[1;31mred\\033[0m \\033]0;title\\007plain\\n'; ls --color=always /; echo $PWD $TERM $(id -u)"), \
        "the first line is the prompt and what was typed: nothing the session's start printed"
    assert keys(sandbox, "stty size", "Enter").output.splitlines()[-2] == "40 160"


def test_no_session_is_left_after_stop_processes(sandbox):
    keys(sandbox, "sleep 300 &", "Enter")
    keys(sandbox, "cat", "Enter")  # a program in the foreground, reading the terminal
    assert sessions_left(sandbox), "the session's bash runs in the container"
    sandbox.stop_processes()
    deadline = time.monotonic() + 5
    while sessions_left(sandbox) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sessions_left(sandbox) == []
    assert "sleep 300" not in sandbox.container.exec_run(["ps", "-eo", "args="], user="0:0").output.decode()
    assert "back" in keys(sandbox, "echo back", "Enter").output, "the next batch starts a new session"


def test_the_machine_sandbox_types_as_the_tasks_user_and_records_what_was_typed(engine_check, tmp_path):
    from pytest_termrl.sandbox.docker import DockerBackend

    backend = DockerBackend(SandboxSettings(command_timeout_s=10.0), local=True)
    problem = backend.whole_machine_problem()
    if problem is not None:
        backend.close()
        require_engine(problem)
    task = Task(id="typed", title="typed", instruction="-", root=tmp_path, user="user")
    machine = backend.create("typed", task)
    try:
        machine.prepare(task)
        before = set(machine.change_record().read().entries)
        assert machine.has_terminal
        written = keys(machine, "echo typed > ~/typed.txt; id -un; pwd", "Enter")
        lines = written.output.splitlines()
        assert PROMPT.search(last_line(written)) and lines[-3:-1] == ["user", "/home/user"], written.output
        changed = set(machine.change_record().read().entries) - before
        assert "/home/user/typed.txt" in changed
        assert not [path for path in changed if "term." in path or "termrl" in path], "the rcfile lies outside the record"
        machine.stop_processes()
        assert [line for line in machine.container.exec_run(["ps", "-eo", "args="], user="0:0").output.decode().splitlines()
                if "--rcfile" in line] == []
    finally:
        machine.close()
        backend.close()
