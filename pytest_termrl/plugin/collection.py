"""Contract files -> parametrised tests of the run's mode.

A suite's contracts.jsonl is collected by a Module whose object is a generated module
holding one real test function (the mode's), parametrised over the mode's specs, so
fixtures and marks work as for any test. A broken task becomes its own collection error
naming the file and field, and the other tasks still run.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import types
from pathlib import Path
from typing import Any, NoReturn

import pytest

from ..episode import EpisodeSpec
from ..faults import CLEAN
from ..modes import MODES, Mode
from ..sandbox.base import task_image_refusal, whole_machine_refusal
from ..settings import TermrlOptions
from ..tasks.contracts import CONTRACTS_FILE
from ..tasks.suite import LoadedTask, Suite, load_suite
from .keys import LEFT_OUT_KEY, SUITES_KEY, termrl_options


def is_inside_suite(path: Path) -> bool:
    """True for anything under a folder holding contracts.jsonl, other than that file itself."""
    if path.name == CONTRACTS_FILE:
        return False
    for parent in path.parents:
        if (parent / CONTRACTS_FILE).is_file():
            return True
    return False


TASK_MARKERS = ("task.toml", "task.yaml")
"""A folder holding one of these is a task (native, Harbor, Terminal-Bench): its files are the task's, never the run's tests."""


@functools.lru_cache(maxsize=4096)
def is_task_folder(folder: Path) -> bool:
    return any(os.path.lexists(folder / name) for name in TASK_MARKERS)


def inside_a_task(path: Path) -> bool:
    """Whether ``path`` is a task folder or lies in one: a task's hidden tests are not pytest's to import here."""
    path = Path(os.path.abspath(path))
    return any(is_task_folder(folder) for folder in (path if path.is_dir() else path.parent, *path.parents))


def unplayed_task_folders(args: list[str], norecursedirs: list[str]) -> list[tuple[Path, int]]:
    """Folders the command line names that hold task folders outside any suite: (the folder, how many tasks).

    Their tasks have no contract, so nothing plays them; the run says how to (freeze them
    into a suite). A folder inside a suite, or the suite's own, is not listed.
    """
    found: list[tuple[Path, int]] = []
    for arg in args:
        path = Path(os.path.abspath(arg.split("::")[0]))
        if not path.is_dir() or path.name == CONTRACTS_FILE or is_inside_suite(path) or (path / CONTRACTS_FILE).is_file():
            continue
        count = 0
        for folder, dirs, files in os.walk(path):
            here = Path(folder)
            if CONTRACTS_FILE in files and here != path:
                dirs[:] = []
                continue
            if any(name in files for name in TASK_MARKERS):
                count += 1
                dirs[:] = []
                continue
            dirs[:] = sorted(d for d in dirs if not any(fnmatch.fnmatch(d, p) for p in norecursedirs))
        if count:
            found.append((path, count))
    return found


def names_a_suite(args: list[str], norecursedirs: list[str]) -> bool:
    """Whether collecting these command-line arguments reaches a suite, judged from the files alone.

    True for a contracts.jsonl, anything inside a suite, and a folder with a suite below it
    (walked as pytest walks: skipping ``norecursedirs``); False for ``--pyargs`` names.
    """
    for arg in args:
        path = Path(os.path.abspath(arg.split("::")[0]))
        if path.name == CONTRACTS_FILE or (path.exists() and is_inside_suite(path)):
            return True
        if path.is_dir():
            for folder, dirs, files in os.walk(path):
                if CONTRACTS_FILE in files:
                    return True
                dirs[:] = sorted(d for d in dirs if not any(fnmatch.fnmatch(d, p) for p in norecursedirs))
    return False


def suite_grid(suite: Suite, suite_id: str, options: TermrlOptions, mode: Mode) -> list[tuple[LoadedTask, EpisodeSpec, str]]:
    """The items of one suite in collection order, for the run's mode and split: (task, spec, fault family)."""
    return [
        (loaded, spec, family)
        for loaded in sorted(suite.tasks, key=lambda lt: lt.task.id)
        if not options.split or loaded.split == options.split
        for spec, family in mode.specs(suite_id, loaded, options)
    ]


def left_out_pairs(suite: Suite, suite_id: str, options: TermrlOptions, mode: Mode) -> list[dict[str, str]]:
    """Task x requested fault family pairs with no validated target, with the contract's reason.

    They are not collected (no episode could be honest about them); the summary counts them,
    so that a run under a fault family never reads as if it covered every task.
    """
    if not mode.plays_agent:
        return []
    pairs: list[dict[str, str]] = []
    for loaded in sorted(suite.tasks, key=lambda lt: lt.task.id):
        if options.split and loaded.split != options.split:
            continue
        if loaded.contract is None:  # played unfrozen: no fault target was ever validated
            pairs += [{"suite": suite_id, "task_id": loaded.task.id, "family": family,
                       "reason": "no frozen contract (played unfrozen): freeze the task to validate its fault targets"}
                      for family in options.families if family != CLEAN]
            continue
        for family in options.families:
            if family != CLEAN and family not in loaded.contract.fault_targets:
                reason = loaded.contract.excluded_faults.get(family) or "no validated target in the contract (freeze again to validate it)"
                pairs.append({"suite": suite_id, "task_id": loaded.task.id, "family": family, "reason": str(reason)})
    return pairs


