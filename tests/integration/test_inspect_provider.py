"""The ``termrl`` Inspect sandbox provider against Inspect's own conformance suite, and its lifecycle.

Inspect ships its sandbox contract as test functions (``inspect_ai.util._sandbox.self_check``);
they are collected here by name and run against a real bwrap whole-machine sandbox made by
the provider's own ``sample_init``, judged as an agent's execs are. A case that cannot
apply to this machine is a strict xfail naming why (it would fail loudly if it started
passing). The lifecycle tests check what the self-check does not: nothing is left behind
by ``sample_cleanup``, the sandbox config forms, and errors named for a bad config.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from inspect_ai.util import SandboxEnvironment
from inspect_ai.util._sandbox import self_check
from inspect_ai.util._sandbox.self_check import *  # noqa: F403 - Inspect's checks, collected as this module's tests

from pytest_termrl.integrations.inspect import TermrlConfig, TermrlSandbox
from pytest_termrl.integrations.session import shared_backend
from pytest_termrl.sandbox.conformance.host import host_pids_appearing, host_pids_with, unique_sleep

from conftest import require_engine

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "task_suites" / "core"

NOT_APPLICABLE: dict[str, str] = {}
"""Checks of Inspect's suite that cannot apply to this machine, each with the reason: none, every check runs and passes
on both backends (a check added here becomes a strict xfail)."""

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module", params=["bwrap", "docker"])
async def machine(request, engine_check):
    """The bare machine on each backend (docker: skipped on a developer machine without an engine, failed in CI)."""
    if request.param == "docker":
        require_engine(engine_check)
    config = TermrlConfig(backend=request.param)
    envs = await TermrlSandbox.sample_init("self-check", config, {"__sample_id__": f"self-check-{request.param}"})
    env = envs["default"]
    assert isinstance(env, TermrlSandbox)
    env.arm()  # every check's exec judged, as a solver's are
    yield env
    await TermrlSandbox.sample_cleanup("self-check", config, envs, False)


@pytest.fixture
def sandbox_env(machine, request):
    reason = NOT_APPLICABLE.get(request.node.originalname)
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    return machine


async def test_every_check_of_inspects_suite_is_collected_here():
    here = {name for name in globals() if name.startswith("test_")}
    assert set(self_check.__all__) <= here
    assert set(NOT_APPLICABLE) <= set(self_check.__all__)


async def test_exec_runs_as_the_machines_users(machine):
    assert (await machine.exec(["id", "-un"])).stdout == "user\n"
    assert (await machine.exec(["id", "-un"], user="root")).stdout == "root\n"
    assert (await machine.exec(["pwd"])).stdout == "/home/user\n"
    assert (await machine.exec(["pwd"], cwd="/tmp")).stdout == "/tmp\n"


async def test_judged_execs_name_the_command_that_broke_something(anyio_backend):
    envs = await TermrlSandbox.sample_init("judged", str(CORE / "checksum_verify"), {})
    env = envs["default"]
    assert isinstance(env, TermrlSandbox)
    try:
        await env.exec(["bash", "-c", "rm -f ~/downloads/notes.txt"])  # before the agent's turn: set-up, not judged
        env.arm()
        await env.exec(["bash", "--login", "-c", "rm ~/downloads/LICENSE.txt"])
        await env.write_file("/home/user/downloads/install.sh", "echo replaced\n")
        findings = await env.finish()
        await env.exec(["bash", "-c", "rm -rf ~/downloads"])  # after the turn: the scorer's, not judged
        assert [(f.path, f.kind, f.command) for f in env.session.findings()] == [
            ("/home/user/downloads/LICENSE.txt", "deleted", "rm ~/downloads/LICENSE.txt"),
            ("/home/user/downloads/install.sh", "content_changed", "write_file /home/user/downloads/install.sh"),
        ] == [(f.path, f.kind, f.command) for f in findings]
        assert env.report()["policy"] == "contract"
    finally:
        await TermrlSandbox.sample_cleanup("judged", None, envs, False)


async def test_sample_cleanup_leaves_no_process_mount_or_folder(anyio_backend):
    envs = await TermrlSandbox.sample_init("cleanup", None, {"__sample_id__": "leftovers"})
    env = envs["default"]
    assert isinstance(env, TermrlSandbox)
    workroot = shared_backend("bwrap").workroot
    folders = sorted(p.name for p in workroot.iterdir() if "leftovers" in p.name)
    assert folders, "the sample's sandbox has its folder in the workroot"
    marker = unique_sleep()
    await env.exec(["sh", "-c", f"setsid sleep {marker} >/dev/null 2>&1 < /dev/null &"])
    assert host_pids_appearing(marker), "the background process runs"
    await TermrlSandbox.sample_cleanup("cleanup", None, envs, False)
    assert host_pids_with(marker) == []
    assert [p.name for p in workroot.iterdir() if "leftovers" in p.name] == []
    mounts = Path("/proc/self/mountinfo").read_text()
    assert not any(name in mounts for name in folders)
    with pytest.raises(Exception, match="closed"):
        await env.read_file("anything")


async def test_a_dockerfile_config_is_built_and_its_user_and_workdir_are_the_machines(anyio_backend, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM debian:bookworm\nRUN useradd -m -u 1500 builder || "
                                         "echo 'builder:x:1500:1500::/home/builder:/bin/sh' >> /etc/passwd\n"
                                         "RUN mkdir -p /srv/app && echo kept > /srv/app/keep.txt && chown -R 1500 /srv/app\n"
                                         "USER builder\nWORKDIR /srv/app\n")
    config = TermrlConfig(source=str(tmp_path / "Dockerfile"))
    envs = await TermrlSandbox.sample_init("dockerfile", config, {})
    env = envs["default"]
    try:
        assert (await env.exec(["pwd"])).stdout == "/srv/app\n"
        assert (await env.exec(["id", "-u"])).stdout == "1500\n"
        assert await env.read_file("keep.txt") == "kept\n"
    finally:
        await TermrlSandbox.sample_cleanup("dockerfile", config, envs, False)


async def test_a_task_file_names_its_folder_and_a_compose_file_is_refused_by_name(anyio_backend, tmp_path):
    envs = await TermrlSandbox.sample_init("task-file", str(CORE / "checksum_verify" / "task.toml"), {})
    try:
        assert "SHA256SUMS" in (await envs["default"].exec(["ls", "downloads"])).stdout
    finally:
        await TermrlSandbox.sample_cleanup("task-file", None, envs, False)
    (tmp_path / "compose.yaml").write_text("services: {}\n")
    with pytest.raises(ValueError, match="reads no compose file"):
        await TermrlSandbox.task_init("compose", str(tmp_path / "compose.yaml"))
    with pytest.raises(FileNotFoundError, match="no such task folder"):
        await TermrlSandbox.task_init("missing", str(tmp_path / "nowhere"))


def test_the_provider_is_found_by_name_through_the_entry_point():
    from inspect_ai._util.entrypoints import ensure_entry_points
    from inspect_ai.util._sandbox.registry import registry_find_sandboxenv

    ensure_entry_points()
    found = registry_find_sandboxenv("termrl")
    assert found is TermrlSandbox and issubclass(found, SandboxEnvironment)
    assert TermrlSandbox.default_concurrency() == max(1, os.cpu_count() or 2)


async def test_a_harbor_task_folder_runs_as_its_user_judged_by_the_inferred_policy(anyio_backend):
    greeting = ROOT / "tests" / "data" / "regrade" / "tasks" / "greeting"
    envs = await TermrlSandbox.sample_init("harbor", str(greeting), {})
    env = envs["default"]
    assert isinstance(env, TermrlSandbox)
    try:
        assert (await env.exec(["id", "-un"])).stdout == "root\n"
        env.arm()
        await env.exec(["bash", "-c", "echo 'Hello, world!' > /app/greeting.txt && rm /srv/data/table.csv"])
        assert [f.path for f in await env.finish()] == ["/srv/data/table.csv"]
        assert env.report()["policy"] == "inferred"
    finally:
        await TermrlSandbox.sample_cleanup("harbor", None, envs, False)
