"""``Sandbox.exec`` on a whole-machine sandbox: one-shot processes beside the agent's shell.

Any user of the machine (one the agent added too), any folder, its own variables and input,
stdout and stderr apart, the exit code, the timeout that kills every process the run started
(leaving no zombie), a service it leaves running, the output cap, and what it writes in the
change record. The sandbox is made for a task of the user ``user`` (uid 1000, home
/home/user), so it is the whole machine.

For a backend that makes whole-machine sandboxes and whose sandboxes declare ``can_exec``; a sandbox without it
is skipped here.
"""

from __future__ import annotations

import time
from typing import Iterator

import pytest

from pytest_termrl.errors import SandboxError
from pytest_termrl.sandbox import Sandbox, SandboxSettings
from pytest_termrl.sandbox.base import ExecRequest
from pytest_termrl.tasks.model import Task

from .fixtures import termrl_backend_factory  # noqa: F401  (fixture)
from .host import host_pids_with, unique_sleep

CAP_SYS_ADMIN = 21


@pytest.fixture(scope="module")
def whole_machine(termrl_backend_factory, tmp_path_factory) -> Iterator[Sandbox]:  # noqa: F811
    """A prepared whole-machine sandbox of the task user ``user``, shared by the module's cases (default settings)."""
    backend = termrl_backend_factory(SandboxSettings())
    try:
        task = Task(id="execs", title="execs", instruction="-", root=tmp_path_factory.mktemp("exec-task"), user="user")
        made = backend.create("execs", task)
        try:
            made.prepare(task)
            yield made
        finally:
            made.close()
    finally:
        backend.close()


@pytest.fixture(scope="module")
def sandbox(whole_machine):
    if not whole_machine.can_exec:
        pytest.skip(f"the {whole_machine.backend_name} sandbox declares no exec (can_exec)")
    return whole_machine


def execute(sandbox, *argv: str, **kwargs):
    """``argv`` run by ``sandbox.exec``, the request built of ``kwargs``."""
    return sandbox.exec(ExecRequest(tuple(argv), **kwargs))


def sh(sandbox, script: str, **kwargs):
    """``script`` run by ``sh -c`` through ``sandbox.exec``."""
    return execute(sandbox, "sh", "-c", script, **kwargs)


def test_no_user_is_the_tasks_user_in_its_workdir(sandbox):
    done = sh(sandbox, 'id -u; id -un; pwd; echo "$HOME"')
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().split() == ["1000", "user", "/home/user", "/home/user"]


def test_a_user_by_name_by_uid_and_root(sandbox):
    assert sh(sandbox, "id -u; echo $HOME", user="root").stdout.decode().split() == ["0", "/root"]
    assert sh(sandbox, "id -u", user="1000").stdout.decode().split() == ["1000"]
    assert sh(sandbox, "id -u; id -g", user="1000:100").stdout.decode().split() == ["1000", "100"]
    assert sh(sandbox, "id -un", user="user").stdout.decode().split() == ["user"]


def test_roots_path_is_roots(sandbox):
    path = sh(sandbox, 'echo "$PATH"', user="root").stdout.decode().strip().split(":")
    assert "/usr/sbin" in path and "/sbin" in path


def test_a_user_the_agent_added_at_run_time(sandbox):
    added = sh(sandbox, "useradd -m -u 2345 latecomer 2>&1 || adduser --disabled-password --gecos '' --uid 2345 latecomer",
                user="root")
    assert added.returncode == 0, added.stdout + added.stderr
    assert sh(sandbox, "groupadd -g 3456 crew && usermod -aG crew latecomer", user="root").returncode == 0
    done = sh(sandbox, 'id -u; id -un; echo "$HOME"; id -G', user="latecomer")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().split()[:3] == ["2345", "latecomer", "/home/latecomer"]
    assert "3456" in done.stdout.decode().split()[3:], "the groups /etc/group gives it now"


def test_a_user_the_machine_lacks_is_refused(sandbox):
    with pytest.raises(SandboxError, match="nobody-such"):
        execute(sandbox, "true", user="nobody-such")


def test_root_has_no_cap_sys_admin_and_cannot_mount(sandbox):
    done = sh(sandbox, "grep CapEff /proc/self/status; mount -t tmpfs none /mnt 2>&1; echo rc=$?", user="root")
    lines = done.stdout.decode().splitlines()
    caps = int(lines[0].split()[1], 16)
    assert caps, "root keeps some capabilities (an engine's defaults)"
    assert not caps & (1 << CAP_SYS_ADMIN), lines[0]
    assert lines[-1] != "rc=0"


def test_a_non_root_user_cannot_write_etc(sandbox):
    done = sh(sandbox, "echo x > /etc/exec-forbidden")
    assert done.returncode != 0 and b"Permission denied" in done.stderr
    assert sh(sandbox, "grep CapEff /proc/self/status").stdout.split()[1].strip(b"0") == b""


def test_cwd_absolute_relative_and_missing(sandbox):
    sh(sandbox, "mkdir -p /home/user/sub/deeper")
    assert execute(sandbox, "pwd", cwd="/tmp").stdout == b"/tmp\n"
    assert execute(sandbox, "pwd", cwd="sub/deeper").stdout == b"/home/user/sub/deeper\n"
    with pytest.raises(SandboxError, match="not a folder"):
        execute(sandbox, "pwd", cwd="/no/such/folder")
    sh(sandbox, "touch /home/user/plainfile")
    with pytest.raises(SandboxError, match="not a folder"):
        execute(sandbox, "pwd", cwd="plainfile")


