"""Frozen contracts: what a validated reference run established about each task.

One JSON object per line of a suite's contracts.jsonl. Collection refuses a task whose
files changed since it was frozen, so a verdict always refers to the graded task.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..errors import ContractMismatchError, TaskFormatError
from .files import json_object, read_lines, sha256_file, task_files

CONTRACTS_FILE = "contracts.jsonl"


@dataclass(frozen=True)
class Contract:
    task_id: str
    path: str
    """The task directory relative to the suite folder."""
    files: dict[str, str]
    """sha256 of every file of the task directory, by relative path."""
    tests: tuple[str, ...]
    """The hidden-test inventory: node ids relative to the tests folder."""
    permitted: tuple[dict, ...] = ()
    fault_targets: dict = field(default_factory=dict)
    excluded_faults: dict = field(default_factory=dict)
    decoys: tuple[str, ...] = ()
    reference: dict | None = None
    """For a task that ships no reference: the recorded trial frozen as its reference (a
    :class:`~pytest_termrl.trajectories.model.RecordedTrial` as a dict, its calls and where it came from)."""

    def to_json(self) -> str:
        data = asdict(self)
        data["tests"] = list(self.tests)
        data["permitted"] = list(self.permitted)
        data["decoys"] = list(self.decoys)
        if self.reference is None:
            del data["reference"]  # contracts of written references keep their one shape
        return json.dumps(data, sort_keys=True)


def hash_task_files(task_dir: Path) -> dict[str, str]:
    """sha256 of each file under the task directory (caches skipped), by relative path.

    Raises TaskFormatError naming a file that cannot be read or is over the size limit.
    """
    return {path.relative_to(task_dir).as_posix(): sha256_file(path) for path in task_files(task_dir)}


def check_task_files(contract: Contract, task_dir: Path) -> None:
    """Raise ContractMismatchError naming the first file that differs from the frozen hash."""
    current = hash_task_files(task_dir)
    for rel in sorted(set(current) | set(contract.files)):
        if current.get(rel) == contract.files.get(rel):
            continue
        what = "was added" if rel not in contract.files else "is missing" if rel not in current else "changed"
        raise ContractMismatchError(
            f"task {contract.task_id!r}: file {(task_dir / rel)} {what} since the contract was frozen; "
            "re-run with --termrl-freeze to validate and freeze it again"
        )


_REQUIRED = {"task_id": str, "path": str, "files": dict, "tests": list}


def parse_contract_line(source: Path, lineno: int, line: str) -> Contract:
    """One line of contracts.jsonl; errors name the file, the line and the field."""
    where = f"{source}:{lineno}"
    data = json_object(where, line)
    for key, kind in _REQUIRED.items():
        if not isinstance(data.get(key), kind):
            raise TaskFormatError(where, key, f"expected a {kind.__name__}")
    return Contract(
        task_id=data["task_id"],
        path=data["path"],
        files=data["files"],
        tests=tuple(data["tests"]),
        permitted=tuple(data.get("permitted", ())),
        fault_targets=data.get("fault_targets", {}),
        excluded_faults=data.get("excluded_faults", {}),
        decoys=tuple(data.get("decoys", ())),
        reference=_reference(where, data.get("reference")),
    )


def _reference(where: str, value: object) -> dict | None:
    """A frozen trajectory reference: an object with its ``trial`` and its ``calls``, or absent."""
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("calls"), list) or not isinstance(value.get("trial"), str):
        raise TaskFormatError(where, "reference", "expected a recorded trial: an object with 'trial' and a list of 'calls'")
    return value


class DuplicateContractError(TaskFormatError):
    """Two lines of contracts.jsonl freeze one task: neither is trusted."""

    def __init__(self, source: Path, task_id: str, lines: list[int]) -> None:
        self.task_id = task_id
        self.lines = tuple(lines)
        numbers = ", ".join(map(str, lines[:-1])) + f" and {lines[-1]}"
        super().__init__(
            f"{source}:{lines[-1]}", "task_id",
            f"task {task_id!r} has {len(lines)} contracts (lines {numbers}); expected one line per task: "
            "delete all but one, or re-run with --termrl-freeze",
        )


def read_contracts(path: Path) -> tuple[list[Contract], list[TaskFormatError]]:
    """All well-formed contracts of a file, and an error for each bad line (others still load).

    A line that is not UTF-8 or not a contract is an error naming ``file:line``; a task with
    two or more lines gets no contract and one DuplicateContractError naming every line.
    """
    by_id: dict[str, list[tuple[int, Contract]]] = {}
    errors: list[TaskFormatError] = []
    for lineno, line in read_lines(path):
        try:
            if isinstance(line, TaskFormatError):
                raise line
            contract = parse_contract_line(path, lineno, line)
        except TaskFormatError as exc:
            errors.append(exc)
            continue
        by_id.setdefault(contract.task_id, []).append((lineno, contract))
    contracts = []
    for task_id, found in by_id.items():
        if len(found) == 1:
            contracts.append(found[0][1])
        else:
            errors.append(DuplicateContractError(path, task_id, [lineno for lineno, _ in found]))
    return contracts, errors


def merge_contracts(path: Path, fresh: list[Contract]) -> None:
    """Put the fresh contracts in place of their tasks' lines and keep every other line byte for byte.

    A line that does not parse (bad bytes, bad JSON, a bad field) belongs to a task not
    frozen now, so it stays as it was, and its error with it, until that task is frozen again;
    a freeze of some tasks never silently drops another's contract.
    """
    replaced = {c.task_id for c in fresh}
    keyed: list[tuple[str, bytes]] = [(c.task_id, c.to_json().encode()) for c in fresh]
    unkeyed: list[bytes] = []
    for raw in (path.read_bytes() if path.exists() else b"").split(b"\n"):
        if not raw.strip():
            continue
        task_id = _task_id_of(raw)
        if task_id is None:
            unkeyed.append(raw)
        elif task_id not in replaced:
            keyed.append((task_id, raw))
    lines = [raw for _, raw in sorted(keyed, key=lambda pair: pair[0])] + unkeyed
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_bytes(b"".join(raw + b"\n" for raw in lines))
    tmp.replace(path)


def _task_id_of(raw: bytes) -> str | None:
    try:
        row = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    task_id = row.get("task_id") if isinstance(row, dict) else None
    return task_id if isinstance(task_id, str) else None


def write_contracts(path: Path, contracts: list[Contract]) -> None:
    """Write sorted by task id, atomically, so a freeze is reproducible byte for byte."""
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(c.to_json() + "\n" for c in sorted(contracts, key=lambda c: c.task_id)))
    tmp.replace(path)
