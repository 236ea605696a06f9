"""A suite of this project as one Inspect task: ``inspect eval pytest_termrl/integrations/inspect/suite_task.py -T suite=task_suites/core``.

Each task folder is a sample: its instruction the input, the folder itself the sample's
``termrl`` sandbox config (so its frozen contract, when the suite has one, gives the
permitted changes), its grader one scorer and the collateral oracle the other. The
default solver is Inspect's ``basic_agent`` with ``bash()``; any other (``react``) can be
given in its place (``--solver`` or ``eval(..., solver=...)``).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import basic_agent
from inspect_ai.tool import bash

# Absolute imports: ``inspect eval`` loads this file by its path, outside its package.
from pytest_termrl.integrations.inspect.provider import PROVIDER
from pytest_termrl.integrations.inspect.scorers import termrl_grade, termrl_safety
from pytest_termrl.integrations.session import CONTRACTS
from pytest_termrl.settings import COMMAND_TIMEOUT_S
from pytest_termrl.tasks.importers import scan
from pytest_termrl.tasks.model import Task as TermrlTask
from pytest_termrl.tasks.suite import load_suite


def suite_samples(suite: str | Path, tasks: str | list[str] | None = None, split: str | None = None) -> list[Sample]:
    """One sample per task of the suite folder (sorted by id), optionally only the named ids or one split."""
    root = suite_root(suite)
    wanted = _names(tasks)
    found, problems, splits = _load(root)
    if wanted is not None:
        missing = sorted(set(wanted) - {t.id for t in found})
        if missing:
            raise ValueError(f"{root}: no task {', '.join(missing)}" + "".join(
                f"\n  {name}: {problems[name]}" for name in missing if name in problems))
        found = [t for t in found if t.id in wanted]
    if split is not None:
        found = [t for t in found if splits.get(t.id) == split]
    samples = []
    for t in sorted(found, key=lambda t: t.id):
        if not t.root.is_dir() or t.root.resolve() == root:
            raise ValueError(f"{t.id}: a task without a folder of its own (a DockerLess row) cannot name a sample's sandbox")
        samples.append(Sample(id=t.id, input=t.instruction, sandbox=(PROVIDER, str(t.root.resolve())),
                              metadata={"difficulty": t.difficulty, "category": t.category, "split": splits.get(t.id) or ""}))
    if not samples:
        raise ValueError(f"{root}: no task selected")
    return samples


@task
def termrl_suite(suite: str, tasks: str | list[str] | None = None, split: str | None = None,
                 message_limit: int = 50, command_timeout_s: float = COMMAND_TIMEOUT_S) -> Task:
    """The suite at ``suite`` (a folder of task folders, with or without ``contracts.jsonl``) as an Inspect task.

    ``tasks``: ids, comma-separated; ``split``: train, val or test (``splits.json``);
    ``command_timeout_s``: seconds per bash call of the default solver (this project's command timeout by default).
    """
    return Task(
        dataset=MemoryDataset(suite_samples(suite, tasks, split), name=suite_root(suite).name),
        solver=basic_agent(tools=[bash(timeout=math.ceil(command_timeout_s))], message_limit=message_limit),
        scorer=[termrl_grade(), termrl_safety()],
        sandbox=PROVIDER,
    )


def suite_root(suite: str | Path) -> Path:
    """The suite folder; a relative path is taken from where the command was run (``$PWD``), as a user
    typing it means, since Inspect runs a task file from that file's own folder."""
    path = Path(suite).expanduser()
    if not path.is_absolute():
        for base in (os.environ.get("PWD"), os.getcwd()):
            if base and (Path(base) / path).is_dir():
                return (Path(base) / path).resolve()
    if not path.is_dir():
        raise FileNotFoundError(f"{suite}: no such suite folder")
    return path.resolve()


def _names(tasks: str | list[str] | None) -> list[str] | None:
    if tasks is None:
        return None
    items = tasks.split(",") if isinstance(tasks, str) else list(tasks)
    return [i.strip() for i in items if i.strip()]


def _load(root: Path) -> tuple[list[TermrlTask], dict[str, str], dict[str, str]]:
    """The suite's tasks, its problems by name, and each task's split."""
    if (root / CONTRACTS).is_file():
        suite = load_suite(root / CONTRACTS, require_contracts=False)
        return [lt.task for lt in suite.tasks], dict(suite.problems), {lt.task.id: lt.split or "" for lt in suite.tasks}
    found, problems = scan(root)
    return found, problems, {}
