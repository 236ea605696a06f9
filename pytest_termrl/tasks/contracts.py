"""Frozen contracts: what a validated reference run established about each task.

One JSON object per line of a suite's contracts.jsonl. Collection refuses a task whose
files changed since it was frozen, so a verdict always refers to the graded task.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..errors import ContractMismatchError, TaskFormatError

CONTRACTS_FILE = "contracts.jsonl"
_IGNORED_PARTS = {"__pycache__", ".pytest_cache"}


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

    def to_json(self) -> str:
        data = asdict(self)
        data["tests"] = list(self.tests)
        data["permitted"] = list(self.permitted)
        data["decoys"] = list(self.decoys)
        return json.dumps(data, sort_keys=True)


def hash_task_files(task_dir: Path) -> dict[str, str]:
    """sha256 of each file under the task directory (caches skipped), by relative path."""
    hashes = {}
    for path in sorted(task_dir.rglob("*")):
        rel = path.relative_to(task_dir)
        if _IGNORED_PARTS.intersection(rel.parts) or not path.is_file():
            continue
        hashes[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


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
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise TaskFormatError(where, None, f"not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise TaskFormatError(where, None, "expected a JSON object")
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
    )


def read_contracts(path: Path) -> tuple[list[Contract], list[TaskFormatError]]:
    """All well-formed contracts of a file, and an error for each bad line (others still load)."""
    contracts: list[Contract] = []
    errors: list[TaskFormatError] = []
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            contracts.append(parse_contract_line(path, lineno, line))
        except TaskFormatError as exc:
            errors.append(exc)
    return contracts, errors


def write_contracts(path: Path, contracts: list[Contract]) -> None:
    """Write sorted by task id, atomically, so a freeze is reproducible byte for byte."""
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(c.to_json() + "\n" for c in sorted(contracts, key=lambda c: c.task_id)))
    tmp.replace(path)
