"""The session other harnesses drive: a task's whole-machine sandbox, judged exec by exec, graded by the task's grader."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from pytest_termrl.errors import TaskFormatError
from pytest_termrl.integrations.session import MachineSession, load_source
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend
from pytest_termrl.settings import SandboxSettings

ROOT = Path(__file__).resolve().parents[3]
CORE = ROOT / "task_suites" / "core"
GREETING = ROOT / "tests" / "data" / "regrade" / "tasks" / "greeting"


@pytest.fixture(scope="module")
def backend():
    made = BwrapBackend(SandboxSettings(), Path(tempfile.mkdtemp(prefix="termrl-session-")))
    yield made
    made.close()
    assert not list(made.workroot.glob("sbx-*-session-*")), "every session's folder is removed"
    shutil.rmtree(made.workroot, ignore_errors=True)


def test_a_frozen_tasks_reference_is_safe_and_correct_and_an_accident_is_named(backend):
    with MachineSession.open(CORE / "checksum_verify", backend=backend) as session:
        assert session.policy_source == "contract"
        session.exec("touch ~/before-the-agent")  # set-up, not judged
        session.start_watch()
        done = session.agent_exec(session.task.solution_text())
        assert done.returncode == 0, done.stderr
        assert session.findings() == []
        assert session.grade().correct
        session.agent_exec("rm -rf ~/downloads/notes.txt")
        found = session.finish()
        assert [(f.path, f.kind, f.command, f.index) for f in found] == [
            ("/home/user/downloads/notes.txt", "deleted", "rm -rf ~/downloads/notes.txt", 1)]
        assert session.report()["safe"] is False and session.report()["findings"][0]["path"] == "/home/user/downloads/notes.txt"
        session.agent_exec("rm -rf ~/downloads")  # after finish: not the agent's any more
        assert len(session.findings()) == 1


def test_a_change_that_came_another_way_is_judged_at_the_next_check(backend):
    with MachineSession.open(CORE / "checksum_verify", backend=backend) as session:
        session.start_watch()
        session.exec("echo x >> /etc/hostname", user="root")
        found = session.check("typed into the terminal")
        assert [(f.path, f.command) for f in found] == [("/etc/hostname", "typed into the terminal")]
        assert session.check("a second look") == []  # latched once


def test_a_harbor_task_without_a_contract_is_judged_by_the_inferred_policy(backend):
    with MachineSession.open(GREETING, backend=backend) as session:
        assert session.policy_source == "inferred"
        assert session.exec("id -un").stdout.decode().strip() == "root"
        session.start_watch()
        session.agent_exec("echo 'Hello, world!' > /app/greeting.txt")
        session.agent_exec("rm /srv/data/table.csv")
        assert [f.path for f in session.finish()] == ["/srv/data/table.csv"]


def test_a_bare_dockerfile_is_built_and_nothing_is_permitted(backend, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM debian:bookworm\nRUN mkdir -p /data && echo kept > /data/keep.txt\nWORKDIR /data\n")
    with MachineSession.open(tmp_path / "Dockerfile", backend=backend) as session:
        assert session.policy_source == "none" and session.task.workdir == "/data"
        assert session.read_file("/data/keep.txt") == b"kept\n"
        session.start_watch()
        session.agent_exec(["sh", "-c", "echo new > new.txt && echo changed > keep.txt"])
        assert [(f.path, f.kind) for f in session.finish()] == [("/data/keep.txt", "content_changed")]


def test_files_are_read_and_written_as_the_machine_answers(backend):
    with MachineSession.open(CORE / "checksum_verify", backend=backend) as session:
        session.write_file("/tmp/deep/folder/blob.bin", bytes(range(256)))
        assert session.read_file("/tmp/deep/folder/blob.bin") == bytes(range(256))
        with pytest.raises(FileNotFoundError):
            session.read_file("/tmp/none")
        with pytest.raises(IsADirectoryError):
            session.read_file("/tmp")
        with pytest.raises(PermissionError):
            session.write_file("/etc/forbidden", b"x", user="user")


def test_a_source_that_is_no_task_is_named(tmp_path):
    with pytest.raises(TaskFormatError, match="expected a task folder or a Dockerfile"):
        load_source(tmp_path / "missing")
    (tmp_path / "Dockerfile").write_text("FROM\n")
    with pytest.raises(TaskFormatError, match="Dockerfile"):
        load_source(tmp_path / "Dockerfile")


def test_a_session_opened_and_used_from_threads_that_end_lives_on(backend):
    import threading

    made: list[MachineSession] = []
    opener = threading.Thread(target=lambda: made.append(MachineSession.open(CORE / "checksum_verify", backend=backend)))
    opener.start()
    opener.join()
    session = made[0]
    try:
        session.exec("sleep 0.2; exit 0")
        worker = threading.Thread(target=lambda: session.sandbox.stop_processes())
        worker.start()
        worker.join()  # the shell is gone: the next exec starts it again, on a thread that outlives this one
        restarter = threading.Thread(target=lambda: session.exec("true"))
        restarter.start()
        restarter.join()
        import time

        time.sleep(0.5)  # a bwrap started by an ended thread would be dead by now
        assert session.exec("echo alive").stdout == b"alive\n"
        with pytest.raises(OSError, match="larger than 10 bytes"):
            session.read_file("/etc/os-release", limit_bytes=10)
    finally:
        session.close()


def test_a_task_whose_image_cannot_be_stood_in_for_is_refused_naming_why(backend, tmp_path):
    from pytest_termrl.errors import SandboxError

    task = tmp_path / "alpine-task"
    shutil.copytree(GREETING, task)
    (task / "environment" / "Dockerfile").write_text("FROM alpine:3.19\nRUN echo hi > /hi\n")
    with pytest.raises(SandboxError, match=r"alpine_task cannot run .*FROM alpine:3\.19 \(a base image the host cannot stand in for\)"):
        MachineSession.open(task, backend=backend)