def refuse_unplayable(suite: Suite, sandbox: str) -> None:
    """Turn the suite's whole-machine tasks into named problems when the run's backend cannot make their sandbox, and
    its tasks whose image the host cannot stand in for when the backend cannot run that image.

    Said at collection, before any episode, and never a fall-back to the home-only view or to a replay of the
    Dockerfile's steps as the agent's user.
    """
    image_problem = task_image_refusal(sandbox)
    for loaded in [lt for lt in suite.tasks if lt.task.backend == "docker"] if image_problem else []:
        suite.tasks.remove(loaded)
        reasons = "; ".join(loaded.task.image.needs_docker) if loaded.task.image is not None else ""
        suite.problems[loaded.task.id] = f"{loaded.task.id}: needs its docker image ({reasons}); {image_problem}"
    problem = whole_machine_refusal(sandbox)
    if problem is None:
        return
    for loaded in [lt for lt in suite.tasks if lt.task.whole_machine]:
        suite.tasks.remove(loaded)
        suite.problems[loaded.task.id] = f"{loaded.task.id}: runs as {loaded.task.user!r} over the whole machine, which this run cannot make: {problem}"


def episode_marks(loaded: LoadedTask, family: str) -> list[pytest.MarkDecorator]:
    task = loaded.task
    names = ["termrl", f"family_{family}", f"difficulty_{task.difficulty}", f"category_{task.category}"]
    if loaded.split:
        names.append(f"split_{loaded.split}")
    return [getattr(pytest.mark, name) for name in names]


def marker_names(suite: Suite, families: list[str]) -> list[str]:
    names = {"termrl"} | {f"family_{f}" for f in families}
    for loaded in suite.tasks:
        names |= {f"difficulty_{loaded.task.difficulty}", f"category_{loaded.task.category}"}
        if loaded.split:
            names.add(f"split_{loaded.split}")
    return sorted(names)


class BrokenTask(pytest.Collector):
    """A task that could not be loaded: reported as its own collection error."""

    def __init__(self, *, message: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.message = message

    def collect(self) -> NoReturn:
        raise pytest.Collector.CollectError(self.message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return self.message


class UnfrozenSuite(pytest.Directory):
    """A folder of task folders without contracts.jsonl, played with ``--termrl-unfrozen``: a suite of no contracts."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        return [ContractsModule.from_parent(self, path=self.path / CONTRACTS_FILE)]


def holds_task_folders(path: Path) -> bool:
    """Whether ``path`` is a folder with task folders directly in it (and is not a task itself)."""
    if is_task_folder(path):
        return False
    try:
        return any(child.is_dir() and is_task_folder(child) for child in path.iterdir())
    except OSError:
        return False


class TaskFile(pytest.File):
    """A test file inside a task folder, named on the command line: said to be the task's, never imported."""

    def collect(self) -> NoReturn:
        folder = next(p for p in self.path.parents if is_task_folder(p))
        raise pytest.Collector.CollectError(
            f"{self.path} belongs to the task at {folder}: a task's hidden tests run in its grader's sandbox, "
            "never in this process; play the task from a suite (`pytest FOLDER --termrl-freeze` makes one)"
        )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return str(excinfo.value)


class ContractsModule(pytest.Module):
    """The collector for one suite's contracts.jsonl."""

    def _getobj(self) -> types.ModuleType:
        config = self.config
        options = termrl_options(config)
        mode = MODES[options.mode]
        unfrozen = options.unfrozen and mode.plays_agent and not self.path.exists()
        suite = load_suite(self.path, require_contracts=mode.require_contracts and not unfrozen)
        refuse_unplayable(suite, options.sandbox)
        self.suite = suite
        suite_id = str(self.path.parent)
        registry = config.stash.setdefault(SUITES_KEY, {})
        for loaded in suite.tasks:
            registry[(suite_id, loaded.task.id)] = loaded
        pairs = [{**pair, "nodeid": self.nodeid} for pair in left_out_pairs(suite, suite_id, options, mode)]
        config.stash.setdefault(LEFT_OUT_KEY, []).extend(pairs)
        for name in marker_names(suite, options.families):
            config.addinivalue_line("markers", f"{name}: pytest-termrl episode marker")
        params = [
            pytest.param(spec, id=spec.id, marks=episode_marks(loaded, family))
            for loaded, spec, family in suite_grid(suite, suite_id, options, mode)
        ]
        module = types.ModuleType(f"termrl_suite_{suite.name}")
        module.__file__ = str(self.path)
        function = mode.test
        # A copy per suite: the parametrize mark is set on the function object.
        test = types.FunctionType(function.__code__, function.__globals__, mode.test_name)
        test.__doc__ = function.__doc__
        module.__dict__[test.__name__] = pytest.mark.parametrize("termrl_spec", params)(test)
        return module

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        items = list(super().collect())
        for name, message in sorted(self.suite.problems.items()):
            items.append(BrokenTask.from_parent(self, name=name, message=message))
        return items
