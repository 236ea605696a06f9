"""What a whole-machine sandbox must hold against an agent that is root inside it: each case a real attempt.

Root inside may change anything in its own machine (that is what the change record is
for), but nothing of the host's: no host file written or read that the host keeps from
other users, no host process seen or signalled, no network but its own loopback, no
mount, module, clock or device of the host's, no change hidden from the record, and no
process left once the sandbox is closed.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import threading
from pathlib import Path
from typing import Callable, Iterator

import pytest

from pytest_termrl.agents.builtin import CommandsAgent
from pytest_termrl.episode import EpisodeSettings
from pytest_termrl.harness import Harness
from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.tasks.model import Resources, Task
from pytest_termrl.tasks.suite import LoadedTask

from .fixtures import termrl_backend_factory  # noqa: F401  (fixture)
from .host import host_pids_appearing, host_pids_with, unique_sleep


def root_task(tmp: Path, user: str = "root", storage_mb: int | None = None) -> Task:
    """A task of nothing but its user (and the disk it asks for): the sandbox it gets is the whole machine."""
    resources = Resources(storage_mb=storage_mb) if storage_mb is not None else None
    return Task(id="root_case", title="root case", instruction="-", root=tmp, user=user, workdir="/root", resources=resources)


@pytest.fixture
def root_sandbox(termrl_backend_factory, tmp_path) -> Iterator[Callable[..., object]]:  # noqa: F811
    """``root_sandbox()``: a prepared whole-machine sandbox whose shell runs as root; all closed at teardown."""
    made = []

    def make(user: str = "root", storage_mb: int | None = None, **settings):
        settings.setdefault("command_timeout_s", 20.0)
        backend = termrl_backend_factory(SandboxSettings(**settings))
        made.append(backend)
        task = root_task(tmp_path, user, storage_mb)
        sandbox = backend.create("root", task)
        made.append(sandbox)
        sandbox.prepare(task)
        return sandbox

    yield make
    for thing in reversed(made):
        thing.close()


def _upper_holds(sandbox, inside: str) -> bool:
    record = sandbox.change_record()
    return inside in record.read().entries


def test_root_inside_is_root_of_its_own_namespace_only(root_sandbox):
    sandbox = root_sandbox()
    result = sandbox.run("id -u; cat /proc/self/uid_map")
    uid, *mapping = result.output.split()
    assert uid == "0"
    inside, outside, count = (int(x) for x in mapping)
    assert inside == 0 and outside > 0 and count == 65536, "root inside must be an unprivileged host id"


def test_writes_to_system_folders_land_in_the_record_not_on_the_host(root_sandbox):
    sandbox = root_sandbox()
    before = Path("/etc/hostname").read_bytes() if Path("/etc/hostname").exists() else None
    marker = f"termrl-{secrets.token_hex(4)}"
    result = sandbox.run(f"echo {marker} > /usr/bin/{marker} && echo {marker} >> /etc/hostname && echo written")
    assert "written" in result.output
    assert not Path(f"/usr/bin/{marker}").exists()
    if before is not None:
        assert Path("/etc/hostname").read_bytes() == before
    assert _upper_holds(sandbox, f"/usr/bin/{marker}") and _upper_holds(sandbox, "/etc/hostname")


def test_no_host_secret_is_readable(termrl_backend_factory, tmp_path):  # noqa: F811
    planted = Path("/root") / f"termrl-host-{secrets.token_hex(4)}"
    planted.write_text("host root's own file\n")
    backend = termrl_backend_factory(SandboxSettings(command_timeout_s=20.0))
    try:
        task = root_task(tmp_path)
        sandbox = backend.create("secrets", task)
        try:
            sandbox.prepare(task)
            result = sandbox.run(
                f"cat /etc/shadow; ls -A /root /home | grep -c termrl-host-; ls /etc/ssh/*_key 2>&1; cat {planted} 2>/dev/null; "
                "test -e /etc/docker/key.json && echo KEYJSON; true"
            )
        finally:
            sandbox.close()
    finally:
        backend.close()
        planted.unlink()
    out = result.output
    host_hashes = [line.split(":")[1] for line in Path("/etc/shadow").read_text().splitlines() if len(line.split(":")) > 2]
    assert not any(h not in ("*", "!", "!*", "x", "") and h in out for h in host_hashes), "a host password hash is readable"
    assert "KEYJSON" not in out and "host root's own file" not in out
    assert "\n0\n" in f"\n{out}", "the host's /root is listed inside"
    assert "_key\n" not in out.replace("No such file", ""), "an ssh host key is visible"


def test_a_host_file_only_root_may_read_is_not_a_lower(termrl_backend_factory, tmp_path):  # noqa: F811
    secret = Path("/etc") / f"termrl-secret-{secrets.token_hex(4)}"
    secret.write_text("host secret\n")
    os.chmod(secret, 0o600)
    backend = termrl_backend_factory(SandboxSettings(command_timeout_s=20.0))
    try:
        task = root_task(tmp_path)
        sandbox = backend.create("secret", task)
        try:
            sandbox.prepare(task)
            result = sandbox.run(f"cat {secret} 2>&1; ls /etc | grep -c termrl-secret")
            assert "host secret" not in result.output
            assert result.output.split()[-1] == "0"
        finally:
            sandbox.close()
    finally:
        backend.close()
        secret.unlink()


def test_no_host_process_is_seen_or_signalled(root_sandbox):
    sandbox = root_sandbox()
    marker = unique_sleep()
    host_process = subprocess.Popen(["sleep", marker])
    try:
        result = sandbox.run(f"ps -eo pid,args | grep sleep | grep -v grep | grep -c {marker}; kill -9 {host_process.pid} 2>&1; echo done")
        assert host_process.poll() is None, "root inside killed a host process"
        assert result.output.split()[0] == "0", "root inside sees a host process"
    finally:
        host_process.kill()
        host_process.wait()


def test_only_its_own_loopback_answers(root_sandbox):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted = []
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        sandbox = root_sandbox()
        reach = sandbox.run(f"timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' && echo CONNECTED; ip route 2>&1 | head -1")
        assert "CONNECTED" not in reach.output and not accepted
        own = sandbox.run(
            "python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & "
            "for i in $(seq 50); do python3 -c 'import urllib.request;print(urllib.request.urlopen(\"http://127.0.0.1:8765/\").status)' 2>/dev/null && break; sleep 0.1; done"
        )
        assert "200" in own.output, "a service the agent starts must answer on the sandbox's own loopback"
    finally:
        stop.set()
        thread.join(2)
        server.close()


@pytest.mark.parametrize("attempt", [
    "mount -o remount,rw /usr",
    "mount -t tmpfs none /mnt",
    "mount --bind /tmp /usr",
    "umount -l /etc",
    "date -s '2001-01-01'",
    "modprobe dummy",
    "python3 -c 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).init_module(None,0,b\"\") == 0 else 1)'",
])
def test_root_holds_no_host_power(root_sandbox, attempt):
    sandbox = root_sandbox()
    result = sandbox.run(f"{attempt} 2>&1; echo rc=$?")
    assert "rc=0" not in result.output, f"{attempt!r} succeeded inside"


def test_a_device_node_reaches_no_host_device(root_sandbox):
    sandbox = root_sandbox()
    result = sandbox.run("mknod /tmp/disk b 8 0; mknod /tmp/mem c 1 1; head -c 16 /tmp/disk 2>/dev/null | wc -c; head -c 16 /tmp/mem 2>/dev/null | wc -c")
    counts = [line for line in result.output.splitlines() if line.strip().isdigit()]
    assert counts and all(int(c) == 0 for c in counts), result.output


def test_a_setuid_binary_is_owned_by_the_sandboxs_range_on_the_host(root_sandbox):
    sandbox = root_sandbox()
    sandbox.run("cp /bin/bash /usr/local/bin/sbash && chmod 4755 /usr/local/bin/sbash")
    record = sandbox.change_record()
    path = "/usr/local/bin/sbash"  # in the upper of the overlay mounted at /usr (bwrap) or at / (docker)
    slot = max((s for s in record.slots if path.startswith(s.mount.rstrip("/") + "/")), key=lambda s: len(s.mount))
    st = os.lstat(slot.upper / path[len(slot.mount.rstrip("/")) + 1:])
    assert st.st_mode & 0o4000 and st.st_uid != 0, "a setuid binary of root inside must never be host root's"


def test_overlay_marks_set_inside_hide_nothing(root_sandbox):
    sandbox = root_sandbox()
    before = sandbox.run("ls -A /etc | wc -l").output.strip()
    sandbox.run(
        "python3 -c 'import os\n"
        "for path, name in ((\"/etc\", \"user.overlay.opaque\"), (\"/etc\", \"trusted.overlay.opaque\"), "
        "(\"/etc\", \"user.overlay.redirect\"), (\"/etc/hostname\", \"user.overlay.metacopy\")):\n"
        "    try:\n        os.setxattr(path, name, b\"y\")\n"
        "    except OSError:\n        pass'"
    )
    assert sandbox.run("ls -A /etc | wc -l").output.strip() == before, "a mark set inside hid the lower's files"
    state = sandbox.change_record().read()  # raises if a mark the kernel would obey reached the upper
    assert not [p for p in state.deleted if p.startswith("/etc/")]


def test_a_hard_link_cannot_carry_a_change_past_the_record(root_sandbox):
    sandbox = root_sandbox()
    linked = sandbox.run("ln /etc/debian_version /etc/alias && echo tampered >> /etc/alias && echo LINKED")
    assert "LINKED" in linked.output, linked.output
    record = sandbox.change_record()
    state = record.read()
    assert "/etc/debian_version" in state.entries, "a write through a hard link to a lower file must show in the record"
    lower = record.lower_entry("/etc/debian_version")
    assert lower is not None and state.entries["/etc/debian_version"].sha256 != lower.sha256


def test_no_process_is_left_after_close(termrl_backend_factory, tmp_path):  # noqa: F811
    backend = termrl_backend_factory(SandboxSettings(command_timeout_s=20.0))
    marker = f"termrl{secrets.token_hex(4)}"
    try:
        task = root_task(tmp_path)
        sandbox = backend.create("leftover", task)
        sandbox.prepare(task)
        sandbox.run(f"(setsid nohup bash -c 'exec -a {marker} sleep 300' >/dev/null 2>&1 &)")
        assert host_pids_appearing(marker), "the detached process did not start"
        sandbox.close()
        assert not host_pids_with(marker), "a process of root inside outlived its sandbox"
    finally:
        backend.close()
        subprocess.run(["pkill", "-f", marker], check=False)


def test_roots_fork_bomb_is_contained_and_the_sandbox_survives(root_sandbox):
    sandbox = root_sandbox(max_processes=64)
    assert "processes" in sandbox.enforced_limits
    result = sandbox.run(":(){ :|:& };:; sleep 5", timeout_s=3)
    assert result.timed_out
    after = sandbox.run("ps -e -o pid= | wc -l", timeout_s=10)
    assert after.exit_code == 0 and int(after.output.split()[0]) < 10


def test_roots_memory_hog_is_killed_and_the_sandbox_survives(root_sandbox):
    sandbox = root_sandbox(memory_bytes=256 * 1024 * 1024)
    assert "memory" in sandbox.enforced_limits
    result = sandbox.run(
        "python3 -c 'b = bytearray(768 * 1024 * 1024); b[::4096] = b\"x\" * len(b[::4096]); print(\"ALLOC\" + \"ATED\")'",
        timeout_s=30,
    )
    assert "ALLOCATED" not in result.output
    assert sandbox.run("echo ok").output == "ok\n"


@pytest.fixture
def storage_must_hold() -> bool:
    """Whether the backend under test must enforce a task's ``storage_mb`` here. False: it may say, in its enforced limits,
    that it does not and why; a project whose backends can (bwrap, docker on a local engine as root) overrides it to True."""
    return False


def test_roots_disk_is_the_upper_layers_limit_and_the_host_fills_nothing(termrl_backend_factory, tmp_path, storage_must_hold):  # noqa: F811
    """The task's storage_mb bounds what root can write: past it a write fails with ENOSPC inside, the episode ends with
    ``storage_limit``, and the upper layers lie on a file system of the limit's size, not the host's disk. A backend that
    cannot enforce it here says so in the sandbox's enforced limits, which every episode records."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    task = Task(id="filler", title="filler", instruction="-", root=tmp_path, user="root", workdir="/root",
                tests_dir=tmp_path / "tests", resources=Resources(storage_mb=32))
    backend = termrl_backend_factory(SandboxSettings(command_timeout_s=20.0))
    try:
        agent = CommandsAgent(["dd if=/dev/zero of=/var/fill bs=1M count=128 2>&1; echo rc=$?", "echo never"], with_reference=False)
        played = Harness(backend, EpisodeSettings(command_timeout_s=20)).play_fresh(LoadedTask(task, None), agent, "fill", keep_open=True)
        sandbox = played.sandbox
        try:
            note = sandbox.enforced_limits.get("storage", "")
            if note.startswith("not enforced"):
                assert not storage_must_hold, f"the backend can enforce storage_mb here, and says: {note!r}"
                asked = "not enforced (storage_mb=32 asked): "
                assert note.startswith(asked) and len(note) > len(asked), f"the note names the ask and why it is not enforced: {note!r}"
                return
            outcome = played.outcome
            assert outcome.end_reason == "storage_limit", (outcome.end_reason, outcome.harness_error)
            assert len(outcome.commands) == 1 and "No space left on device" in outcome.commands[0].output
            assert "rc=0" not in outcome.commands[0].output
            assert sandbox.storage_exhausted()
            layers = os.statvfs(Path(sandbox.change_record().slots[0].upper).parent)
            assert layers.f_blocks * layers.f_frsize <= 33 * 1024 * 1024, "the upper layers lie on a file system of the limit's size"
            assert sandbox.run("rm /var/fill && echo freed").output.strip() == "freed" and not sandbox.storage_exhausted()
        finally:
            sandbox.close()
    finally:
        backend.close()
