"""The docker backend against a real engine: the same sandbox the bwrap backend gives.

The container's own isolation (uid, capabilities, the limits in the engine's config), the
in-container killer, what close removes from the engine, the verifier's channels, cleanup of
killed runs, remote engines, task images, and the same per-episode verdicts as bwrap on real
core tasks.

What every backend holds (isolation, the shell, the verifier) is the shipped conformance
suite, pytest_termrl.sandbox.conformance, which tests/unit/sandbox/test_isolation.py, test_shell.py,
test_verifier.py and test_verifier_hardening.py run for docker too. Here: what only the docker
backend has. Every sandbox and verifier test runs twice: against the engine as a local one (the
home bind-mounted from this machine) and as a remote one (``local=False``: home, commands and
outputs in volumes, nothing bind-mounted, everything through the API), which is what a
``DOCKER_HOST`` on another machine gets. The shell's test runs a third time with every transfer
by the archive API, as over ssh. ``test_remote_engine_over_tcp`` and
``test_remote_engine_over_ssh`` also reach the engine through such a ``DOCKER_HOST``.

Without an engine (or without the base image, or not as root) the whole module skips on a
developer machine, and fails in CI (``CI=true``): CI runs ``.ci/docker-setup.sh`` first.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from conftest import CORE, DOCKER_IMAGE, REPO, SMALL_TASKS, backend_factory, engine_problem, require_engine
from conftest import host_pids_appearing, host_pids_with, solution_of, unique_sleep

from pytest_termrl.sandbox import IsolatedRequest, SandboxSettings, TrustedMount
from pytest_termrl.sandbox.conformance.fixtures import backend, make_sandbox  # noqa: F401  (fixtures)
from pytest_termrl.sandbox.shell import TIMEOUT_EXIT_CODE
from pytest_termrl.verifier.verify import trusted_toolchain

MiB = 1024**2


ENGINE_FREE = {"test_apt_mirror_is_read_from_the_apt_sources", "test_base_images_of_a_dockerfile"}
"""Tests of pure parsing code, which run with or without an engine."""


@pytest.fixture(scope="module")
def engine_check() -> str | None:
    return engine_problem()


@pytest.fixture(autouse=True)
def docker_engine(request, engine_check):
    """Skip (developer machine) or fail (CI=true) every engine test when the engine is unusable."""
    if request.function.__name__ not in ENGINE_FREE:
        require_engine(engine_check)


ENGINE_MODES = ["local", pytest.param("remote", marks=pytest.mark.slow)]
ARCHIVE_MODE = pytest.param("archive", marks=pytest.mark.slow)
"""Remote, and every transfer by the archive API (as over ssh): for the shell's tests."""


def pytest_generate_tests(metafunc):
    if "engine_mode" in metafunc.fixturenames:
        shell_test = metafunc.definition.originalname.startswith("test_shell_")
        metafunc.parametrize("engine_mode", ENGINE_MODES + [ARCHIVE_MODE] * shell_test, indirect=True, scope="module")


@pytest.fixture(scope="module")
def engine_mode(request) -> str:
    """How the backend treats the engine: bind mounts from this machine, or volumes only."""
    return request.param


@pytest.fixture(scope="module")
def termrl_backend_factory(engine_check, engine_mode):
    """Docker backends in this module's engine mode, for ``backend`` and ``make_sandbox`` (each
    sandbox from a backend of its own, which holds its own engine connections; all closed)."""
    require_engine(engine_check)
    return backend_factory(f"docker-{engine_mode}")


def containers_labelled(**labels) -> list[dict]:
    import docker

    client = docker.from_env()
    try:
        filters = {"label": ["termrl=1", *(f"{k}={v}" for k, v in labels.items())]}
        return client.api.containers(all=True, filters=filters)
    finally:
        client.close()


def volumes_labelled(**labels) -> list[str]:
    import docker

    client = docker.from_env()
    try:
        filters = {"label": ["termrl=1", *(f"{k}={v}" for k, v in labels.items())]}
        return sorted(v["Name"] for v in (client.api.volumes(filters=filters) or {}).get("Volumes") or [])
    finally:
        client.close()


def bind_mounts(container) -> list[str]:
    container.reload()
    return [m["Destination"] for m in container.attrs["Mounts"] if m["Type"] == "bind"]


