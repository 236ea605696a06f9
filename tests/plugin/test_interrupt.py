"""An interrupted run leaves nothing behind: Ctrl-C (SIGINT to the process group) and SIGTERM (to the controller alone).

Real pytest runs under ``-n 2`` are stopped while an episode's command runs, or while the
verifier runs a hidden test; afterwards no process of the episode, no sandbox folder, mount
or cgroup of any of the run's processes, and (docker) no container or volume of theirs is
left, and the run exits as interrupted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SMALL_TASKS, copy_core_suite, engine_problem, predictions_file, require_engine, write_tiny_task

from pytest_termrl.sandbox.conformance.host import host_pids_appearing, host_pids_with, unique_sleep
from pytest_termrl.sandbox.layout import default_workroot
from pytest_termrl.sandbox.proctree import descendants

TASK = SMALL_TASKS[0]
SLOW_TEST = """
import os
import subprocess

def test_waits():
    if os.path.exists("/home/user/slow"):  # the interrupted run's agent leaves it; the frozen reference doesn't
        subprocess.run(["sleep", "{marker}"])
    assert open("/home/user/out.txt").read() == "hello\\n"
"""


def _start(cwd: Path, args: list[str], log: Path) -> subprocess.Popen:
    def default_sigint() -> None:
        # A process started in the background may inherit SIGINT ignored; a terminal's doesn't.
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", f"--termrl-run-dir={cwd / 'run'}", *args],
            cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=default_sigint,
        )


def _run_pids(controller: int) -> list[int]:
    """The controller and its worker processes (those that make sandboxes, named by their pid)."""
    return [controller, *(pid for pid in descendants(controller) if _is_python(pid))]


def _is_python(pid: int) -> bool:
    try:
        return b"python" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return False


def _leftovers(pids: list[int]) -> list[str]:
    """Sandbox folders, cgroups and mounts named after any of ``pids`` that still exist."""
    found = []
    prefixes = [f"{kind}-{pid}-" for pid in pids for kind in ("sbx", "dkr")]
    for folder in (default_workroot(), *(Path("/sys/fs/cgroup") / c / "termrl" for c in ("memory", "pids", "cpu"))):
        if folder.is_dir():
            found += [str(p) for p in folder.iterdir() if p.name.startswith(tuple(prefixes))]
    mounts = Path("/proc/self/mountinfo").read_text()
    found += [f"mount: {line.split()[4]}" for line in mounts.splitlines() if any(p in line for p in prefixes)]
    return found


def _interrupt(process: subprocess.Popen, how: str) -> int:
    if how == "sigint":
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    else:
        process.send_signal(signal.SIGTERM)  # `kill PID`: the controller alone
    try:
        return process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        pytest.fail(f"the run did not end within 120 s of {how}")


def _check_clean(process: subprocess.Popen, rc: int, pids: list[int], marker: str, log: Path) -> None:
    output = log.read_text(errors="replace")
    assert rc == pytest.ExitCode.INTERRUPTED, output[-3000:]
    assert "KeyboardInterrupt" in output, output[-3000:]
    assert host_pids_with(f"sleep {marker}") == [], output[-3000:]
    assert [pid for pid in pids if os.path.exists(f"/proc/{pid}") and _is_python(pid)] == []
    assert _leftovers(pids) == []


@pytest.mark.parametrize("how", ["sigint", "sigterm"])
def test_interrupt_during_a_command_leaves_nothing(tmp_path, how):
    marker = unique_sleep()
    copy_core_suite(tmp_path / "suite", SMALL_TASKS[:2])
    predictions = predictions_file(tmp_path / "p.jsonl", {t: f"sleep {marker}" for t in SMALL_TASKS[:2]})
    log = tmp_path / "out.log"
    process = _start(tmp_path, ["suite", "--termrl-agent=script", f"--termrl-predictions={predictions}", "--termrl-command-timeout=600"], log)
    assert len(host_pids_appearing(f"sleep {marker}", count=2, timeout_s=180)) >= 2, log.read_text()
    pids = _run_pids(process.pid)
    _check_clean(process, _interrupt(process, how), pids, marker, log)


@pytest.mark.parametrize("how", ["sigint", "sigterm"])
def test_interrupt_during_grading_leaves_nothing(tmp_path, how):
    """The verifier's sandbox and its cgroups go too (they used to stay until a later run)."""
    marker = unique_sleep()
    suite = tmp_path / "suite"
    suite.mkdir()
    for name in ("slow_grader_a", "slow_grader_b"):
        root = write_tiny_task(suite, name)
        (root / "tests" / "test_outputs.py").write_text(SLOW_TEST.format(marker=marker))
    frozen = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "suite", "--termrl-freeze", "--termrl-test-timeout=5", f"--termrl-run-dir={tmp_path / 'frozen'}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert "2 of 2 task(s) frozen" in frozen.stdout, frozen.stdout[-3000:]
    log = tmp_path / "out.log"
    predictions = predictions_file(tmp_path / "p.jsonl", {t: "echo hello > out.txt; touch slow" for t in ("slow_grader_a", "slow_grader_b")})
    args = ["suite", "--termrl-agent=script", f"--termrl-predictions={predictions}", "--termrl-test-timeout=600"]
    process = _start(tmp_path, args, log)
    assert len(host_pids_appearing(f"sleep {marker}", count=2, timeout_s=180)) >= 2, log.read_text()
    pids = _run_pids(process.pid)
    _check_clean(process, _interrupt(process, how), pids, marker, log)


def _docker_backend_tests():
    """The docker backend's integration tests (tests/integration), for their label queries: another folder, so by path."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "integration" / "test_docker_backend.py"
    spec = importlib.util.spec_from_file_location("termrl_docker_backend_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sigterm_on_docker_removes_containers_and_volumes(tmp_path):
    require_engine(engine_problem())
    docker_tests = _docker_backend_tests()
    containers_labelled, volumes_labelled = docker_tests.containers_labelled, docker_tests.volumes_labelled
    marker = unique_sleep()
    copy_core_suite(tmp_path / "suite", SMALL_TASKS[:2])
    predictions = predictions_file(tmp_path / "p.jsonl", {t: f"sleep {marker}" for t in SMALL_TASKS[:2]})
    log = tmp_path / "out.log"
    process = _start(tmp_path, ["suite", "--termrl-sandbox=docker", "--termrl-agent=script", f"--termrl-predictions={predictions}", "--termrl-command-timeout=600"], log)
    assert len(host_pids_appearing(f"sleep {marker}", count=2, timeout_s=300)) >= 2, log.read_text()
    pids = _run_pids(process.pid)
    assert any(containers_labelled(**{"termrl.pid": str(pid)}) for pid in pids)
    _check_clean(process, _interrupt(process, "sigterm"), pids, marker, log)
    for pid in pids:
        assert containers_labelled(**{"termrl.pid": str(pid)}) == []
        assert volumes_labelled(**{"termrl.pid": str(pid)}) == []
