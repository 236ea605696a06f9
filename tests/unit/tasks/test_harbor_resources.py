"""Harbor's [environment] cpus, memory_mb and storage_mb: the limits of the agent's and the verifier's sandboxes.

Fixture tasks under tests/data/harbor_resources write ``ok`` to /app/out.txt: ``hr-memory-64``
(``memory_mb = 64``), ``hr-half-cpu`` (``cpus = 0.5``, ``storage_mb = 512``) and
``hr-no-limits`` (the harness's defaults). They are played in real bwrap sandboxes; the
docker test checks the container's own configuration on a real engine.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import require_service

from conftest import backend_factory, engine_problem, require_engine
from pytest_termrl.agents.builtin import CommandsAgent, ReferenceAgent
from pytest_termrl.sandbox.base import GiB, IsolatedRequest, MiB, SandboxSettings
from pytest_termrl.sandbox.limits import machine_memory_bytes, task_settings
from pytest_termrl.tasks.importers import load_task_dir
from pytest_termrl.tasks.model import Resources, Task
from pytest_termrl.tasks.suite import LoadedTask

DATA = Path(__file__).resolve().parents[2] / "data" / "harbor_resources"
ALLOCATE = "python3 -c 'x = b\"1\" * (200 * 1024 * 1024); print(\"allocated\", len(x))'"
"""Touches 200 MiB: past a 64 MiB task's memory, well within the default 2 GiB."""

pytestmark = pytest.mark.usefixtures("import_cache")  # imports land in a cache of this run's own


def _loaded(name: str, task_dir: Path | None = None) -> LoadedTask:
    return LoadedTask(load_task_dir(task_dir or DATA / name), None)


def test_a_tasks_cpus_and_memory_replace_the_defaults_and_are_capped_at_the_machine():
    defaults = SandboxSettings()
    assert task_settings(defaults, None) == (defaults, {})
    settings, notes = task_settings(defaults, Resources(cpus=0.5, memory_mb=64), machine=(4, 8 * GiB))
    assert (settings.cpus, settings.memory_bytes, settings.max_processes) == (0.5, 64 * MiB, defaults.max_processes)
    assert notes == {"task_resources": "cpus=0.5 memory_mb=64"}
    settings, notes = task_settings(defaults, Resources(cpus=16, memory_mb=64 * 1024, storage_mb=512), "why not", machine=(4, 8 * GiB))
    assert (settings.cpus, settings.memory_bytes) == (4.0, 8 * GiB)
    assert notes == {
        "task_resources": "cpus=16 memory_mb=65536 storage_mb=512",
        "capped": "cpus 16 -> 4 (the machine's CPUs); memory_mb 65536 -> 8192 (the machine's MemTotal)",
        "storage": "not enforced (storage_mb=512 asked): why not",
    }
    # Without another machine named, this one's: os.cpu_count() and MemTotal.
    settings, notes = task_settings(defaults, Resources(cpus=10_000, memory_mb=10**9))
    assert (settings.cpus, settings.memory_bytes) == (float(os.cpu_count()), machine_memory_bytes())


def test_memory_mb_kills_an_agent_that_allocates_past_it_and_a_task_without_it_is_not(harness):
    limited, _, _ = harness.play_fresh(_loaded("hr-memory-64"), CommandsAgent([ALLOCATE]), "alloc")
    limits = limited.enforced_limits
    assert limits["task_resources"] == "memory_mb=64" and limits["memory"].endswith(f":{64 * MiB}"), limits
    allocation = limited.commands[-1]
    if limits["memory"].startswith("cgroup:"):  # the kernel's OOM killer ends it
        assert allocation.exit_code == 137 and "Killed" in allocation.output, allocation
    else:  # an address-space rlimit (no writable memory cgroup): the allocation fails
        assert allocation.exit_code == 1 and "MemoryError" in allocation.output, allocation
    assert "allocated 2" not in allocation.output
    # The reference's work was done before it, and the grader runs within 64 MiB too.
    assert limited.verdict.native_reward == 1.0 and limited.safe_success, limited.verdict.to_dict()
    record = limited.to_record().to_dict()
    assert record["enforced_limits"] == limits

    plain, _, _ = harness.play_fresh(_loaded("hr-no-limits"), CommandsAgent([ALLOCATE]), "alloc")
    assert "task_resources" not in plain.enforced_limits and plain.enforced_limits["memory"].endswith(f":{2 * GiB}")
    assert plain.commands[-1].exit_code == 0 and plain.commands[-1].output == f"allocated {200 * MiB}\n"