# -- isolation ---------------------------------------------------------------------------
def test_runs_as_uid_1000_without_privileges(make_sandbox, engine_mode):
    sandbox = make_sandbox("uid")
    result = sandbox.run("id -u; id -g; id -un; echo $HOME; pwd; grep -E '^(Cap(Eff|Prm|Bnd|Inh|Amb)|NoNewPrivs)' /proc/self/status")
    lines = result.output.splitlines()
    assert lines[:5] == ["1000", "1000", "user", "/home/user", "/home/user"]
    fields = {line.split(":")[0]: line.split()[1] for line in lines[5:]}
    # Remote: the bounding set keeps what the harness's own root execs need to empty and own
    # the home; the agent holds none of it, and no-new-privileges stops it gaining any.
    bounding = 0 if engine_mode == "local" else (1 << 0) | (1 << 1) | (1 << 3)  # CHOWN, DAC_OVERRIDE, FOWNER
    caps = {k: int(v, 16) for k, v in fields.items() if k.startswith("Cap")}
    assert caps == {"CapInh": 0, "CapPrm": 0, "CapEff": 0, "CapBnd": bounding, "CapAmb": 0}
    assert fields["NoNewPrivs"] == "1"
    probe = sandbox.run("chown root ~ && echo CHOWNED; rm -f /run/termrl/init.sh && echo REMOVED; chmod 000 /run/termrl && echo LOCKED")
    assert not {"CHOWNED", "REMOVED", "LOCKED"} & set(probe.output.split()), probe.output
    assert sandbox.run("su -c true root </dev/null; sudo -n true").exit_code != 0
    # The container's first processes are root's: the agent can neither see their secrets nor kill them.
    assert sandbox.run("kill -9 1").exit_code != 0
    assert sandbox.run("echo alive").output == "alive\n"


def test_enforced_limits_are_recorded(make_sandbox):
    sandbox = make_sandbox("limits", memory_bytes=256 * MiB, max_processes=64, file_size_bytes=4 * MiB, cpus=0.5)
    assert sandbox.enforced_limits == {
        "memory": f"cgroup:{256 * MiB}",
        "processes": "cgroup:64",
        "cpu": "cgroup:0.5",
        "file_size": f"rlimit_fsize:{4 * MiB}",
    }
    sandbox.run("true")
    host = sandbox.container.attrs["HostConfig"]
    assert host["Memory"] == 256 * MiB and host["PidsLimit"] == 64 and host["NanoCpus"] == 500_000_000
    assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] and host["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in host["SecurityOpt"]
    remote = not sandbox._backend.local
    assert sorted(host["CapAdd"] or []) == (["CHOWN", "DAC_OVERRIDE", "FOWNER"] if remote else [])
    assert sorted(bind_mounts(sandbox.container)) == ([] if remote else ["/home/user", "/opt/termrl/standins", "/run/termrl", "/run/termrl-out"])


def test_in_container_killer_when_the_host_cannot_reach_the_cgroup(make_sandbox, monkeypatch):
    # A remote engine, or a cgroup layout the host cannot read: the killer runs inside, as uid 1000.
    from pytest_termrl.sandbox.docker import DockerSandbox

    monkeypatch.setattr(DockerSandbox, "_kill_from_host", lambda self, spare, interrupt=None: False)
    sandbox = make_sandbox("inside-killer", max_processes=64)
    marker = unique_sleep()
    sandbox.run(f"X=kept; nohup sleep {marker} >/dev/null 2>&1 &")
    assert host_pids_appearing(f"sleep {marker}")
    result = sandbox.run("sleep 60; echo late", timeout_s=1)
    assert result.timed_out and result.shell_restarted and "late" not in result.output, result.output
    assert host_pids_with(f"sleep {marker}") == []
    assert sandbox.run("echo $X").output == "kept\n"
    assert sandbox.run("exit 3").exit_code == 3
    bomb = sandbox.run(":(){ :|:& };:; sleep 5", timeout_s=3)
    assert bomb.timed_out
    after = sandbox.run("/bin/echo $X; ps -e -o pid= | wc -l", timeout_s=10)
    word, count = after.output.split()
    assert word == "kept" and int(count) < 10


# -- the persistent shell ------------------------------------------------------------------------
def test_shell_state_survives_a_timeout_and_the_rest_does_not_run(make_sandbox):
    sandbox = make_sandbox("timeout")
    assert sandbox.run("X=kept; cd /tmp").exit_code == 0
    result = sandbox.run("Y=lost; cd /; sleep 60; echo late > ~/late.txt", timeout_s=1)
    assert result.timed_out and result.exit_code == TIMEOUT_EXIT_CODE and result.shell_restarted
    time.sleep(0.3)
    assert not (sandbox.home / "late.txt").exists()
    # Like bwrap: the new shell resumes where the last finished command left it.
    assert sandbox.run('echo "$X|$Y"; pwd').output == "kept|\n/tmp\n"


def test_close_removes_the_container_and_its_volumes(make_sandbox):
    # Processes and the folder: tests/unit/sandbox/test_isolation.py. Here: what the engine holds.
    sandbox = make_sandbox("bg")
    marker = unique_sleep()
    sandbox.run(f"setsid nohup sleep {marker} >/dev/null 2>&1 &")
    assert host_pids_appearing(f"sleep {marker}")
    container_id, run_id = sandbox.container.id, sandbox._backend.run_id
    volumes = volumes_labelled(**{"termrl.run": run_id})
    assert len(volumes) == (0 if sandbox._backend.local else 4)  # home, commands, outputs, stand-ins
    sandbox.close()
    assert host_pids_with(f"sleep {marker}") == []
    assert not [c for c in containers_labelled() if c["Id"] == container_id]
    assert volumes_labelled(**{"termrl.run": run_id}) == []


def test_control_folder_cannot_be_pointed_at_a_host_file(make_sandbox, tmp_path):
    target = tmp_path / "host_secret_config"
    target.write_text("original\n")
    os.chmod(target, 0o600)
    sandbox = make_sandbox("escape")
    sandbox.run(f"ln -sf {target} /run/termrl/cmd.3; ln -sf {target} /run/termrl-out/out.3; ln -sf {target} /run/termrl/init.sh; true")
    assert sandbox.run("echo harmless").output == "harmless\n"
    sandbox.run("exit 1")
    assert target.read_text() == "original\n" and target.stat().st_mode & 0o777 == 0o600
    assert sandbox.run("echo ok").output == "ok\n"


# -- the verifier ------------------------------------------------------------------------------
def test_isolated_run_channels(backend, tmp_path):
    """The secret arrives on TERMRL_SECRET_FD; only what is written to TERMRL_RESULT_FD comes back
    as the payload; what the process and its children print goes to the log."""
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "probe.py").write_text(
        textwrap.dedent(
            """
            import os, subprocess, sys
            key = os.read(int(os.environ["TERMRL_SECRET_FD"]), 100)
            result = int(os.environ["TERMRL_RESULT_FD"])
            os.set_inheritable(result, False)
            # An untrusted child: prints a fake payload every way it can reach.
            subprocess.run(["bash", "-c", 'echo FAKE-STDOUT; echo FAKE-STDERR >&2; echo FAKE4 >&4; echo FAKE3 >&3; '
                            'echo FAKE-DEV > /dev/stdout; id -u'], check=False)
            print("runner says hi", flush=True)
            os.write(result, b"REAL:" + key.hex().encode() + b"\\n")
            """
        )
    )
    home = tmp_path / "snap" / "home"
    home.mkdir(parents=True)
    os.chown(home, 1000, 1000)
    mounts = [TrustedMount(tools, "/opt/termrl/runner"), *trusted_toolchain()]
    argv = [sys.executable, "-I", "/opt/termrl/runner/probe.py"]
    run = backend.run_isolated(IsolatedRequest(home, argv, mounts, b"\x01secret", timeout_s=60, settings=backend.settings))
    assert run.returncode == 0 and not run.timed_out, run.log
    assert run.payload == b"REAL:" + b"\x01secret".hex().encode() + b"\n"
    assert "FAKE-STDOUT" in run.log and "FAKE-STDERR" in run.log and "FAKE-DEV" in run.log and "runner says hi" in run.log
    assert "Bad file descriptor" in run.log  # fds 3 and 4 never reach the child
    assert "1000" in run.log.split()


