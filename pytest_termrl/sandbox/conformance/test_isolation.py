"""What every sandbox backend must hold, from the agent's side: no network, no writes or reads
outside its home, no host processes, limits that hold while the sandbox stays usable, no
process left after the episode, and a snapshot that copies without following anything.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from pytest_termrl.errors import SandboxError
from pytest_termrl.sandbox.shell import TIMEOUT_EXIT_CODE
from pytest_termrl.tasks.model import Task

from .fixtures import make_sandbox, termrl_backend_factory  # noqa: F401  (fixtures)
from .host import host_pids_appearing, host_pids_with, unique_sleep

MiB = 1024**2


@pytest.fixture
def host_listener():
    """A real TCP server on every address of the host; records every connection it accepts."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", 0))
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
        time.sleep(0.05)
    assert len(accepted) == 1
    sandbox = make_sandbox("net")
    # Only a loopback device, no route anywhere else: not the host, not a docker bridge's gateway.
    devices = sandbox.run("tail -n +3 /proc/net/dev | cut -d: -f1")
    assert devices.output.split() == ["lo"]
    for host in ("127.0.0.1", "172.17.0.1", "1.1.1.1"):
        result = sandbox.run(f"timeout 5 bash -c 'exec 3<>/dev/tcp/{host}/{port}' && echo CONNECTED")
        assert result.exit_code != 0 and "CONNECTED" not in result.output, host
    py = sandbox.run(
        "python3 -c \"import socket; s=socket.socket(); s.settimeout(2); "
        f"s.connect(('127.0.0.1', {port})); print('CONNECTED')\""
    )
    assert py.exit_code != 0 and "CONNECTED" not in py.output
    assert len(accepted) == 1, "the sandbox reached the host's listener"


@pytest.mark.parametrize("target", ["/usr", "/etc", "/", "/opt", "/var", "/run", "/run/termrl"])
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
    # The home as the harness sees it; files there belong to the agent's uid, nothing more.
    assert (sandbox.home / "a").stat().st_uid == 1000
    # /tmp is the sandbox's own, not the host's.
    assert not Path("/tmp/b").exists() or Path("/tmp/b").stat().st_uid != 1000


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
    assert "pytest" not in ps.output and "dockerd" not in ps.output and "python" not in " ".join(names)
    # Signalling a host pid fails: it does not exist in this namespace.
    assert sandbox.run(f"kill -0 {me}").exit_code != 0


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


def test_fork_bomb_is_contained_and_sandbox_survives(make_sandbox):
    sandbox = make_sandbox("bomb", max_processes=64)
    # The bomb would take the host down without a process limit: it must be enforced.
    assert "processes" in sandbox.enforced_limits
    sandbox.run("X=kept")
    result = sandbox.run(":(){ :|:& };:; sleep 5", timeout_s=3)
    assert result.timed_out and result.exit_code == TIMEOUT_EXIT_CODE
    assert "fork" in result.output.lower() or "resource temporarily unavailable" in result.output.lower()
    after = sandbox.run("/bin/echo $X; ps -e -o pid= | wc -l", timeout_s=10)
    assert after.exit_code == 0
    word, count = after.output.split()
    assert word == "kept" and int(count) < 10


def test_memory_hog_is_killed_and_sandbox_survives(make_sandbox):
    sandbox = make_sandbox("mem", memory_bytes=256 * MiB)
    assert "memory" in sandbox.enforced_limits
    result = sandbox.run(
        "python3 -c 'b = bytearray(768 * 1024 * 1024); b[::4096] = b\"x\" * len(b[::4096]); print(\"ALLOC\" + \"ATED\")'",
        timeout_s=30,
    )
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
    # A command after the stop gets a fresh shell in the same home.
    assert sandbox.run("cat kept.txt").output == "data\n"


def test_snapshot_copies_without_following_links(make_sandbox, tmp_path):
    sandbox = make_sandbox("snap")
    sandbox.run("mkdir -p d && echo hi > d/f && ln -s /etc/passwd link && mkfifo pipe && chmod 640 d/f")
    snap = sandbox.snapshot(tmp_path / "snap")
    assert (snap / "d" / "f").read_text() == "hi\n"
    assert os.readlink(snap / "link") == "/etc/passwd"
    assert (snap / "pipe").is_fifo()
    assert (snap / "d" / "f").stat().st_mode & 0o777 == 0o640
    assert (snap / "d" / "f").stat().st_uid == 1000


def test_setup_script_runs_as_the_agent_byte_for_byte(make_sandbox, tmp_path):
    script = tmp_path / "setup.sh"
    script.write_bytes(b"cat > raw.bin <<'EOF'\n\xff\xfe latin-1 \xe9\nEOF\nid -u > who.txt\n")
    task = Task(id="setup_bytes", title="Setup bytes", instruction="Nothing to do.\n", root=tmp_path, setup_script=script)
    sandbox = make_sandbox("setup")
    sandbox.prepare(task)
    assert (sandbox.home / "raw.bin").read_bytes() == b"\xff\xfe latin-1 \xe9\n"
    assert (sandbox.home / "who.txt").read_text() == "1000\n"
    # A failing setup is the task's error, naming the script and showing its output.
    script.write_text("echo broken-setup; exit 3\n")
    with pytest.raises(SandboxError, match=r"setup failed: .*setup\.sh exited with code 3; the last lines of its output:\n  \| broken-setup"):
        make_sandbox("setup-fails").prepare(task)
