"""A whole-machine container's layer folder on a tmpfs of the task's storage size, on both real engines (the default
one and the one that remaps user namespaces): what the engine put there kept as it was, the limit held (the shipped
conformance case, here on the default engine too), a restart, ``docker commit``, and ``docker rm`` unmounting the
tmpfs, also for the container of a harness killed with it still there (the stale-container cleanup removes it).

Without an engine the module skips on a developer machine, and fails in CI (``CI=true``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, USERNS_DOCKER_HOST, backend_factory

from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.docker.machine_storage import NOT_SEEN
from pytest_termrl.sandbox.conformance.test_root_isolation import (
    test_roots_disk_is_the_upper_layers_limit_and_the_host_fills_nothing as shipped_disk_case,
)
from pytest_termrl.tasks.model import Resources, Task

ENGINES = ["docker-local", "docker-userns"]


@pytest.fixture(scope="module", params=ENGINES)
def termrl_backend_factory(request):
    """Makes docker backends on one of the two local engines (skips, or fails in CI, when it is unusable)."""
    return backend_factory(request.param)


@pytest.fixture
def backend(termrl_backend_factory):
    made = termrl_backend_factory(SandboxSettings(command_timeout_s=20.0))
    yield made
    made.close()


def _task(tmp: Path, storage_mb: int | None = 16) -> Task:
    resources = Resources(storage_mb=storage_mb) if storage_mb is not None else None
    return Task(id="sized", title="sized", instruction="-", root=tmp, user="root", workdir="/root", resources=resources)


def _prepared(backend, tmp: Path, storage_mb: int | None = 16):
    task = _task(tmp, storage_mb)
    sandbox = backend.create("sized", task)
    try:
        sandbox.prepare(task)
    except BaseException:
        sandbox.close()
        raise
    return sandbox


def _layer(sandbox) -> Path:
    return Path(sandbox.container.attrs["GraphDriver"]["Data"]["UpperDir"]).parent


def _mounted(path: Path) -> bool:
    """Whether anything is mounted at ``path`` in this mount namespace (as /proc/self/mountinfo says)."""
    with open("/proc/self/mountinfo") as table:
        return any(line.split()[4] == str(path) for line in table)


def _fill(sandbox, mb: int) -> str:
    return sandbox.run(f"dd if=/dev/zero of=/var/fill bs=1M count={mb} 2>&1; echo rc=$?").output


def test_the_shipped_disk_case_holds(termrl_backend_factory, tmp_path):
    """Root writing past storage_mb gets ENOSPC, the episode ends with storage_limit, the host's disk fills nothing."""
    shipped_disk_case(termrl_backend_factory, tmp_path, storage_must_hold=True)


def test_the_layer_folder_is_a_tmpfs_holding_what_the_engine_made(backend, tmp_path):
    sandbox = _prepared(backend, tmp_path)
    try:
        layer = _layer(sandbox)
        assert _mounted(layer)
        fs = os.statvfs(layer)
        assert fs.f_blocks * fs.f_frsize == 16 << 20
        assert sandbox.enforced_limits["storage"] == "the container's overlay2 layer folder on a tmpfs of 16 MiB (the task's storage_mb)"
        init = layer.with_name(layer.name + "-init")  # the engine made the container's init layer the same way
        for mine, engines in ((layer, init), (layer / "work", init / "work")):
            a, b = os.lstat(mine), os.lstat(engines)
            assert (a.st_mode, a.st_uid, a.st_gid) == (b.st_mode, b.st_uid, b.st_gid), mine
        base = sandbox.change_record().id_base
        assert (os.lstat(layer / "diff").st_uid, os.lstat(layer / "work").st_gid) == (base, base)
        assert os.lstat(layer / "work" / "work").st_mode & 0o7777 == 0
        link = (layer / "link").read_text().strip()
        assert os.path.samefile(layer.parent / "l" / link, layer / "diff"), "the engine's short link reaches the tmpfs's diff"
        assert (layer / "lower").read_text().startswith("l/")
    finally:
        sandbox.close()


def test_without_a_storage_mb_the_settings_size_holds(backend, tmp_path):
    sandbox = _prepared(backend, tmp_path, storage_mb=None)
    try:
        assert sandbox.enforced_limits["storage"] == "the container's overlay2 layer folder on a tmpfs of 4096 MiB"
        fs = os.statvfs(_layer(sandbox))
        assert fs.f_blocks * fs.f_frsize == sandbox.settings.storage_bytes
    finally:
        sandbox.close()