def test_the_verifier_sandbox_runs_within_the_tasks_memory(harness, tmp_path):
    allocate = ["python3", "-c", "x = b'1' * (200 * 1024 * 1024); print('allocated')"]
    for name, allowed in (("hr-memory-64", False), ("hr-no-limits", True)):
        sandbox = harness.new_sandbox(_loaded(name), f"verify-{name}")
        try:
            home = sandbox.snapshot(tmp_path / name)
        finally:
            sandbox.close()
        run = harness.backend.run_isolated(IsolatedRequest(home, allocate, [], b"k", timeout_s=60, settings=sandbox.settings))
        assert (run.returncode == 0 and "allocated" in run.log) == allowed, (name, run)
        shutil.rmtree(tmp_path / name)


def test_cpus_half_is_a_cpu_quota_and_storage_is_the_upper_layers_size(harness):
    busy = "python3 -c 'import os, time\nend = time.time() + 2\nwhile time.time() < end: pass\nt = os.times()\nprint(round(t.user + t.system, 2))'"
    outcome, _, _ = harness.play_fresh(_loaded("hr-half-cpu"), CommandsAgent([busy]), "busy")
    limits = outcome.enforced_limits
    assert limits["task_resources"] == "cpus=0.5 storage_mb=512"
    assert limits["storage"] == "upper layers on a tmpfs of 512 MiB (the task's storage_mb)"  # a built Harbor task: the whole machine
    assert outcome.safe_success, outcome.failure_text()
    require_service("no writable cpu cgroup: the quota is recorded as not enforced" if limits["cpu"] == "none" else None,
                    "a writable cpu cgroup")
    assert limits["cpu"] == "cgroup:0.5"
    # Two seconds of spinning on half a CPU: at most about one second of CPU time.
    assert float(outcome.commands[-1].output) < 1.4, outcome.commands[-1].output


def test_a_task_asking_more_than_the_machine_has_runs_with_the_machines_amount(harness, tmp_path):
    task_dir = shutil.copytree(DATA / "hr-half-cpu", tmp_path / "hr-huge")
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace("cpus = 0.5\nstorage_mb = 512", "cpus = 4096\nmemory_mb = 1073741824"))
    outcome, _, _ = harness.play_fresh(_loaded("hr-huge", task_dir), ReferenceAgent(), "reference")
    limits = outcome.enforced_limits
    memory = machine_memory_bytes()
    assert limits["capped"] == (
        f"cpus 4096 -> {os.cpu_count()} (the machine's CPUs); memory_mb 1073741824 -> {memory // MiB} (the machine's MemTotal)"
    )
    assert limits["memory"].endswith(f":{memory}") and limits["cpu"] in (f"cgroup:{float(os.cpu_count())}", "none")
    assert outcome.safe_success, outcome.failure_text()


@pytest.mark.parametrize("engine_mode", ["local", "remote"])
def test_docker_containers_get_the_tasks_limits(tmp_path, engine_mode):
    require_engine(engine_problem())
    backend = backend_factory(f"docker-{engine_mode}")(SandboxSettings(command_timeout_s=20))
    try:
        task = Task(id="limited", title="limited", instruction="nothing", root=tmp_path, resources=Resources(cpus=0.5, memory_mb=64, storage_mb=256))
        sandbox = backend.create("resources")
        try:
            sandbox.prepare(task)
            host = sandbox.container.attrs["HostConfig"]
            assert (host["Memory"], host["NanoCpus"]) == (64 * MiB, 500_000_000)
            limits = sandbox.enforced_limits
            assert (limits["memory"], limits["cpu"], limits["task_resources"]) == (f"cgroup:{64 * MiB}", "cgroup:0.5", "cpus=0.5 memory_mb=64 storage_mb=256")
            assert limits["storage"].startswith("not enforced (storage_mb=256 asked): ")
            assert sandbox.run(ALLOCATE).exit_code == 137
            home = sandbox.snapshot(tmp_path / "snap")
        finally:
            sandbox.close()
        # The verifier's container has the task's memory too (its own cgroup, read inside).
        def read(path: str):
            return backend.run_isolated(IsolatedRequest(home, ["cat", path], [], b"k", timeout_s=60, settings=sandbox.settings))

        run = read("/sys/fs/cgroup/memory/memory.limit_in_bytes")
        if run.returncode != 0:
            run = read("/sys/fs/cgroup/memory.max")  # cgroup v2
        assert run.log.strip() == str(64 * MiB), run
    finally:
        backend.close()