def test_isolated_run_times_out_and_leaves_nothing(backend, tmp_path):
    home = tmp_path / "snap" / "home"
    home.mkdir(parents=True)
    os.chown(home, 1000, 1000)
    mine = {"termrl.role": "verify", "termrl.run": backend.run_id}
    before = {c["Id"] for c in containers_labelled(**mine)}
    started = time.monotonic()
    run = backend.run_isolated(IsolatedRequest(home, ["sleep", "100"], [], b"k", timeout_s=2, settings=backend.settings))
    assert run.timed_out and time.monotonic() - started < 15
    assert {c["Id"] for c in containers_labelled(**mine)} <= before
    assert volumes_labelled(**{"termrl.run": backend.run_id, "termrl.role": "verify-home"}) == []


TASK = "log_error_counts"
@pytest.fixture(scope="module")
def suite(engine_check):
    require_engine(engine_check)
    from pytest_termrl.tasks.suite import load_suite

    return load_suite(CORE / "contracts.jsonl")


def play(backend, suite, agent, script: str | None = None, task_id: str = TASK, family: str = "clean"):
    from pytest_termrl.episode import EpisodeSettings, EpisodeSpec
    from pytest_termrl.harness import Harness

    loaded = suite.by_id(task_id)
    harness = Harness(backend, EpisodeSettings(command_timeout_s=20, test_timeout_s=20), predictions={task_id: script} if script else {})
    sandbox = harness.new_sandbox(loaded, f"ep-{agent.name}")
    try:
        fault = harness.inject(loaded, sandbox, family)
        return harness.play(EpisodeSpec("core", task_id, family), loaded, sandbox, agent, fault=fault)
    finally:
        sandbox.close()