def test_a_user_may_stand_in_a_folder_it_cannot_read(sandbox):
    done = sh(sandbox, "pwd; ls", cwd="/root")
    assert done.stdout == b"/root\n" and done.returncode != 0 and b"Permission denied" in done.stderr


def test_both_users_run_without_new_privileges(sandbox):
    for user in (None, "root"):
        assert b"NoNewPrivs:\t1" in execute(sandbox, "cat", "/proc/self/status", user=user).stdout


def test_env_is_set_over_the_machines(sandbox):
    done = sh(sandbox, 'echo "$GREETING|$HOME|$PATH"', env=(("GREETING", "hi there"), ("HOME", "/tmp")))
    greeting, home, path = done.stdout.decode().strip().split("|")
    assert (greeting, home) == ("hi there", "/tmp") and "/usr/bin" in path


def test_a_path_of_the_requests_own_finds_the_command_alone(sandbox):
    for user in (None, "root"):
        assert execute(sandbox, "/bin/echo", "found", env=(("PATH", "/nowhere"),), user=user).stdout == b"found\n"
        lost = execute(sandbox, "echo", "lost", env=(("PATH", "/nowhere"),), user=user)
        assert lost.returncode == 127 and lost.stdout == b""


def test_stdin_is_fed_then_closed(sandbox):
    done = execute(sandbox, "cat", stdin=b"line one\nline two\n", timeout_s=10)
    assert done.returncode == 0 and not done.timed_out
    assert done.stdout == b"line one\nline two\n"
    assert execute(sandbox, "cat", timeout_s=10).stdout == b""  # no input: EOF at once, not the timeout


def test_stdout_and_stderr_apart_and_the_exit_code(sandbox):
    done = sh(sandbox, "echo out; echo err >&2; echo more out; exit 7")
    assert (done.returncode, done.stdout, done.stderr) == (7, b"out\nmore out\n", b"err\n")
    assert not done.timed_out and not done.truncated and done.duration_s > 0


def test_a_big_binary_input_and_output_round_trip(sandbox):
    data = bytes(range(256)) * 4096  # 1 MiB, every byte value
    done = execute(sandbox, "cat", stdin=data, timeout_s=20)
    assert done.returncode == 0 and done.stdout == data


def test_input_the_process_never_reads_does_not_hold_it(sandbox):
    start = time.monotonic()
    done = execute(sandbox, "true", stdin=b"x" * (8 << 20), timeout_s=20)
    assert done.returncode == 0 and not done.timed_out and time.monotonic() - start < 10


def test_the_timeout_kills_the_run_and_its_background_child_leaving_no_zombie(sandbox):
    marker = unique_sleep()
    start = time.monotonic()
    script = f"sleep {marker} & echo $! > /tmp/exec-child; (sleep {marker} &); echo started; sleep {marker}"
    done = sh(sandbox, script, timeout_s=1.5)  # a child, an orphaned grandchild (double fork), the run itself
    assert done.timed_out and done.returncode is None
    assert done.stdout == b"started\n"
    assert time.monotonic() - start < 12
    time.sleep(0.3)
    assert sh(sandbox, 'kill -0 "$(cat /tmp/exec-child)"', user="root").returncode != 0, "the background child is gone"
    left = sh(sandbox, 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null; echo; done', user="root")
    assert [line for line in left.stdout.decode().splitlines() if f"sleep {marker}" in line] == []
    assert host_pids_with(marker) == [], "nothing the run started lingers, the launcher neither"
    states = sh(sandbox, "for p in /proc/[0-9]*/stat; do cat $p 2>/dev/null; echo; done", user="root").stdout.decode()
    zombies = [line for line in states.splitlines() if line.strip() and line.rsplit(")", 1)[1].split()[0] == "Z"]
    assert zombies == [], zombies
    assert sandbox.run("echo still here").output == "still here\n", "the agent's shell lives on"


def test_a_service_started_in_the_background_outlives_the_exec_without_holding_it(sandbox):
    marker = unique_sleep()
    start = time.monotonic()
    done = sh(sandbox, f"sleep {marker} & echo $! > /tmp/exec-service; echo started", timeout_s=20)
    assert (done.returncode, done.stdout, done.timed_out) == (0, b"started\n", False)
    assert time.monotonic() - start < 4, "the child holds the outputs open: the result waits a moment, no more"
    assert sh(sandbox, 'kill -0 "$(cat /tmp/exec-service)"').returncode == 0, "the service runs on"
    assert sh(sandbox, 'kill "$(cat /tmp/exec-service)"').returncode == 0


def test_the_output_cap_cuts_each_stream(sandbox):
    done = sh(sandbox, "head -c 100000 /dev/zero; head -c 50 /dev/zero >&2", output_cap_bytes=1000)
    assert done.returncode == 0 and done.truncated
    assert len(done.stdout) == 1000 and len(done.stderr) == 50


def test_what_exec_writes_is_in_the_change_record(sandbox):
    assert sh(sandbox, "echo made > /etc/exec-made", user="root").returncode == 0
    assert sh(sandbox, "echo mine > exec-mine").returncode == 0
    entries = sandbox.change_record().read().entries
    assert "/etc/exec-made" in entries and "/home/user/exec-mine" in entries


def test_exec_works_beside_a_busy_shell(sandbox):
    assert sandbox.run("echo shell-before > /tmp/shell-file").exit_code == 0
    assert execute(sandbox, "cat", "/tmp/shell-file").stdout == b"shell-before\n"


def test_exec_works_after_the_agents_processes_were_stopped(sandbox):
    sandbox.stop_processes()
    assert execute(sandbox, "id", "-un").stdout == b"user\n"
