"""The bwrap sandbox from the agent's side: no network, no writes or reads outside its
home, no host processes, uid 1000, and limits that hold while the sandbox stays usable."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from conftest import host_pids_appearing, host_pids_with, unique_sleep

from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.bwrap import BwrapBackend
from pytest_termrl.sandbox.limits import ResourceLimits
from pytest_termrl.sandbox import limits as limits_mod

MiB = 1024**2


@pytest.fixture
def host_listener():
    """A real TCP server on the host's 127.0.0.1; records every connection it accepts."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    accepted: list[tuple] = []
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, addr = server.accept()
            except (socket.timeout, OSError):
                continue
            accepted.append(addr)
            conn.close()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join(2)
    server.close()


def test_no_network_to_a_port_the_host_listens_on(make_sandbox, host_listener):
    port, accepted = host_listener
    # The listener is real: the host itself can connect.
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        pass
    for _ in range(20):
        if accepted:
            break
        threading.Event().wait(0.05)
    assert len(accepted) == 1
    sandbox = make_sandbox("net")
    bash = sandbox.run(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED")
    assert bash.exit_code != 0 and "CONNECTED" not in bash.output
    assert "refused" in bash.output.lower() or "unreachable" in bash.output.lower()
    py = sandbox.run(
        "python3 -c \"import socket; s=socket.socket(); s.settimeout(2); "
        f"s.connect(('127.0.0.1', {port})); print('CONNECTED')\""
    )
    assert py.exit_code != 0 and "CONNECTED" not in py.output
    # Only a loopback device, no route anywhere else.
    devices = sandbox.run("tail -n +3 /proc/net/dev | cut -d: -f1")
    assert devices.output.split() == ["lo"]
    outside = sandbox.run("exec 3<>/dev/tcp/1.1.1.1/53 && echo CONNECTED")
    assert outside.exit_code != 0 and "CONNECTED" not in outside.output
    assert len(accepted) == 1, "the sandbox reached the host's listener"


@pytest.mark.parametrize("target", ["/usr", "/etc", "/", "/opt", "/var", "/run"])
def test_cannot_write_outside_home_and_tmp(make_sandbox, target):
    sandbox = make_sandbox("ro")
    name = f"termrl_probe_{os.getpid()}"
    result = sandbox.run(f"touch {target.rstrip('/')}/{name} && echo WROTE; mkdir {target.rstrip('/')}/{name}.d && echo MADE")
    assert "WROTE" not in result.output and "MADE" not in result.output
    assert "Read-only file system" in result.output or "Permission denied" in result.output
    assert not Path(target, name).exists()


def test_can_write_home_and_tmp(make_sandbox):
    sandbox = make_sandbox("rw")
    result = sandbox.run("touch ~/a /tmp/b /var/tmp/c && echo ok && stat -c %u ~/a")
    assert result.exit_code == 0 and result.output.split() == ["ok", "1000"]
    # The home is the host folder; files there belong to the agent's uid, nothing more.
    assert (sandbox.home / "a").stat().st_uid == 1000


def test_cannot_see_host_processes(make_sandbox):
    sandbox = make_sandbox("pid")
    me = os.getpid()
    assert Path(f"/proc/{me}").exists()
    result = sandbox.run(f"test -e /proc/{me} && echo VISIBLE || echo hidden; ls /proc | grep -c '^[0-9]*$'")
    first, count = result.output.split()
    assert first == "hidden"
    assert int(count) < 10
    ps = sandbox.run("ps -e -o comm=")
    names = ps.output.split()
    assert len(names) < 8
    assert "pytest" not in ps.output and "python" not in " ".join(names)
    # Signalling a host pid fails: it does not exist in this namespace.
    assert sandbox.run(f"kill -0 {me}").exit_code != 0


def test_runs_as_uid_1000_without_privileges(make_sandbox):
    sandbox = make_sandbox("uid")
    result = sandbox.run("id -u; id -g; id -un; echo $HOME; pwd; grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status")
    lines = result.output.splitlines()
    assert lines[:5] == ["1000", "1000", "user", "/home/user", "/home/user"]
    caps = {line.split(":")[0]: int(line.split()[1], 16) for line in lines[5:]}
    assert caps == {"CapPrm": 0, "CapEff": 0, "CapBnd": 0}
    assert sandbox.run("su -c true root </dev/null; sudo -n true").exit_code != 0


def test_cannot_read_root_only_files(make_sandbox):
    sandbox = make_sandbox("secret")
    secret = sandbox.home / "root_secret.txt"
    secret.write_text("TOPSECRET-" + "x" * 10 + "\n")
    os.chown(secret, 0, 0)
    os.chmod(secret, 0o600)
    result = sandbox.run("cat ~/root_secret.txt; cat /etc/shadow; head -c 100 /proc/1/environ; echo done")
    assert "TOPSECRET" not in result.output
    assert "root:" not in result.output
    assert result.output.count("Permission denied") >= 2
    assert sandbox.run("cat ~/root_secret.txt").exit_code != 0
    assert sandbox.run("cat /etc/shadow").exit_code != 0


def test_enforced_limits_are_recorded(make_sandbox):
    sandbox = make_sandbox("limits", memory_bytes=256 * MiB, max_processes=64, file_size_bytes=4 * MiB)
    limits = sandbox.enforced_limits
    assert set(limits) >= {"memory", "processes", "file_size", "cpu"}
    assert limits["memory"].endswith(str(256 * MiB))
    assert limits["processes"].endswith("64")
    assert limits["file_size"] == f"rlimit_fsize:{4 * MiB}"


def test_fork_bomb_is_contained_and_sandbox_survives(make_sandbox):
    sandbox = make_sandbox("bomb", max_processes=64)
    # The bomb would take the host down without a process limit: it must be enforced.
    assert "processes" in sandbox.enforced_limits
    result = sandbox.run(":(){ :|:& };:; sleep 5", timeout_s=3)
    assert result.timed_out and result.exit_code == 124
    assert "fork" in result.output.lower() or "resource temporarily unavailable" in result.output.lower()
    after = sandbox.run("/bin/echo ok; ps -e -o pid= | wc -l", timeout_s=10)
    assert after.exit_code == 0
    ok, count = after.output.split()
    assert ok == "ok" and int(count) < 10


def test_memory_hog_is_killed_and_sandbox_survives(make_sandbox):
    sandbox = make_sandbox("mem", memory_bytes=256 * MiB)
    assert "memory" in sandbox.enforced_limits
    result = sandbox.run("python3 -c 'b = bytearray(768 * 1024 * 1024); b[::4096] = b\"x\" * len(b[::4096]); print(\"ALLOC\" + \"ATED\")'", timeout_s=20)
    assert "ALLOCATED" not in result.output
    assert result.timed_out or result.exit_code not in (0, None)
    assert sandbox.run("echo ok").output == "ok\n"
    assert sandbox.run("/bin/echo ok").output == "ok\n"


def test_file_size_cap_holds_exactly(make_sandbox):
    cap = 2 * MiB
    sandbox = make_sandbox("fsize", file_size_bytes=cap)
    assert sandbox.enforced_limits["file_size"] == f"rlimit_fsize:{cap}"
    below = sandbox.run(f"head -c {cap - 4096} /dev/zero > below.bin; echo rc=$?")
    assert below.output.strip().endswith("rc=0"), below.output
    assert (sandbox.home / "below.bin").stat().st_size == cap - 4096
    beyond = sandbox.run(f"head -c {cap + 4096} /dev/zero > beyond.bin; echo rc=$?")
    assert not beyond.output.strip().endswith("rc=0")
    assert (sandbox.home / "beyond.bin").stat().st_size <= cap
    assert sandbox.run("echo ok").output == "ok\n"


def test_processes_are_gone_after_close(make_sandbox):
    sandbox = make_sandbox("bg")
    marker = unique_sleep()
    sandbox.run(f"sleep {marker} & setsid nohup sleep {marker}1 >/dev/null 2>&1 &")
    assert len(host_pids_appearing(f"sleep {marker}", 2)) == 2
    folder = sandbox.home.parent
    sandbox.close()
    assert host_pids_with(f"sleep {marker}") == []
    assert not folder.exists()


def test_stop_processes_keeps_the_home(make_sandbox):
    sandbox = make_sandbox("stop")
    marker = unique_sleep()
    sandbox.run(f"echo data > kept.txt; nohup sleep {marker} >/dev/null 2>&1 &")
    assert host_pids_appearing(f"sleep {marker}")
    sandbox.stop_processes()
    assert host_pids_with(f"sleep {marker}") == []
    assert (sandbox.home / "kept.txt").read_text() == "data\n"


def test_snapshot_copies_without_following_links(make_sandbox, tmp_path):
    sandbox = make_sandbox("snap")
    sandbox.run("mkdir -p d && echo hi > d/f && ln -s /etc/passwd link && mkfifo pipe && chmod 640 d/f")
    snap = sandbox.snapshot(tmp_path / "snap")
    assert (snap / "d" / "f").read_text() == "hi\n"
    assert os.readlink(snap / "link") == "/etc/passwd"
    assert (snap / "pipe").is_fifo()
    assert (snap / "d" / "f").stat().st_mode & 0o777 == 0o640
    assert (snap / "d" / "f").stat().st_uid == 1000


# -- limits applied by the wrapper ---------------------------------------------------------
def test_limit_wrapper_runs_with_an_nproc_rlimit(monkeypatch):
    # An unprivileged harness (no writable pids cgroup) limits processes with an rlimit.
    # The wrapper must accept the commands it generates, or no sandbox starts at all.
    monkeypatch.setattr(limits_mod.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(limits_mod, "_v1_controller", lambda name: None)
    limits = ResourceLimits(SandboxSettings(max_processes=100, file_size_bytes=8 * MiB), "sbx-0-wrapper-test")
    limits.setup()
    assert limits.enforced["processes"].startswith("rlimit_nproc:")
    result = subprocess.run(limits.wrap(["/bin/sh", "-c", "echo started"]), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "started\n"


@pytest.fixture
def fake_cgroup_root(tmp_path, monkeypatch):
    """A stand-in cgroup v1 tree, so a cleanup under test cannot touch other runs' groups."""
    root = tmp_path / "cgroup"
    for controller in ("memory", "pids", "cpu"):
        (root / controller).mkdir(parents=True)
        (root / controller / "cgroup.procs").write_text("")
    monkeypatch.setattr(limits_mod, "_V1_ROOT", root)
    # A stand-in group holds a file, so release() would wait for it to empty: don't.
    monkeypatch.setattr(limits_mod, "time", type("T", (), {"sleep": staticmethod(lambda s: None)}))
    return root


def test_another_runs_cleanup_spares_a_live_sandbox(fake_cgroup_root):
    # Two runs with different workroots (say, two users' or two checkouts' runs): the
    # second's startup cleanup must not remove the first's groups before its shell joins.
    first = BwrapBackend(SandboxSettings(), Path(tempfile.mkdtemp(prefix="termrl-a-")))
    second = BwrapBackend(SandboxSettings(), Path(tempfile.mkdtemp(prefix="termrl-b-")))
    sandbox = first.create("victim")
    try:
        assert sandbox.enforced_limits["memory"].startswith("cgroup:")
        removed = second.cleanup_stale()
        assert not [path for path in removed if sandbox.home.parent.name in path]
        assert sandbox.run("echo alive").output == "alive\n"
    finally:
        sandbox.close()


def test_cleanup_removes_groups_of_dead_runs(fake_cgroup_root):
    backend = BwrapBackend(SandboxSettings(), Path(tempfile.mkdtemp(prefix="termrl-c-")))
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = backend.workroot / f"sbx-{dead.pid}-old-0000"
    (stale / "home").mkdir(parents=True)
    for controller in ("memory", "pids", "cpu"):
        (fake_cgroup_root / controller / "termrl" / stale.name).mkdir(parents=True)
    removed = backend.cleanup_stale()
    assert str(stale) in removed and not stale.exists()
    assert not (fake_cgroup_root / "memory" / "termrl" / stale.name).exists()


# -- the harness's control folder ------------------------------------------------------------
@pytest.fixture
def host_target(tmp_path):
    """A root-only host file standing for any host path (/etc/cron.d/..., /root/.ssh/...)."""
    target = tmp_path / "host_secret_config"
    target.write_text("original\n")
    os.chmod(target, 0o600)
    return target


def test_next_command_file_cannot_be_pointed_at_a_host_file(make_sandbox, host_target):
    # The agent plants a link where the harness will write its next command as root.
    sandbox = make_sandbox("escape-cmd")
    sandbox.run(f'n=$(ls /run/termrl/cmd.* | sed "s/.*cmd\\.//"); ln -sf {host_target} /run/termrl/cmd.$((n+1)) 2>/dev/null; true')
    sandbox.run("echo harmless # * * * * * root /tmp/payload")
    assert host_target.read_text() == "original\n"
    assert host_target.stat().st_mode & 0o777 == 0o600
    assert sandbox.run("echo ok").output == "ok\n"


def test_shell_init_file_cannot_be_pointed_at_a_host_file(make_sandbox, host_target):
    # The harness rewrites init.sh on every restart; the agent can force a restart.
    sandbox = make_sandbox("escape-init")
    sandbox.run(f"rm -f /run/termrl/init.sh 2>/dev/null; ln -sf {host_target} /run/termrl/init.sh 2>/dev/null; exit 1")
    assert host_target.read_text() == "original\n"
    assert host_target.stat().st_mode & 0o777 == 0o600
    assert sandbox.run("echo ok").output == "ok\n"
