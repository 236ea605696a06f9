"""What is particular to the bwrap sandbox: its uid and capabilities, the limits it records,
the limit wrapper, cgroup cleanup between runs, and the harness's files it keeps from the
agent. What every backend must hold is in tests/unit/sandbox/test_isolation.py."""

from __future__ import annotations

import itertools
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import CORE

from pytest_termrl.agents.builtin import ReferenceAgent
from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.bwrap import backend as bwrap_mod
from pytest_termrl.sandbox import limits as limits_mod
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend
from pytest_termrl.sandbox.limits import ResourceLimits
from pytest_termrl.tasks.suite import load_suite
from pytest_termrl.verifier.verify import run_hidden_tests

MiB = 1024**2


def test_runs_as_uid_1000_without_privileges(make_sandbox):
    sandbox = make_sandbox("uid")
    result = sandbox.run("id -u; id -g; id -un; echo $HOME; pwd; grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status")
    lines = result.output.splitlines()
    assert lines[:5] == ["1000", "1000", "user", "/home/user", "/home/user"]
    caps = {line.split(":")[0]: int(line.split()[1], 16) for line in lines[5:]}
    assert caps == {"CapPrm": 0, "CapEff": 0, "CapBnd": 0}
    assert sandbox.run("su -c true root </dev/null; sudo -n true").exit_code != 0


def test_enforced_limits_are_recorded(make_sandbox):
    sandbox = make_sandbox("limits", memory_bytes=256 * MiB, max_processes=64, file_size_bytes=4 * MiB)
    limits = sandbox.enforced_limits
    assert set(limits) >= {"memory", "processes", "file_size", "cpu"}
    assert limits["memory"].endswith(str(256 * MiB))
    assert limits["processes"].endswith("64")
    assert limits["file_size"] == f"rlimit_fsize:{4 * MiB}"


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
    clock = itertools.count(step=10.0)  # every reading is past any deadline of release()'s
    monkeypatch.setattr(limits_mod, "time", type("T", (), {"sleep": staticmethod(lambda s: None), "monotonic": staticmethod(lambda: next(clock))}))
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


def test_concurrent_cleanup_does_not_break_a_running_verifier(fake_cgroup_root, monkeypatch):
    # Another run starting up (a second xdist worker, a second pytest) cleans stale cgroups
    # of the same workroot while this run's verifier is starting: it must not remove them.
    from pytest_termrl.sandbox.conformance.test_verifier import play

    suite = load_suite(CORE / "contracts.jsonl")
    backend = BwrapBackend(SandboxSettings(command_timeout_s=20))
    original_setup = bwrap_mod.ResourceLimits.setup

    def setup_then_other_run_starts(self):
        original_setup(self)
        BwrapBackend(SandboxSettings(), backend.workroot).cleanup_stale()

    outcome, sandbox, loaded = play(backend, suite, ReferenceAgent(), keep_open=True)
    try:
        monkeypatch.setattr(bwrap_mod.ResourceLimits, "setup", setup_then_other_run_starts)
        verdict = run_hidden_tests(backend, sandbox, loaded.task, loaded.contract.tests, 20)
        assert verdict.error is None, verdict.error
        assert verdict.complete
    finally:
        sandbox.close()


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
