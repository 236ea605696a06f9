"""A whole-machine sandbox made and prepared ahead, for the next episode of the task played last.

A machine's own layer (the task's files, its decoys) is a lower of its overlays, so it must be
written before the shell starts, and its setup runs after: nothing generic can be started ahead,
as the native home's spare is. What repeats is the task: its families, prompts and attempts, a
training group's rollouts, a freeze's validation runs. So once a task's sandbox is made twice in
a row, the next one of the same task is made and prepared on the starter thread (which lives as
long as the backend: bwrap dies with the thread that started it) whenever one is taken, and the
next ``create`` for an equal task takes it as it is. A run of tasks that do not repeat pays
nothing for spares; one spare at a time, discarded (on the starter thread) when another task comes.
"""

from __future__ import annotations

import threading
from concurrent.futures import Executor, Future
from typing import Callable

from ...tasks.model import Task
from .machine import MachineSandbox
from .spares import started_spare

Make = Callable[[str, Task], MachineSandbox]
"""``(label, task) -> a new, unprepared whole-machine sandbox`` (the backend's)."""


class MachineSpares:
    def __init__(self, make: Make, starter: Executor, enabled: bool) -> None:
        self._make = make
        self._starter = starter
        self.enabled = enabled
        self._slot: list[tuple[Task, Future]] = []
        self._last: Task | None = None
        """The task of the last sandbox made: the same one again starts the spares."""
        self._lock = threading.Lock()

    def create(self, label: str, task: Task) -> MachineSandbox:
        """The spare made for ``task`` when there is one (already prepared: its ``prepare`` does nothing more), else a
        cold sandbox; the next spare for ``task`` starts now when its last sandbox was of ``task`` too."""
        with self._lock:
            held = self._slot.pop() if self._slot else None
            again, self._last = self._last == task, task
        sandbox = None
        if held is not None:
            spare_task, future = held
            if spare_task == task:
                sandbox = started_spare(future)
                if sandbox is not None and not sandbox.spare_alive():
                    sandbox.close()
                    sandbox = None
            else:
                self._starter.submit(_close_made, future)  # off the caller's path
        if sandbox is None:
            sandbox = self._make(label, task)  # in the caller's thread: a build of the task's image is done before the spare's
        if self.enabled and again:
            with self._lock:
                self._slot.append((task, self._starter.submit(self._ahead, task)))
        return sandbox

    def _ahead(self, task: Task) -> MachineSandbox:
        sandbox = self._make("spare", task)
        try:
            sandbox.prepare(task)
        except BaseException:
            sandbox.close()
            raise
        return sandbox

    def close(self) -> None:
        with self._lock:
            held = self._slot[:]
            self._slot.clear()
        for _, future in held:
            spare = started_spare(future)
            if spare is not None:
                spare.close()


def _close_made(future: Future) -> None:
    spare = started_spare(future)
    if spare is not None:
        spare.close()
