"""Importers: Terminal-Bench, Harbor and DockerLess tasks loaded as the same :class:`Task`.

``load_any(path)`` reads a task directory of any supported format, a DockerLess ``.jsonl``
file, or a folder holding such things, and returns the Tasks (raising on the first
malformed one); ``scan(path)`` returns the tasks that loaded and a problem per broken
entry, so one broken task never hides the others.

What an importer learns beyond the native fields is typed on the Task (native tasks keep
the defaults; ``Task.extra`` stays empty):

=====================  ==================================================================
``source``             :class:`~pytest_termrl.tasks.model.TaskSource`: the format, the
                       task's own id, a DockerLess row's ``file:line``, the original
                       category, the import cache folder
``grader``             :class:`~pytest_termrl.tasks.model.GraderSpec`: ``kind`` is
                       ``"pytest"`` (the verifier's trusted pytest on ``tests_dir``) or
                       ``"script"`` (Harbor's tests/test.sh, run by
                       :mod:`pytest_termrl.verifier.script_grader`; reward from
                       /logs/verifier/reward.txt or reward.json), with the script, the
                       reward that passes (default 1.0), its env and time limit; ``note``
                       is set when the task's own grader needs the network but its tests
                       run offline with the trusted pytest ("offline-runnable via trusted
                       pytest"); ``blockers`` say why the grader cannot run offline here
``image``              :class:`~pytest_termrl.tasks.model.ImageSpec`: the prebuilt image
                       or the Dockerfile's build context for the docker backend, its
                       base images and ENV, and ``needs_docker``: why a bwrap sandbox
                       cannot stand in for it
``backend``            ``"bwrap"`` when bash, git and Python are all the task needs, else
                       ``"docker"`` (its image must be built or present); read from
                       ``image.needs_docker``
``setup_blockers``     why its setup cannot run offline
``dropped_steps``, ``agent_timeout_s``, ``allow_internet``, ``notes``
=====================  ==================================================================

The workdir. Terminal-Bench and Harbor tasks live in ``/app``: their instructions, references
and tests say ``/app/...``. An imported Task keeps ``workdir="/app"``; the sandbox must show
the agent's home (still ``HOME=/home/user``, the same folder) at the workdir as well, so
paths need no rewriting and the collateral oracle still watches one folder. The bwrap
backend binds the home at both paths (``pytest_termrl.sandbox.layout.workdir_alias``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...errors import TaskFormatError
from ...registry import Registry
from ..contracts import CONTRACTS_FILE
from ..model import Task
from ..native import load_native_task
from .dockerless import load_dockerless
from .harbor import is_harbor_dir, load_harbor_task
from .terminal_bench import is_terminal_bench_dir, load_terminal_bench_task


@dataclass(frozen=True)
class Importer:
    """One task format: how to tell that a path holds it, and how to load what it holds."""

    detect: Callable[[Path], bool]
    """Whether the path is in this format (tried in the table's order: the first yes wins)."""
    load_task: Callable[[Path], Task] | None = None
    """A task directory into its Task (raises TaskFormatError naming the file and field)."""
    load_file: Callable[[Path], tuple[list[Task], list[TaskFormatError]]] | None = None
    """A file of many tasks into those that loaded and an error for each broken row."""


def is_native_dir(path: Path) -> bool:
    """A task.toml that no other format claimed (one that is no readable file is named by the native loader)."""
    return os.path.lexists(path / "task.toml")


def is_dockerless_file(path: Path) -> bool:
    """A ``.jsonl`` file other than a suite's contracts file."""
    return path.is_file() and path.suffix == ".jsonl" and path.name != CONTRACTS_FILE


IMPORTERS: Registry[Importer] = Registry("task format", {
    "terminal_bench": Importer(is_terminal_bench_dir, load_task=load_terminal_bench_task),  # task.yaml
    "harbor": Importer(is_harbor_dir, load_task=load_harbor_task),  # task.toml in Harbor's shape
    "native": Importer(is_native_dir, load_task=load_native_task),  # any other task.toml
    "dockerless": Importer(is_dockerless_file, load_file=load_dockerless),  # a .jsonl file of rows
})
"""Every task format by name, in the order a path is tried against them."""

FORMATS = tuple(IMPORTERS)

__all__ = [
    "FORMATS",
    "IMPORTERS",
    "Importer",
    "detect_format",
    "expected_reference",
    "load_any",
    "load_dockerless",
    "load_harbor_task",
    "load_task_dir",
    "load_terminal_bench_task",
    "offline_status",
    "scan",
]


def detect_format(path: Path) -> str | None:
    """'terminal_bench', 'harbor', 'native' or 'dockerless' for one task path; None for anything else."""
    path = Path(path)
    if not (path.is_file() or path.is_dir()):
        return None
    return next((name for name, importer in IMPORTERS.items() if importer.detect(path)), None)


def _importer(path: Path) -> Importer | None:
    kind = detect_format(path)
    return IMPORTERS[kind] if kind is not None else None


def _load_file(path: Path) -> Callable[[Path], tuple[list[Task], list[TaskFormatError]]] | None:
    """The loader when ``path`` is a file of many tasks (a DockerLess .jsonl), else None."""
    importer = _importer(path)
    return importer.load_file if importer is not None else None


def load_task_dir(path: Path) -> Task:
    """One task directory of any format (raises TaskFormatError naming the file and field)."""
    importer = _importer(path)
    if importer is None or importer.load_task is None:
        raise TaskFormatError(path, None, "not a task: expected task.yaml (Terminal-Bench) or task.toml (Harbor, native)")
    return importer.load_task(Path(path))


def _entries(folder: Path) -> list[Path]:
    """The task directories and DockerLess files directly in a folder, sorted."""
    entries = []
    for child in sorted(folder.iterdir()):
        if child.name.startswith((".", "_")):
            continue
        if child.is_dir() or _load_file(child) is not None:
            entries.append(child)
    return entries


def _holds_tasks(folder: Path, depth: int = 3) -> bool:
    if depth == 0:
        return False
    for child in _entries(folder):
        if detect_format(child) is not None or (child.is_dir() and _holds_tasks(child, depth - 1)):
            return True
    return False


def _targets(path: Path) -> list[Path]:
    """Task directories and .jsonl files at or under path; a folder of folders is walked into."""
    if detect_format(path) is not None:
        return [path]
    targets = []
    for child in _entries(path):
        if detect_format(child) is None and child.is_dir() and _holds_tasks(child):
            targets += _targets(child)
        else:
            targets.append(child)
    return targets


def scan(path: Path) -> tuple[list[Task], dict[str, str]]:
    """Every task at or under ``path`` and each problem by entry name (one broken task hides no other).

    ``path`` is a task directory, a DockerLess .jsonl, or a folder of them (folders of
    folders are walked into); in a folder, a directory that is no task is a problem.
    """
    path = Path(path)
    tasks: list[Task] = []
    problems: dict[str, str] = {}
    if not path.exists() or (path.is_file() and detect_format(path) is None):
        problems[path.name or str(path)] = str(TaskFormatError(path, None, "not a task, a DockerLess .jsonl or a folder holding them"))
        return tasks, problems
    for target in _targets(path):
        load_file = _load_file(target)
        if load_file is not None:
            loaded, errors = load_file(target)
            tasks += loaded
            for error in errors:
                problems[target.name if error.path == str(target) else f"{target.name}:{error.path.rsplit(':', 1)[-1]}"] = str(error)
            continue
        try:
            tasks.append(load_task_dir(target))
        except TaskFormatError as exc:
            problems[target.name] = str(exc)
        except (OSError, ValueError) as exc:
            problems[target.name] = unexpected(target, exc)
    return tasks, problems


def unexpected(target: Path, exc: Exception) -> str:
    """The problem text for a failure no loader foresaw while reading one task: named, never fatal."""
    return f"{target}: cannot be loaded ({type(exc).__name__}: {exc})"


def load_any(path: Path) -> list[Task]:
    """The Tasks at ``path``; the first problem found is raised as TaskFormatError."""
    tasks, problems = scan(path)
    if problems:
        name, message = sorted(problems.items())[0]
        raise TaskFormatError(path, None, f"{name}: {message}")
    return tasks


def expected_reference(task: Task) -> str:
    """Where a task's format keeps its reference solution: the file (or row field) to add when it has none."""
    root = task.root
    return {
        "terminal_bench": f"{root / 'solution.sh'} (or solution.yaml)",
        "harbor": str(root / "solution" / "solve.sh"),
        "dockerless": f"{task.source.path}: field 'solution'",
    }.get(task.source.format, str(root / "solution.sh"))


def offline_status(task: Task) -> tuple[str, list[str]]:
    """('yes' | 'via trusted pytest' | 'no', reasons), from what the importer found.

    Dynamic checks (does the no-op fail, does the reference pass, can the image be built)
    belong to :mod:`pytest_termrl.validity.admission`.
    """
    reasons = list(task.grader.blockers) + list(task.setup_blockers)
    if task.solution_script is None:
        reasons.append("missing reference solution")
    if task.image is not None and task.backend == "docker":
        reasons += [f"needs its docker image: {why}" for why in task.image.needs_docker]
    if reasons:
        return "no", reasons
    if task.grader.note:
        return "via trusted pytest", [task.grader.note]
    return "yes", []
