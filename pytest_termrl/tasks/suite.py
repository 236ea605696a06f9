"""A suite folder: task directories, their frozen contracts and the splits.

Loading never stops at the first broken task: each problem is returned, named, beside
every task that did load, so one broken task never stops the others.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ContractMismatchError, TaskFormatError
from .contracts import CONTRACTS_FILE, Contract, DuplicateContractError, check_task_files, read_contracts
from .files import read_text
from .model import Task
from .importers import load_dockerless, load_task_dir, unexpected
from .importers.metadata import task_id_from

SPLITS_FILE = "splits.json"
SPLITS = ("train", "dev_search", "dev_monitor", "test")


@dataclass
class LoadedTask:
    task: Task
    contract: Contract | None
    split: str | None = None


@dataclass
class Suite:
    name: str
    root: Path
    tasks: list[LoadedTask] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)
    """Broken entries by name (task directory, or contracts.jsonl line), with the reason."""

    def by_id(self, task_id: str) -> LoadedTask:
        for loaded in self.tasks:
            if loaded.task.id == task_id:
                return loaded
        raise KeyError(task_id)


def task_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def read_splits(root: Path) -> dict[str, str]:
    """task_id -> split name, from splits.json ({split: [task ids]}); empty when absent."""
    path = root / SPLITS_FILE
    if not os.path.lexists(path):
        return {}
    try:
        data = json.loads(read_text(path, what="the suite's splits"))
    except json.JSONDecodeError as exc:
        raise TaskFormatError(path, None, f"not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise TaskFormatError(path, None, "expected an object of split name -> list of task ids")
    splits: dict[str, str] = {}
    for split, ids in data.items():
        if split not in SPLITS or not isinstance(ids, list):
            raise TaskFormatError(path, split, f"expected one of {', '.join(SPLITS)} with a list of task ids")
        for task_id in ids:
            if not isinstance(task_id, str) or not task_id:
                raise TaskFormatError(path, split, f"expected a list of task ids (strings), got {task_id!r}")
            if task_id in splits and splits[task_id] != split:
                raise TaskFormatError(path, split, f"task {task_id!r} is also in split {splits[task_id]!r}: a task belongs to one split")
            splits[task_id] = split
    return splits


def is_predictions_file(path: Path) -> bool:
    """A JSONL of {task_id, agent_script} rows (for --termrl-agent=script), not DockerLess tasks."""
    if not path.is_file():
        return False  # never opened: a FIFO would block; the DockerLess loader names it
    for line in path.read_text(errors="replace").splitlines():
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                return False
            return isinstance(row, dict) and set(row) == {"task_id", "agent_script"}
    return False


def _entry(where: str) -> str:
    """The problem name of a ``file:line`` (or a whole file): 'rows.jsonl:4'."""
    return where.replace("\\", "/").rsplit("/", 1)[-1]


def load_suite(contracts_path: Path, require_contracts: bool = True) -> Suite:
    """Every task of a suite folder, and a named problem per broken entry; never raises for one task.

    A problem is one task's (its folder, DockerLess row or contract lines) or one line's when
    no task can be known: a task that does not load, has no or two contracts, whose files
    changed since it was frozen, or whose id another task of the suite has too.
    """
    root = contracts_path.parent
    suite = Suite(name=root.name, root=root)
    contracts: list[Contract] = []
    duplicated: dict[str, DuplicateContractError] = {}
    if os.path.lexists(contracts_path):
        try:
            contracts, errors = read_contracts(contracts_path)
        except TaskFormatError as exc:
            suite.problems[CONTRACTS_FILE] = str(exc)
            errors = []
        for error in errors:
            if isinstance(error, DuplicateContractError) and require_contracts:
                duplicated[error.task_id] = error
            elif not isinstance(error, DuplicateContractError):
                suite.problems[_entry(error.path)] = str(error)
    by_id = {c.task_id: c for c in contracts}
    try:
        splits = read_splits(root)
    except TaskFormatError as exc:
        suite.problems[SPLITS_FILE] = str(exc)
        splits = {}
    present = set()
    found: dict[str, list[tuple[Task, str, str]]] = {}
    """task id -> (task, where it was read, its problem name), in the order read."""

    for folder in task_dirs(root):
        present.update({folder.name, task_id_from(folder.name)})
        try:
            task = load_task_dir(folder)
        except (TaskFormatError, ContractMismatchError) as exc:
            suite.problems[folder.name] = str(exc)
        except (OSError, ValueError) as exc:
            suite.problems[folder.name] = unexpected(folder, exc)
        else:
            found.setdefault(task.id, []).append((task, str(folder), folder.name))
    for rows in sorted(p for p in root.glob("*.jsonl") if p.name != CONTRACTS_FILE and not is_predictions_file(p)):
        tasks, errors = load_dockerless(rows)
        for error in errors:
            suite.problems[_entry(error.path) if error.path != str(rows) else rows.name] = str(error)
        for task in tasks:
            present.add(task.id)
            where = task.source.path if task.source.path is not None else str(rows)  # the loader always sets it
            found.setdefault(task.id, []).append((task, where, _entry(where)))

    for task_id, sources in found.items():
        task, where, name = sources[0]
        if len(sources) > 1:
            named = " and ".join(f"{w} ({t.source.format})" for t, w, _ in sources)
            suite.problems[task_id] = f"task id {task_id!r} is given by {len(sources)} tasks of the suite: {named}; expected one task per id: rename or remove all but one"
            continue
        try:
            if task_id in duplicated:
                raise duplicated[task_id]
            contract = by_id.get(task_id)
            if contract is None and require_contracts:
                raise ContractMismatchError(
                    f"task {task_id!r} ({where}) has no contract in {contracts_path}; run with --termrl-freeze"
                )
            if contract is not None and require_contracts:
                check_task_files(contract, task.root)
            suite.tasks.append(LoadedTask(task, contract, splits.get(task_id)))
        except (TaskFormatError, ContractMismatchError) as exc:
            suite.problems[name] = str(exc)
    for task_id in sorted(set(by_id) - present):
        suite.problems[task_id] = f"{contracts_path}: contract for {task_id!r} names no task directory in {root}"
    for task_id, error in sorted(duplicated.items()):
        if task_id not in present:
            suite.problems[_entry(error.path)] = str(error)
    return suite
