"""bwrap's spares: the agent's sandbox and the verifier started ahead, handed out as if started cold.

Everything here is real: bubblewrap sandboxes, the real runner, the core suite's tasks. A
spare must give the same verdicts as a cold start, never hold anything of an episode before
it is handed out, and leave no process, folder or cgroup when dropped or when the backend
closes.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from conftest import CORE, SMALL_TASKS
from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent
from pytest_termrl.episode import EpisodeSettings, EpisodeSpec
from pytest_termrl.harness import Harness
from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.base import IsolatedRequest, TrustedMount
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend
from pytest_termrl.sandbox.bwrap.spares import Shape
from pytest_termrl.sandbox.proctree import descendants
from pytest_termrl.tasks.suite import load_suite


@pytest.fixture
def backend():
    made = BwrapBackend(SandboxSettings(command_timeout_s=20), Path(tempfile.mkdtemp(prefix="termrl-spares-")))
    yield made
    made.close()


@pytest.fixture(scope="module")
def suite():
    return load_suite(CORE / "contracts.jsonl")


def play(backend, suite, task_id, agent):
    loaded = suite.by_id(task_id)
    harness = Harness(backend, EpisodeSettings(command_timeout_s=20, test_timeout_s=20))
    sandbox = harness.new_sandbox(loaded, f"spares-{agent.name}")
    try:
        return harness.play(EpisodeSpec("core", task_id), loaded, sandbox, agent)
    finally:
        sandbox.close()


def own_folders(backend) -> list[str]:
    return sorted(p.name for p in backend.workroot.glob(f"sbx-{os.getpid()}-*"))


def own_cgroups(backend) -> list[str]:
    found = []
    for controller in ("memory", "pids", "cpu"):
        base = Path("/sys/fs/cgroup") / controller / "termrl"
        if base.is_dir():
            found += [p.name for p in base.iterdir() if p.name.startswith(f"sbx-{os.getpid()}-") and backend.workroot.joinpath(p.name).exists()]
    return found


def test_spares_give_the_verdicts_of_a_cold_start(backend, suite):
    """Reference passes and noop fails on each task, alternating, every verifier after the first a spare."""
    cold = BwrapBackend(SandboxSettings(command_timeout_s=20), backend.workroot)
    cold.keep_spares, cold.spare_verifier.enabled = False, False
    served = 0
    for task_id in SMALL_TASKS:
        for agent in (ReferenceAgent(), NoopAgent()):
            spare = backend.spare_verifier.ready
            warm = play(backend, suite, task_id, agent)
            served += spare is not None and spare.process.poll() is not None  # that spare was used (and is gone)
            baseline = play(cold, suite, task_id, agent)
            assert warm.safe_success == baseline.safe_success == (agent.name == "reference"), warm.failure_text()
            assert [(o.nodeid, o.outcome) for o in warm.verdict.outcomes] == [(o.nodeid, o.outcome) for o in baseline.verdict.outcomes]
            assert warm.verdict.error is None and warm.harness_error is None
    assert served == 2 * len(SMALL_TASKS) - 1
    cold.close()


def test_the_snapshot_is_back_in_place_after_a_run_with_what_the_run_left(backend, tmp_path):
    """Graders that look at the home copy after the run find it as a cold run leaves it."""
    home = tmp_path / "snap" / "home"
    home.mkdir(parents=True)
    (home / "data.txt").write_text("agent's\n")
    (home / "sub").mkdir()
    (home / "sub" / "x").write_text("1")
    os.chmod(home, 0o755)
    os.chown(home, 1000, 1000)
    # Like the runners, it reads its key before it looks at its home: a spare's home is filled before the key.
    argv = ["/bin/bash", "-c", 'cat <&"$TERMRL_SECRET_FD" >/dev/null; cat /home/user/data.txt > /home/user/seen.txt; '
            "ls /opt/probe > /home/user/staged.txt"]
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "hello").write_text("hi")
    mounts = [TrustedMount(probe, "/opt/probe", staged=True)]
    for _ in range(2):  # cold, then the spare the first run left
        for name in ("seen.txt", "staged.txt"):
            (home / name).unlink(missing_ok=True)
        run = backend.run_isolated(IsolatedRequest(home, argv, mounts, b"k" * 32, timeout_s=30, settings=backend.settings))
        assert run.returncode == 0, run.log
        assert sorted(p.name for p in home.iterdir()) == ["data.txt", "seen.txt", "staged.txt", "sub"]
        assert (home / "seen.txt").read_text() == "agent's\n"
        assert (home / "staged.txt").read_text() == "hello\n"
        assert (home / "sub" / "x").read_text() == "1"


def test_a_cold_run_starts_its_program_only_once_the_home_is_filled(backend, tmp_path):
    """A program that never reads its key (plain ``cat``) still finds the snapshot on a cold run."""
    home = tmp_path / "snap" / "home"
    home.mkdir(parents=True)
    (home / "f.txt").write_text("kept\n")
    os.chmod(home, 0o755)
    pending = backend.spare_verifier.take(Shape.of(["cat", "/home/user/f.txt"], [], "/home/user", backend.settings))
    try:
        assert pending.process is None  # nothing runs before its home is there
    finally:
        pending.remove()
    for attempt in range(5):  # a fresh shape each time: every one a cold run
        argv = ["cat", f"/home/user/./{'./' * attempt}f.txt"]
        run = backend.run_isolated(IsolatedRequest(home, argv, [], b"k", timeout_s=60, settings=backend.settings))
        assert (run.returncode, run.log) == (0, "kept\n")
        assert (home / "f.txt").read_text() == "kept\n"


def test_a_spare_of_another_shape_is_dropped_and_leaves_nothing(backend, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    os.chmod(home, 0o755)
    first = ["/bin/sh", "-c", "true"]
    backend.run_isolated(IsolatedRequest(home, first, [], b"k" * 32, timeout_s=30, settings=backend.settings))
    spare = backend.spare_verifier.ready
    assert spare is not None and spare.shape == Shape.of(first, [], "/home/user", backend.settings)
    pid, folder = spare.process.pid, spare.folder
    assert folder.is_dir() and pid in descendants(os.getpid())
    other = ["/bin/sh", "-c", "echo other"]
    backend.run_isolated(IsolatedRequest(home, other, [], b"k" * 32, timeout_s=30, settings=backend.settings))
    assert not folder.exists()
    assert pid not in descendants(os.getpid())
    assert backend.spare_verifier.ready.shape.argv == ("/bin/sh", "-c", "echo other")


def test_a_dead_spare_is_not_used(backend, suite):
    assert play(backend, suite, SMALL_TASKS[0], ReferenceAgent()).safe_success
    spare = backend.spare_verifier.ready
    assert spare is not None
    spare.process.kill()
    spare.process.wait()
    assert play(backend, suite, SMALL_TASKS[0], ReferenceAgent()).safe_success
    shell_spare = backend.spare_sandbox
    shell_spare._process.kill()
    shell_spare._process.wait()
    outcome = play(backend, suite, SMALL_TASKS[1], ReferenceAgent())
    assert outcome.safe_success, outcome.failure_text()


def test_a_spare_shell_is_handed_out_started_and_holds_nothing_of_another(backend):
    first = backend.create("first")
    spare = backend.spare_sandbox
    assert spare._shell.running and spare.home.is_dir() and list(spare.home.iterdir()) == []
    first.run("echo secret > /home/user/mine.txt; export MINE=1")
    first.close()
    second = backend.create("second")
    assert second is spare
    result = second.run("pwd; ls -A /home/user; echo ${MINE:-unset}; id -u")
    assert result.output.split() == ["/home/user", "unset", "1000"], result.output
    second.close()


def test_a_task_with_its_own_workdir_or_limits_gets_a_fresh_shell(backend, tmp_path):
    from dataclasses import replace

    from conftest import write_tiny_task
    from pytest_termrl.tasks.model import Resources
    from pytest_termrl.tasks.native import load_native_task
    from pytest_termrl.tasks.suite import LoadedTask

    task = load_native_task(write_tiny_task(tmp_path / "suite", "own_limits"))
    task = replace(task, workdir="/app", resources=Resources(memory_mb=64))
    backend.create("warm-up").close()
    spare = backend.spare_sandbox
    sandbox = Harness(backend, EpisodeSettings()).new_sandbox(LoadedTask(task, None), "own")
    try:
        assert sandbox is spare  # the spare's folder, with a shell started anew for the task
        result = sandbox.run("pwd; cat README")
        assert result.output == "/app\ntask own_limits\n", result.output
        assert sandbox.enforced_limits["task_resources"] == "memory_mb=64"
        allocation = sandbox.run("python3 -c 'b = bytearray(200 * 1024 * 1024); print(len(b))'")
        assert allocation.exit_code != 0, allocation.output
    finally:
        sandbox.close()


def test_closing_the_backend_removes_its_spares(tmp_path):
    made = BwrapBackend(SandboxSettings(), tmp_path / "root")
    made.create("one").close()
    home = tmp_path / "home"
    home.mkdir()
    os.chmod(home, 0o755)
    made.run_isolated(IsolatedRequest(home, ["/bin/sh", "-c", "true"], [], b"k" * 32, timeout_s=30, settings=made.settings))
    pids = [made.spare_sandbox._process.pid, made.spare_verifier.ready.process.pid]
    assert all(pid in descendants(os.getpid()) for pid in pids)
    assert len(own_folders(made)) == 2 and own_cgroups(made)
    made.close()
    assert not any(pid in descendants(os.getpid()) for pid in pids)
    assert own_folders(made) == [] and own_cgroups(made) == []


def test_spares_outlive_the_threads_that_used_them(backend, suite):
    """Training plays each rollout on a thread of its own that then ends: bwrap dies with the
    thread that started it, so spares start on the backend's own thread and stay usable."""
    import threading

    failures: list[str] = []

    def play_one(task_id: str) -> None:
        outcome = play(backend, suite, task_id, ReferenceAgent())
        if not outcome.safe_success:
            failures.append(f"{task_id}: {outcome.harness_error or outcome.failure_text()}")

    for _ in range(3):
        threads = [threading.Thread(target=play_one, args=(task_id,)) for task_id in SMALL_TASKS * 2]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []
