"""Grade the agent's work: the one table from grader kind to grader, and the entry point that picks.

Every grader runs on a snapshot of the home in a fresh sandbox and answers on the signed
channel (:mod:`.trusted`); what it runs there differs by kind. Adding a kind is one
module with a ``grade`` and a ``failed`` function and one line in :data:`GRADERS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..registry import Entry, Registry
from ..sandbox.base import Sandbox, SandboxBackend
from ..tasks.model import Task
from . import declared_artifacts, machine_artifacts
from .trusted import GradedHome, grade_snapshot, trusted_toolchain
from .verdict import TestOutcome, Verdict
from ..settings import TEST_TIMEOUT_S

__all__ = ["GRADERS", "Grader", "TestOutcome", "Verdict", "grader_of", "run_hidden_tests", "trusted_toolchain"]


@dataclass(frozen=True)
class Grader:
    """How one kind of grader grades, and the verdict it gives when that raised."""

    grade: Callable[[SandboxBackend, GradedHome, Path, Task, tuple[str, ...] | None, float], Verdict]
    """``grade(backend, home copy, snapshot folder, task, inventory, test_timeout_s)``."""
    failed: Callable[[str], Verdict]
    """The verdict when ``grade`` raised: a harness error, never the agent's failure."""


DEFAULT_GRADER = "pytest"
GRADERS: Registry[Grader] = Registry("grader kind", {
    "pytest": Entry("pytest_termrl.verifier.pytest_grader", ("grade", "failed")),  # the hidden test files, by the trusted pytest
    "script": Entry("pytest_termrl.verifier.script_grader", ("grade", "failed")),  # the task's own script (Harbor's tests/test.sh), by its reward
    "parsed": Entry("pytest_termrl.verifier.script_grader", ("grade_parsed", "failed_parsed")),  # its own script (run-tests.sh), by its parsed output
}, make=Grader)
"""Every grader kind by name: the module and its ``grade`` and ``failed`` functions, loaded when first used."""


def grader_of(task: Task) -> str:
    """The kind of grader a task asks for: 'pytest', 'script' or 'parsed' (``task.grader.kind``)."""
    return task.grader.kind


def run_hidden_tests(
    backend: SandboxBackend,
    sandbox: Sandbox,
    task: Task,
    inventory: tuple[str, ...] | None,
    test_timeout_s: float = TEST_TIMEOUT_S,
    scratch: Path | None = None,
    *,
    beside_agent: bool = False,
) -> Verdict:
    """Snapshot the home, grade the copy with the task's grader, and check it against the inventory.

    A kind with no line in :data:`GRADERS` is graded by its hidden test files (pytest).
    ``beside_agent``: the grader runs in the agent's network, so a server the agent left
    running in ``sandbox`` answers it (``Task.graded_beside_the_agent``, in an episode).
    """
    grader = GRADERS.get(grader_of(task), GRADERS[DEFAULT_GRADER])

    def grade(home: GradedHome, snap_dir: Path) -> Verdict:
        if home.root is not None:  # a whole-machine snapshot: the artifacts are read from the machine, the layers pruned
            files, left_out = machine_artifacts.collect(sandbox, task) if task.artifacts else ({}, [])
            if task.verifier_mode == "separate":
                machine_artifacts.keep_only_artifacts(home.root, task)
        else:
            files, left_out = declared_artifacts.collect(home.path, task) if task.artifacts else ({}, [])
            if task.verifier_mode == "separate":  # a verifier environment of its own gets the artifacts alone
                declared_artifacts.keep_only_artifacts(home.path, task)
        verdict = grader.grade(backend, home, snap_dir, task, inventory, test_timeout_s)
        verdict.artifacts.update(files)
        verdict.artifacts_left_out += left_out
        return verdict

    return grade_snapshot(backend, sandbox, scratch, grade, grader.failed, beside_agent=beside_agent, grader_user=task.verifier_user)