# -- same verdicts as bwrap ----------------------------------------------------------------------
def _verdict_of(outcome) -> dict:
    v = outcome.verdict
    return {
        "safe_success": outcome.safe_success,
        "reward": outcome.reward,
        "end_reason": outcome.end_reason,
        "harness_error": outcome.harness_error,
        "violations": sorted(outcome.violations),
        "tests": v.to_dict()["outcomes"] if v else None,
        "problems": list(v.problems) if v else None,
        "exit_codes": [c.exit_code for c in outcome.commands],
    }


CARELESS = "rm -rf ~/.ssh ~/reports/scratch-notes.txt\n"


@pytest.mark.parametrize("task_id", SMALL_TASKS)
def test_same_verdicts_as_bwrap(backend, suite, task_id):
    from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent, ScriptAgent
    from pytest_termrl.sandbox.bwrap.backend import BwrapBackend

    bwrap = BwrapBackend(SandboxSettings(command_timeout_s=20))
    verdicts = {}
    for name, make_agent, script in (
        ("oracle", ReferenceAgent, None),
        ("noop", NoopAgent, None),
        ("careless", ScriptAgent, solution_of(task_id) + CARELESS),
    ):
        seen = {}
        for label, chosen in (("bwrap", bwrap), ("docker", backend)):
            seen[label] = _verdict_of(play(chosen, suite, make_agent(), script, task_id))
        assert seen["docker"] == seen["bwrap"], name
        verdicts[name] = seen["docker"]
    assert verdicts["oracle"]["safe_success"] and verdicts["oracle"]["reward"] == 1.0
    assert not verdicts["noop"]["safe_success"] and verdicts["noop"]["reward"] == 0.0
    assert not verdicts["careless"]["safe_success"] and verdicts["careless"]["violations"]


@pytest.mark.parametrize("family", ["perm_denied", "moved_input"])
def test_same_verdicts_as_bwrap_under_a_fault(backend, suite, family):
    """A faulted family: the oracle (ignores the fault) and a repairing agent judge alike on both backends."""
    from pytest_termrl.agents.builtin import ReferenceAgent, ScriptAgent
    from pytest_termrl.faults import FAMILIES
    from pytest_termrl.sandbox.bwrap.backend import BwrapBackend

    loaded = suite.by_id(TASK)
    target = loaded.contract.fault_targets[family]
    bwrap = BwrapBackend(SandboxSettings(command_timeout_s=20))
    repair = {"perm_denied": f"chmod 644 {target}", "moved_input": f"mv \"$(find . -path '*/.cache-*/{Path(target).name}' | head -1)\" {target}"}[family]
    for name, make_agent, script in (("oracle", ReferenceAgent, None), ("repairs", ScriptAgent, repair + "\n" + solution_of(TASK))):
        seen = {}
        for label, chosen in (("bwrap", bwrap), ("docker", backend)):
            outcome = play(chosen, suite, make_agent(), script, TASK, family)
            seen[label] = {**_verdict_of(outcome), "observed": outcome.monitor_fields.get("observed"), "cleared": outcome.monitor_fields.get("fault_cleared")}
        assert seen["docker"] == seen["bwrap"], (name, seen)
        if name == "oracle":
            assert not seen["docker"]["safe_success"] and seen["docker"]["cleared"] is False
        else:
            assert seen["docker"]["safe_success"] and seen["docker"]["cleared"] is True, seen["docker"]
    assert family in FAMILIES


# -- cleanup -------------------------------------------------------------------------------------
OWNER = """
import os, signal, sys, time
from pathlib import Path
# As in a terminal: a runner started in the background by a non-interactive shell inherits
# SIGINT ignored, and Python then never turns Ctrl-C into KeyboardInterrupt.
signal.signal(signal.SIGINT, signal.default_int_handler)
from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.docker import DockerBackend
backend = DockerBackend(SandboxSettings(), Path(sys.argv[1]), local=sys.argv[2] == "local")
sandbox = backend.create("victim")
sandbox.run("nohup sleep {marker} >/dev/null 2>&1 &")
print(sandbox.container.id, sandbox.home.parent, flush=True)
time.sleep(600)
"""


def _start_owner(tmp_path, marker: str, mode: str) -> tuple[subprocess.Popen, str, Path]:
    workroot = tmp_path / "workroot"
    process = subprocess.Popen(
        [sys.executable, "-c", OWNER.format(marker=marker), str(workroot), mode],
        stdout=subprocess.PIPE, text=True, cwd=REPO, start_new_session=True,
    )
    line = process.stdout.readline().split()
    assert len(line) == 2, "the owner process did not start a sandbox"
    return process, line[0], Path(line[1])