def test_the_limit_holds_after_the_container_restarts(backend, tmp_path):
    sandbox = _prepared(backend, tmp_path)
    try:
        sandbox.container.restart(timeout=1)  # the engine unmounts and mounts its overlay again: on the same tmpfs
        assert sandbox.run("true").shell_restarted
        out = _fill(sandbox, 64)
        assert "No space left on device" in out and "rc=0" not in out
        assert sandbox.storage_exhausted()
    finally:
        sandbox.close()


def test_a_commit_carries_the_upper_and_removal_unmounts_the_tmpfs(backend, tmp_path):
    sandbox = _prepared(backend, tmp_path)
    layer = _layer(sandbox)
    try:
        assert "KEPT" in sandbox.run("echo kept > /root/kept.txt && echo KEPT").output
        out = _fill(sandbox, 64)
        assert "No space left on device" in out
        snapshot = sandbox.snapshot(tmp_path / "snap")
        image = (snapshot / "image").read_text().strip()
        read = backend.client.containers.run(image, ["sh", "-c", "cat /root/kept.txt; stat -c %s /var/fill"], remove=True,
                                             network_mode="none")
        lines = read.decode().split()
        assert lines[0] == "kept" and int(lines[1]) > 8 << 20, "the committed image holds what the agent wrote on the tmpfs"
    finally:
        sandbox.close()
    assert not _mounted(layer), "docker rm unmounted the layer's tmpfs"
    assert not layer.exists()


KILLED = r"""
import sys, time
from pathlib import Path
from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.docker.machine_storage import NOT_SEEN
from pytest_termrl.sandbox.docker import DockerBackend
from pytest_termrl.tasks.model import Resources, Task
task = Task(id="killed", title="k", instruction="-", root=Path(sys.argv[1]), user="root", workdir="/root",
            resources=Resources(storage_mb=16))
sandbox = DockerBackend(SandboxSettings(), local=True).create("killed", task)
sandbox.prepare(task)
print(sandbox.container.id, sandbox.container.attrs["GraphDriver"]["Data"]["UpperDir"], flush=True)
time.sleep(300)
"""


def test_a_killed_harness_s_container_is_removed_with_its_tmpfs(termrl_backend_factory, backend, tmp_path, request):
    env = dict(os.environ)
    if request.node.callspec.params["termrl_backend_factory"] == "docker-userns":
        env["DOCKER_HOST"] = USERNS_DOCKER_HOST
    harness = subprocess.Popen([sys.executable, "-c", KILLED, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        line = harness.stdout.readline().split()
        assert len(line) == 2, f"the harness did not prepare its sandbox (rc {harness.poll()})"
    finally:
        os.kill(harness.pid, signal.SIGKILL)
        harness.wait()
    container, layer = line[0], Path(line[1]).parent
    assert backend.api.inspect_container(container)["State"]["Running"], "the killed harness's container is still there"
    assert _mounted(layer)
    removed = backend.cleanup_stale()
    assert any(r.startswith("container:") for r in removed), removed
    assert not backend.api.containers(all=True, filters={"id": container})
    assert not _mounted(layer), "the engine unmounted the tmpfs when it removed the container"
    assert not layer.exists()


UNSEEN = r"""
import sys
from pathlib import Path
from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.docker.machine_storage import NOT_SEEN
from pytest_termrl.sandbox.docker import DockerBackend
from pytest_termrl.tasks.model import Resources, Task
task = Task(id="unseen", title="u", instruction="-", root=Path(sys.argv[1]), user="root", workdir="/root",
            resources=Resources(storage_mb=16))
backend = DockerBackend(SandboxSettings(command_timeout_s=20.0), local=True)
sandbox = backend.create("unseen", task)
try:
    sandbox.prepare(task)
    out = sandbox.run("dd if=/dev/zero of=/var/fill bs=1M count=24 2>&1; echo rc=$?").output
    print(sandbox.enforced_limits["storage"], "|", "rc=0" in out, sandbox.storage_exhausted(), "/var/fill" in sandbox.change_record().read().entries)
finally:
    sandbox.close()
    backend.close()
"""


def test_a_harness_whose_mounts_the_engine_does_not_see_says_the_limit_is_not_enforced(termrl_backend_factory, tmp_path, request):
    """A harness in a mount namespace of its own (as an engine in another one would be): the tmpfs it mounts is not the
    one the engine's overlay lies on, which the started container's root tells; the tmpfs goes and the note says why."""
    env = dict(os.environ)
    if request.node.callspec.params["termrl_backend_factory"] == "docker-userns":
        env["DOCKER_HOST"] = USERNS_DOCKER_HOST
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable, "-c", UNSEEN, str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    note, held = done.stdout.strip().split(" | ")
    assert note.startswith(f"not enforced (storage_mb=16 asked): {NOT_SEEN}; and "), note
    assert held == "True False True", "no limit held, and the record read the engine's own upper"
