"""A suite folder: task directories, their frozen contracts and the splits.

Loading never stops at the first broken task: each problem is returned, named, beside
every task that did load, so one broken task never stops the others.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ContractMismatchError, TaskFormatError
from .contracts import CONTRACTS_FILE, Contract, check_task_files, read_contracts
from .model import Task
from .importers import load_dockerless, load_task_dir
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
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise TaskFormatError(path, None, f"not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise TaskFormatError(path, None, "expected an object of split name -> list of task ids")
    splits = {}
    for split, ids in data.items():
        if split not in SPLITS or not isinstance(ids, list):
            raise TaskFormatError(path, split, f"expected one of {', '.join(SPLITS)} with a list of task ids")
        for task_id in ids:
            splits[task_id] = split
    return splits


def is_predictions_file(path: Path) -> bool:
    """A JSONL of {task_id, agent_script} rows (for --termrl-agent=script), not DockerLess tasks."""
    for line in path.read_text(errors="replace").splitlines():
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                return False
            return isinstance(row, dict) and set(row) == {"task_id", "agent_script"}
    return False


def load_suite(contracts_path: Path, require_contracts: bool = True) -> Suite:
    root = contracts_path.parent
    suite = Suite(name=root.name, root=root)
    contracts, errors = read_contracts(contracts_path) if contracts_path.exists() else ([], [])
    for error in errors:
        suite.problems[f"{CONTRACTS_FILE}:{error.path.rsplit(':', 1)[-1]}"] = str(error)
    by_id = {c.task_id: c for c in contracts}
    try:
        splits = read_splits(root)
    except TaskFormatError as exc:
        suite.problems[SPLITS_FILE] = str(exc)
        splits = {}
    present = set()

    def admit(task, name: str) -> None:
        contract = by_id.get(task.id)
        if contract is None and require_contracts:
            raise ContractMismatchError(
                f"task {task.id!r} ({name}) has no contract in {contracts_path}; run with --termrl-freeze"
            )
        if contract is not None and require_contracts:
            check_task_files(contract, task.root)
        suite.tasks.append(LoadedTask(task, contract, splits.get(task.id)))

    for folder in task_dirs(root):
        present.update({folder.name, task_id_from(folder.name)})
        try:
            admit(load_task_dir(folder), str(folder))
        except (TaskFormatError, ContractMismatchError) as exc:
            suite.problems[folder.name] = str(exc)
    for rows in sorted(p for p in root.glob("*.jsonl") if p.name != CONTRACTS_FILE and not is_predictions_file(p)):
        tasks, errors = load_dockerless(rows)
        for error in errors:
            suite.problems[f"{rows.name}:{error.path.rsplit(':', 1)[-1]}"] = str(error)
        for task in tasks:
            present.add(task.id)
            try:
                admit(task, task.source.path)
            except ContractMismatchError as exc:
                suite.problems[task.source.path.rsplit("/", 1)[-1]] = str(exc)
    for task_id in sorted(set(by_id) - present):
        suite.problems[task_id] = f"{contracts_path}: contract for {task_id!r} names no task directory in {root}"
    return suite
