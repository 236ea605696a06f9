"""Whole-machine spares on bwrap: a task made twice in a row gets its next sandbox made and prepared ahead; a spare
is fresh (nothing of an earlier episode), only ever handed to an equal task, never handed out dead, and closed with
the backend."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_termrl.sandbox.bwrap.backend import BwrapBackend
from pytest_termrl.sandbox.bwrap.spares import started_spare
from pytest_termrl.settings import SandboxSettings
from pytest_termrl.tasks.model import Task


@pytest.fixture
def backend():
    made = BwrapBackend(SandboxSettings())
    yield made
    made.close()


def _task(name: str) -> Task:
    return Task(id=name, title=name, instruction="-", root=Path("/tmp"), user="root", workdir="/root")


def _episode(backend, task, command="true"):
    sandbox = backend.create(f"ep-{task.id}", task)
    sandbox.prepare(task)
    result = sandbox.run(command)
    assert result.exit_code == 0, result.output
    return sandbox


def _spare(backend):
    slot = backend.machine_spares._slot
    return (slot[0][0], started_spare(slot[0][1])) if slot else (None, None)


def test_a_task_made_twice_in_a_row_gets_its_next_sandbox_prepared_ahead(backend):
    task = _task("again")
    _episode(backend, task).close()
    assert _spare(backend) == (None, None), "one sandbox of a task starts no spare"
    _episode(backend, task, "echo second > /etc/second-episode").close()
    spare_task, spare = _spare(backend)
    assert spare_task == task and spare is not None and spare.spare_alive()
    third = backend.create("ep-third", task)
    assert third is spare, "the next sandbox of the task is the one made ahead"
    third.prepare(task)  # prepared already: nothing more is done
    assert third.run("test -e /etc/second-episode || echo fresh; id -u").output.split() == ["fresh", "0"]
    assert third.decoys and third.run(f"ls -d {' '.join(third.decoys)} >/dev/null && echo planted").output.strip() == "planted"
    third.close()


def test_a_spare_is_handed_to_an_equal_task_only_and_the_other_is_closed(backend):
    task, other = _task("first"), _task("second")
    _episode(backend, task).close()
    _episode(backend, task).close()
    _, spare = _spare(backend)
    folder = spare._folder
    sandbox = backend.create("ep-other", other)
    assert sandbox is not spare
    with pytest.raises(Exception, match="prepared for task first"):
        spare.prepare(other)
    sandbox.prepare(other)
    sandbox.close()
    backend._starter.submit(lambda: None).result()  # the discarded spare is closed on the starter thread
    assert not folder.exists()


def test_tasks_that_do_not_repeat_start_no_spare(backend):
    for name in ("a", "b", "c"):
        _episode(backend, _task(name)).close()
    assert backend.machine_spares._slot == []


def test_a_spare_killed_from_outside_is_not_handed_out(backend):
    task = _task("killed")
    _episode(backend, task).close()
    _episode(backend, task).close()
    _, spare = _spare(backend)
    spare._process.kill()
    spare._process.wait()
    sandbox = backend.create("ep-after-kill", task)
    assert sandbox is not spare
    sandbox.prepare(task)
    assert sandbox.run("echo alive").output.strip() == "alive"
    sandbox.close()


def test_closing_the_backend_closes_its_spare():
    backend = BwrapBackend(SandboxSettings())
    task = _task("closed")
    _episode(backend, task).close()
    _episode(backend, task).close()
    _, spare = _spare(backend)
    pid, folder = spare._process.pid, spare._folder
    backend.close()
    assert not folder.exists()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