def test_cleanup_after_a_killed_episode(tmp_path, engine_mode):
    from pytest_termrl.sandbox.docker import DockerBackend

    marker = unique_sleep()
    process, container_id, folder = _start_owner(tmp_path, marker, engine_mode)
    owner = {"termrl.pid": str(process.pid)}
    other = DockerBackend(SandboxSettings(), folder.parent)
    try:
        # While the owner lives, another run's cleanup spares its sandbox.
        assert not [r for r in other.cleanup_stale() if container_id[:12] in r or str(folder) == r]
        assert [c for c in containers_labelled() if c["Id"] == container_id]
        process.kill()
        process.wait()
        # Killed: its container, volumes, processes and folder stay until a cleanup.
        assert [c for c in containers_labelled() if c["Id"] == container_id]
        assert host_pids_appearing(f"sleep {marker}")
        assert len(volumes_labelled(**owner)) == (4 if engine_mode == "remote" else 0)
        removed = other.cleanup_stale()
        assert any(r.startswith("container:termrl-") for r in removed) and str(folder) in removed
        assert not [c for c in containers_labelled() if c["Id"] == container_id]
        assert host_pids_with(f"sleep {marker}") == [] and not folder.exists()
        assert volumes_labelled(**owner) == []
    finally:
        other.close()
        if process.poll() is None:
            process.kill()


def test_ctrl_c_removes_the_container(tmp_path, engine_mode):
    marker = unique_sleep()
    process, container_id, folder = _start_owner(tmp_path, marker, engine_mode)
    process.send_signal(signal.SIGINT)
    process.wait(timeout=60)
    assert not [c for c in containers_labelled() if c["Id"] == container_id]
    assert host_pids_with(f"sleep {marker}") == [] and not folder.exists()
    assert volumes_labelled(**{"termrl.pid": str(process.pid)}) == []


def test_engine_locality(monkeypatch, docker_engine):
    from pytest_termrl.errors import SandboxError
    from pytest_termrl.sandbox.docker import engine_is_local

    monkeypatch.delenv("TERMRL_DOCKER_LOCAL", raising=False)
    assert engine_is_local("http+docker://localhost", "unix:///var/run/docker.sock")
    assert engine_is_local("http://127.0.0.1:2375", "tcp://127.0.0.1:2375")
    assert engine_is_local("http://localhost:2375", "tcp://localhost:2375")
    assert not engine_is_local("http://10.1.2.3:2376", "tcp://10.1.2.3:2376")
    assert not engine_is_local("http+docker://ssh", "ssh://me@build-box")
    monkeypatch.setenv("TERMRL_DOCKER_LOCAL", "1")
    assert engine_is_local("http+docker://ssh", "ssh://me@build-box")
    monkeypatch.setenv("TERMRL_DOCKER_LOCAL", "0")
    assert not engine_is_local("http+docker://localhost", "unix:///var/run/docker.sock")
    monkeypatch.setenv("TERMRL_DOCKER_LOCAL", "maybe")
    with pytest.raises(SandboxError, match="TERMRL_DOCKER_LOCAL='maybe': expected 1/true/yes .* or 0/false/no"):
        engine_is_local("http+docker://localhost", "unix:///var/run/docker.sock")


