"""``Sandbox.exec`` on the docker backend, on a real local engine: one-shot processes beside the agent's shell.

Over the whole machine: any user (one the agent added too), any folder, its own variables
and input, stdout and stderr apart, the exit code, the timeout that kills every process the
run started, the output cap, and what it writes in the container's change record; in the home
sandbox: the agent's user and its home. tests/unit/sandbox/test_exec.py holds the same cases
on bwrap.

Without an engine (or without the base image, or not as root) the module skips on a developer
machine, and fails in CI (``CI=true``): CI runs ``.ci/docker-setup.sh`` first.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import pytest

from conftest import host_pids_with, require_engine, unique_sleep

from pytest_termrl.errors import SandboxError
from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.base import ExecRequest
from pytest_termrl.tasks.model import Task

CAP_SYS_ADMIN = 21

pytestmark = pytest.mark.usefixtures("docker_engine")  # skips (developer machine) or fails (CI) without an engine


@pytest.fixture(scope="module")
def backend(engine_check):
    require_engine(engine_check)
    from pytest_termrl.sandbox.docker import DockerBackend

    made = DockerBackend(SandboxSettings(), local=True)
    made.cleanup_stale()
    yield made
    made.close()


@pytest.fixture(scope="module")
def task_root():
    root = Path(tempfile.mkdtemp(prefix="termrl-exec-task-"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def sandbox(backend, task_root):
    task = Task(id="execs", title="execs", instruction="-", root=task_root, user="user")
    made = backend.create("execs", task)
    try:
        made.prepare(task)
        yield made
    finally:
        made.close()


def _run(sandbox, *argv: str, **kwargs):
    return sandbox.exec(ExecRequest(tuple(argv), **kwargs))


def _sh(sandbox, script: str, **kwargs):
    return _run(sandbox, "sh", "-c", script, **kwargs)


def test_the_sandbox_says_it_can(sandbox):
    assert sandbox.can_exec


def test_no_user_is_the_tasks_user_in_its_workdir(sandbox):
    done = _sh(sandbox, 'id -u; id -un; pwd; echo "$HOME"')
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().split() == ["1000", "user", "/home/user", "/home/user"]


def test_a_user_by_name_by_uid_and_root(sandbox):
    assert _sh(sandbox, "id -u; echo $HOME", user="root").stdout.decode().split() == ["0", "/root"]
    assert _sh(sandbox, "id -u", user="1000").stdout.decode().split() == ["1000"]
    assert _sh(sandbox, "id -u; id -g", user="1000:100").stdout.decode().split() == ["1000", "100"]
    assert _sh(sandbox, "id -un", user="user").stdout.decode().split() == ["user"]


def test_roots_path_is_roots(sandbox):
    path = _sh(sandbox, 'echo "$PATH"', user="root").stdout.decode().strip().split(":")
    assert "/usr/sbin" in path and "/sbin" in path


def test_a_user_the_agent_added_at_run_time(sandbox):
    added = _sh(sandbox, "useradd -m -u 2345 latecomer 2>&1 || adduser --disabled-password --gecos '' --uid 2345 latecomer",
                user="root")
    assert added.returncode == 0, added.stdout + added.stderr
    assert _sh(sandbox, "groupadd -g 3456 crew && usermod -aG crew latecomer", user="root").returncode == 0
    done = _sh(sandbox, 'id -u; id -un; echo "$HOME"; id -G', user="latecomer")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().split()[:3] == ["2345", "latecomer", "/home/latecomer"]
    assert "3456" in done.stdout.decode().split()[3:], "the groups /etc/group gives it now"


def test_a_user_the_machine_lacks_is_refused(sandbox):
    with pytest.raises(SandboxError, match="nobody-such"):
        _run(sandbox, "true", user="nobody-such")


def test_root_has_no_cap_sys_admin_and_cannot_mount(sandbox):
    done = _sh(sandbox, "grep CapEff /proc/self/status; mount -t tmpfs none /mnt 2>&1; echo rc=$?", user="root")
    lines = done.stdout.decode().splitlines()
    caps = int(lines[0].split()[1], 16)
    assert caps, "root keeps some capabilities (an engine's defaults)"
    assert not caps & (1 << CAP_SYS_ADMIN), lines[0]
    assert lines[-1] != "rc=0"


def test_a_non_root_user_cannot_write_etc(sandbox):
    done = _sh(sandbox, "echo x > /etc/exec-forbidden")
    assert done.returncode != 0 and b"Permission denied" in done.stderr
    assert _sh(sandbox, "grep CapEff /proc/self/status").stdout.split()[1].strip(b"0") == b""


def test_cwd_absolute_relative_and_missing(sandbox):
    _sh(sandbox, "mkdir -p /home/user/sub/deeper")
    assert _run(sandbox, "pwd", cwd="/tmp").stdout == b"/tmp\n"
    assert _run(sandbox, "pwd", cwd="sub/deeper").stdout == b"/home/user/sub/deeper\n"
    with pytest.raises(SandboxError, match="not a folder"):
        _run(sandbox, "pwd", cwd="/no/such/folder")
    _sh(sandbox, "touch /home/user/plainfile")
    with pytest.raises(SandboxError, match="not a folder"):
        _run(sandbox, "pwd", cwd="plainfile")


def test_a_user_may_stand_in_a_folder_it_cannot_read(sandbox):
    done = _sh(sandbox, "pwd; ls", cwd="/root")
    assert done.stdout == b"/root\n" and done.returncode != 0 and b"Permission denied" in done.stderr


def test_both_users_run_without_new_privileges(sandbox):
    for user in (None, "root"):
        assert b"NoNewPrivs:\t1" in _run(sandbox, "cat", "/proc/self/status", user=user).stdout


def test_env_is_set_over_the_machines(sandbox):
    done = _sh(sandbox, 'echo "$GREETING|$HOME|$PATH"', env=(("GREETING", "hi there"), ("HOME", "/tmp")))
    greeting, home, path = done.stdout.decode().strip().split("|")
    assert (greeting, home) == ("hi there", "/tmp") and "/usr/bin" in path


def test_a_path_of_the_requests_own_finds_the_command_alone(sandbox):
    for user in (None, "root"):
        assert _run(sandbox, "/bin/echo", "found", env=(("PATH", "/nowhere"),), user=user).stdout == b"found\n"
        lost = _run(sandbox, "echo", "lost", env=(("PATH", "/nowhere"),), user=user)
        assert lost.returncode == 127 and lost.stdout == b""


def test_stdin_is_fed_then_closed(sandbox):
    done = _run(sandbox, "cat", stdin=b"line one\nline two\n", timeout_s=10)
    assert done.returncode == 0 and not done.timed_out
    assert done.stdout == b"line one\nline two\n"
    assert _run(sandbox, "cat", timeout_s=10).stdout == b""  # no input: EOF at once, not the timeout


def test_stdout_and_stderr_apart_and_the_exit_code(sandbox):
    done = _sh(sandbox, "echo out; echo err >&2; echo more out; exit 7")
    assert (done.returncode, done.stdout, done.stderr) == (7, b"out\nmore out\n", b"err\n")
    assert not done.timed_out and not done.truncated and done.duration_s > 0


def test_a_big_binary_input_and_output_round_trip(sandbox):
    data = bytes(range(256)) * 4096  # 1 MiB, every byte value
    done = _run(sandbox, "cat", stdin=data, timeout_s=20)
    assert done.returncode == 0 and done.stdout == data


def test_input_the_process_never_reads_does_not_hold_it(sandbox):
    start = time.monotonic()
    done = _run(sandbox, "true", stdin=b"x" * (8 << 20), timeout_s=20)
    assert done.returncode == 0 and not done.timed_out and time.monotonic() - start < 10


def test_the_timeout_kills_the_run_and_its_background_child(sandbox):
    marker = unique_sleep()
    start = time.monotonic()
    script = f"sleep {marker} & echo $! > /tmp/exec-child; (sleep {marker} &); echo started; sleep {marker}"
    done = _sh(sandbox, script, timeout_s=1.5)  # a child, an orphaned grandchild (double fork), the run itself
    assert done.timed_out and done.returncode is None
    assert done.stdout == b"started\n"
    assert time.monotonic() - start < 12
    time.sleep(0.3)
    assert _sh(sandbox, 'kill -0 "$(cat /tmp/exec-child)"', user="root").returncode != 0, "the background child is gone"
    assert host_pids_with(marker) == []
    states = _sh(sandbox, "for p in /proc/[0-9]*/stat; do cat $p 2>/dev/null; echo; done", user="root").stdout.decode()
    zombies = [line for line in states.splitlines() if line.strip() and line.rsplit(")", 1)[1].split()[0] == "Z"]
    assert zombies == [], zombies
    assert sandbox.run("echo still here").output == "still here\n", "the agent's shell lives on"


def test_a_service_started_in_the_background_outlives_the_exec_without_holding_it(sandbox):
    marker = unique_sleep()
    start = time.monotonic()
    done = _sh(sandbox, f"sleep {marker} & echo $! > /tmp/exec-service; echo started", timeout_s=20)
    assert (done.returncode, done.stdout, done.timed_out) == (0, b"started\n", False)
    assert time.monotonic() - start < 4, "the child holds the outputs open: the result waits a moment, no more"
    assert _sh(sandbox, 'kill -0 "$(cat /tmp/exec-service)"').returncode == 0, "the service runs on"
    assert _sh(sandbox, 'kill "$(cat /tmp/exec-service)"').returncode == 0


def test_the_output_cap_cuts_each_stream(sandbox):
    done = _sh(sandbox, "head -c 100000 /dev/zero; head -c 50 /dev/zero >&2", output_cap_bytes=1000)
    assert done.returncode == 0 and done.truncated
    assert len(done.stdout) == 1000 and len(done.stderr) == 50


def test_what_exec_writes_is_in_the_change_record(sandbox):
    assert _sh(sandbox, "echo made > /etc/exec-made", user="root").returncode == 0
    assert _sh(sandbox, "echo mine > exec-mine").returncode == 0
    entries = sandbox.change_record().read().entries
    assert "/etc/exec-made" in entries and "/home/user/exec-mine" in entries


def test_exec_works_beside_the_shell(sandbox):
    assert sandbox.run("echo shell-before > /tmp/shell-file").exit_code == 0
    assert _run(sandbox, "cat", "/tmp/shell-file").stdout == b"shell-before\n"


def test_the_home_sandbox_execs_as_the_agent_in_its_home(backend, task_root):
    task = Task(id="home-execs", title="home", instruction="-", root=task_root)
    home = backend.create("home-execs", task)
    try:
        home.prepare(task)
        assert home.can_exec
        done = _sh(home, 'id -u; pwd; cat; echo oops >&2; echo x > made-by-exec', stdin=b"fed\n")
        assert (done.returncode, done.stdout.decode().split(), done.stderr) == (0, ["1000", "/home/user", "fed"], b"oops\n")
        assert (home.home / "made-by-exec").read_text() == "x\n"
        assert _run(home, "id", "-u", user="root").stdout == b"0\n"
        marker = unique_sleep()
        slow = _sh(home, f"sleep {marker} & sleep {marker}", timeout_s=1)
        assert slow.timed_out and slow.returncode is None
        time.sleep(0.3)
        assert host_pids_with(marker) == []
    finally:
        home.close()


def test_exec_works_after_the_agents_processes_were_stopped(sandbox):
    sandbox.stop_processes()
    assert _run(sandbox, "id", "-un").stdout == b"user\n"