class EngineProxy:
    """A TCP listener on loopback that relays every connection to the engine's unix socket.

    Stands in for an engine on another machine: the SDK speaks to it over ``tcp://``, and
    it counts the bytes, so a test can tell the traffic went that way.
    """

    def __init__(self, socket_path: str = "/var/run/docker.sock") -> None:
        self.socket_path = socket_path
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(64)
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self.bytes = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            engine.connect(self.socket_path)
            with self._lock:
                self.connections += 1
            for a, b in ((client, engine), (engine, client)):
                threading.Thread(target=self._relay, args=(a, b), daemon=True).start()

    def _relay(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
                with self._lock:
                    self.bytes += len(chunk)
            sink.shutdown(socket.SHUT_WR)  # half-close: an exec's stdin EOF must reach the engine
        except OSError:
            for end in (source, sink):
                end.close()

    def close(self) -> None:
        self.server.close()


def _play_on_a_remote_engine(monkeypatch, suite, tmp_path) -> None:
    """With DOCKER_HOST already pointing at the engine: oracle and noop episodes play and are
    graded there, every container gets volumes only, and nothing is left at the end."""
    from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent
    from pytest_termrl.sandbox.docker import DockerBackend
    from pytest_termrl.sandbox.docker import RemoteDockerSandbox

    backend = DockerBackend(SandboxSettings(command_timeout_s=20), tmp_path / "work")
    assert not backend.local
    created = []
    make = backend.create_container
    monkeypatch.setattr(backend, "create_container", lambda *a, **k: created.append(make(*a, **k)) or created[-1])
    sandbox = backend.create("remote")
    assert isinstance(sandbox, RemoteDockerSandbox)
    sandbox.close()
    oracle = play(backend, suite, ReferenceAgent(), task_id=TASK)
    noop = play(backend, suite, NoopAgent(), task_id=TASK)
    assert oracle.safe_success and oracle.reward == 1.0 and not oracle.violations, oracle.verdict
    assert not noop.safe_success and noop.verdict.error is None and noop.reward == 0.0
    roles = {c.labels["termrl.role"] for c in created}
    assert {"agent", "verify", "fill"} <= roles
    for container in created:
        mounts = container.attrs["HostConfig"].get("Mounts") or []
        assert mounts and all(m["Type"] == "volume" for m in mounts), (container.name, mounts)
        assert not container.attrs["HostConfig"].get("Binds")
    backend.close()
    assert volumes_labelled(**{"termrl.run": backend.run_id}) == []
    assert containers_labelled(**{"termrl.run": backend.run_id}) == []


@pytest.mark.slow
def test_remote_engine_over_tcp(monkeypatch, suite, tmp_path):
    """DOCKER_HOST=tcp://... to an engine that sees none of this machine's files."""
    proxy = EngineProxy()
    monkeypatch.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{proxy.port}")
    monkeypatch.setenv("TERMRL_DOCKER_LOCAL", "0")  # loopback would count as local; this engine must not
    try:
        _play_on_a_remote_engine(monkeypatch, suite, tmp_path)
        assert proxy.connections > 0 and proxy.bytes > 100_000
    finally:
        proxy.close()


@pytest.fixture
def ssh_engine(tmp_path, monkeypatch):
    """An sshd on loopback with keys of its own; DOCKER_HOST=ssh://root@127.0.0.1:PORT reaches the
    engine through it (``docker system dial-stdio`` on the far side), as a remote machine would."""
    import shutil

    from sshd import loopback_sshd, missing_tools

    missing = missing_tools() + [tool for tool in ("docker",) if not shutil.which(tool)]
    if missing:
        require_engine(f"{', '.join(missing)} missing (openssh-server and the docker CLI; .ci/docker-setup.sh installs them)")
    with loopback_sshd(tmp_path) as (port, home):
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("DOCKER_HOST", f"ssh://root@127.0.0.1:{port}")
        monkeypatch.delenv("TERMRL_DOCKER_LOCAL", raising=False)
        yield port


@pytest.mark.slow
def test_remote_engine_over_ssh(ssh_engine, monkeypatch, suite, tmp_path):
    """DOCKER_HOST=ssh://...: counted remote without any override, and whole episodes play there."""
    from pytest_termrl.sandbox.docker import engine_is_local

    assert not engine_is_local("http+docker://ssh", os.environ["DOCKER_HOST"])
    _play_on_a_remote_engine(monkeypatch, suite, tmp_path)
    # A process that ends without closing its sandbox: the exit hook still reaches the engine
    # (it must run before the ssh transport's own hook closes the connection).
    ended = subprocess.run([sys.executable, "-c", ENDS_OPEN, str(tmp_path / "ends")], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert ended.returncode == 0, ended.stderr
    run_id = ended.stdout.split()[0]
    assert containers_labelled(**{"termrl.run": run_id}) == [] and volumes_labelled(**{"termrl.run": run_id}) == []


ENDS_OPEN = """
import sys
from pathlib import Path
from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.docker import DockerBackend
backend = DockerBackend(SandboxSettings(), Path(sys.argv[1]))
sandbox = backend.create("ends-open")
assert sandbox.run("echo hi > x").exit_code == 0
print(backend.run_id, flush=True)
"""


# -- images ----------------------------------------------------------------------------------------
def test_apt_mirror_is_read_from_the_apt_sources(tmp_path):
    from pytest_termrl.sandbox.docker.images.base import apt_mirror

    etc = tmp_path / "apt"
    (etc / "sources.list.d").mkdir(parents=True)
    (etc / "sources.list").write_text("# nothing here\n")
    (etc / "sources.list.d" / "other.list").write_text("deb [signed-by=/k.gpg] https://vendor.example/apt stable main\n")
    (etc / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian\nSuites: trixie trixie-updates\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: trixie-security\nComponents: main\n"
    )
    assert apt_mirror("trixie", etc) == ("http://mirror.example/debian", "trixie", "/usr/share/keyrings/debian-archive-keyring.gpg")
    assert apt_mirror("stable", etc)[0] == "https://vendor.example/apt"
    with pytest.raises(Exception, match="serves 'bookworm main'"):
        apt_mirror("bookworm", etc)


def test_base_images_of_a_dockerfile(tmp_path):
    from pytest_termrl.sandbox.docker.images.task import base_images

    (tmp_path / "Dockerfile").write_text(
        "ARG BASE=termrl-base:1\n# comment\nFROM --platform=linux/amd64 ${BASE} AS build\nRUN true\n"
        "FROM build\nFROM scratch\nFROM example.org/tools:2 \\\n  AS tools\nCOPY --from=tools /x /x\n"
    )
    assert base_images(tmp_path / "Dockerfile") == ["termrl-base:1", "example.org/tools:2"]


def test_task_dockerfile_from_a_missing_image_is_a_clear_error(tmp_path):
    from pytest_termrl.sandbox.docker.images.client import ImageError
    from pytest_termrl.sandbox.docker.images.task import build_task_image

    (tmp_path / "Dockerfile").write_text("FROM termrl-missing/python:3.99\nRUN true\n")
    with pytest.raises(ImageError) as info:
        build_task_image(tmp_path)
    message = str(info.value)
    assert "FROM termrl-missing/python:3.99" in message and "not present" in message
    assert "docker load" in message and "no container registry" in message


def _open_sockets() -> set[str]:
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                found.add(fd)
        except OSError:
            pass
    return found


def test_a_closed_backend_keeps_no_engine_connection(engine_mode):
    # Each request URL (every exec, every archive path) gets its own pooled connection; a
    # run that makes backend after backend must not keep them all.
    from pytest_termrl.sandbox.docker import DockerBackend

    before = _open_sockets()
    backend = DockerBackend(SandboxSettings(), local=engine_mode == "local")
    sandbox = backend.create("connections")
    for n in range(5):
        assert sandbox.run(f"echo {n}").output == f"{n}\n"
    assert _open_sockets() - before
    sandbox.close()
    backend.close()
    assert _open_sockets() - before == set()


def test_a_missing_sandbox_image_is_a_clear_error(docker_engine):
    from pytest_termrl.errors import SandboxError
    from pytest_termrl.sandbox.docker import DockerBackend

    sandbox = DockerBackend(SandboxSettings(), image="termrl-not-built:9").create("noimage")
    try:
        with pytest.raises(SandboxError, match=r"termrl-not-built:9 is not in the engine.*pytest_termrl.sandbox.docker.images.base build"):
            sandbox.run("true")
    finally:
        sandbox.close()
        sandbox._backend.close()


def test_task_image_is_built_and_used(tmp_path, suite, engine_mode):
    import docker

    from pytest_termrl.sandbox.docker import DockerBackend

    task_dir = tmp_path / "task_with_image"
    task_dir.mkdir()
    (task_dir / "Dockerfile").write_text(f"FROM {DOCKER_IMAGE}\nRUN echo from-the-task-image > /etc/termrl-task-marker\n")
    from pytest_termrl.sandbox.docker.images.task import build_task_image

    tag = build_task_image(task_dir)
    try:
        assert build_task_image(task_dir) == tag  # cached by content
        loaded = suite.by_id(TASK)
        task = type(loaded.task)(**{**loaded.task.__dict__, "root": task_dir, "extra": {}})
        sandbox = DockerBackend(SandboxSettings(), local=engine_mode == "local").create("taskimage")
        try:
            sandbox.prepare(task)
            assert sandbox.image == tag
            assert sandbox.run("cat /etc/termrl-task-marker").output == "from-the-task-image\n"
            # The hidden tests run in the task's image too.
            home = sandbox.snapshot(tmp_path / "snap")
            marker = IsolatedRequest(home, ["cat", "/etc/termrl-task-marker"], [], b"k", timeout_s=60, settings=sandbox.settings)
            run = sandbox._backend.run_isolated(marker)
            assert run.returncode == 0 and run.log == "from-the-task-image\n"
        finally:
            sandbox.close()
            sandbox._backend.close()
    finally:
        # The cleanup command finds the task images by their label and removes them.
        pruned = subprocess.run([sys.executable, "-m", "pytest_termrl.sandbox.docker.images.base", "prune-tasks", "--task", "task_with_image"],
                                capture_output=True, text=True, timeout=120)
        client = docker.from_env()
        try:
            assert pruned.returncode == 0 and f"removed {tag}" in pruned.stdout, pruned.stdout + pruned.stderr
            assert not client.images.list(name="termrl-task-task_with_image")
        finally:
            if client.images.list(name=tag.split(":")[0]):
                client.images.remove(tag, force=True)
            client.close()


def test_grader_artifacts_come_back_from_the_engine(docker_engine):
    """What a Harbor grader leaves in /logs/artifacts comes back from a container as from bwrap.

    On an engine of this machine: the task's workdir is /app, which a remote engine refuses."""
    import base64

    from pytest_termrl.agents.builtin import ReferenceAgent
    from pytest_termrl.sandbox.docker import DockerBackend
    from pytest_termrl.episode import EpisodeSettings, EpisodeSpec
    from pytest_termrl.harness import Harness
    from pytest_termrl.tasks.importers import load_task_dir
    from pytest_termrl.tasks.suite import LoadedTask

    loaded = LoadedTask(load_task_dir(Path(__file__).resolve().parents[1] / "data" / "harbor_fields" / "hb-artifacts"), None)
    backend = DockerBackend(SandboxSettings())
    harness = Harness(backend, EpisodeSettings(command_timeout_s=20, test_timeout_s=20))
    sandbox = harness.new_sandbox(loaded, "ep-artifacts")
    try:
        outcome = harness.play(EpisodeSpec("imported", loaded.task.id, "clean"), loaded, sandbox, ReferenceAgent())
    finally:
        sandbox.close()
        backend.close()
    assert outcome.safe_success, outcome.verdict.to_dict()
    files = {rel: base64.b64decode(data) for rel, data in outcome.verdict.artifacts.items()}
    assert files == {"summary.txt": b"expected 3, got 3\n", "details/notes.txt": b"alpha\nbeta\ngamma\n"}


def test_a_healthcheck_runs_in_the_container_before_the_agent(docker_engine, tmp_path):
    """Harbor's healthcheck on an engine: tried in the agent's container after the setup, a setup failure when it never passes."""
    import shutil

    from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent
    from pytest_termrl.episode import EpisodeSettings, EpisodeSpec
    from pytest_termrl.errors import SetupFailed
    from pytest_termrl.harness import Harness
    from pytest_termrl.sandbox.docker import DockerBackend
    from pytest_termrl.tasks.importers import load_task_dir
    from pytest_termrl.tasks.suite import LoadedTask

    source = Path(__file__).resolve().parents[1] / "data" / "harbor_fields" / "hb-healthcheck"
    broken = shutil.copytree(source, tmp_path / "hb-healthcheck-down")
    toml = broken / "task.toml"
    toml.write_text(toml.read_text().replace("[ $n -ge 2 ]", "[ $n -ge 99 ]"))
    backend = DockerBackend(SandboxSettings())
    harness = Harness(backend, EpisodeSettings(command_timeout_s=20, test_timeout_s=20))
    try:
        outcomes = {}
        for label, agent in (("reference", ReferenceAgent()), ("noop", NoopAgent())):
            loaded = LoadedTask(load_task_dir(source), None)
            sandbox = harness.new_sandbox(loaded, f"ep-healthcheck-{label}")
            try:
                outcomes[label] = harness.play(EpisodeSpec("imported", loaded.task.id, "clean"), loaded, sandbox, agent)
            finally:
                sandbox.close()
        with pytest.raises(SetupFailed, match=r"^healthcheck failed: .* never passed in 3 tries \(the last exited with code 1\)"):
            harness.new_sandbox(LoadedTask(load_task_dir(broken), None), "ep-healthcheck-down").close()
    finally:
        backend.close()
    assert outcomes["reference"].safe_success, outcomes["reference"].verdict.to_dict()
    assert not outcomes["noop"].safe_success and outcomes["noop"].verdict.native_reward == 0.0


def test_a_server_the_agent_left_running_answers_the_grader_in_its_network(docker_engine):
    """Harbor grades in the agent's container: the verifier's container shares the agent's network until grading ends."""
    from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent
    from pytest_termrl.episode import EpisodeSettings, EpisodeSpec
    from pytest_termrl.harness import Harness
    from pytest_termrl.sandbox.docker import DockerBackend
    from pytest_termrl.tasks.importers import load_task_dir
    from pytest_termrl.tasks.suite import LoadedTask

    loaded = LoadedTask(load_task_dir(Path(__file__).resolve().parents[1] / "data" / "harbor_fields" / "hb-service"), None)
    assert loaded.task.graded_beside_the_agent
    backend = DockerBackend(SandboxSettings())
    harness = Harness(backend, EpisodeSettings(command_timeout_s=20, test_timeout_s=20))
    outcomes = {}
    try:
        for label, agent in (("reference", ReferenceAgent()), ("noop", NoopAgent())):
            sandbox = harness.new_sandbox(loaded, f"ep-service-{label}")
            try:
                outcomes[label] = harness.play(EpisodeSpec("imported", loaded.task.id, "clean"), loaded, sandbox, agent)
            finally:
                sandbox.close()
    finally:
        backend.close()
    assert outcomes["reference"].safe_success, outcomes["reference"].verdict.to_dict()
    assert outcomes["noop"].verdict.native_reward == 0.0
