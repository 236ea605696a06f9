"""Loader for the native task directory (task.toml, instruction.md, environment/, ...)."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import TaskFormatError
from .files import check_instruction, check_tree, read_text, read_toml, regular_file
from .model import DEFAULT_WORKDIR, Task
from .placement import checked_user, checked_workdir

_DIFFICULTIES = ("easy", "medium", "hard")


def _string(path: Path, data: dict, key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise TaskFormatError(path, key, "expected a non-empty string")
    return value


def _string_list(path: Path, data: dict, key: str, default: tuple = ()) -> tuple[str, ...]:
    value = data.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise TaskFormatError(path, key, "expected a list of non-empty strings")
    return tuple(value)


def _relative_input(path: Path, value: str) -> str:
    rel = value.removeprefix(DEFAULT_WORKDIR + "/")
    if rel.startswith("/") or ".." in Path(rel).parts:
        raise TaskFormatError(path, "inputs", f"expected a path inside the workdir, got {value!r}")
    return rel


def load_native_task(task_dir: Path) -> Task:
    """Read one task directory; raise TaskFormatError naming the file and field at fault."""
    toml_path = task_dir / "task.toml"
    data = read_toml(toml_path, what="the task's task.toml")
    task_id = _string(toml_path, data, "id")
    if task_id != task_dir.name:
        raise TaskFormatError(toml_path, "id", f"expected the directory name {task_dir.name!r}, got {task_id!r}")
    if "-" in task_id or "[" in task_id:
        raise TaskFormatError(toml_path, "id", "expected no '-' or '[' (they separate parts of test ids)")
    difficulty = _string(toml_path, data, "difficulty", "medium")
    if difficulty not in _DIFFICULTIES:
        raise TaskFormatError(toml_path, "difficulty", f"expected one of {', '.join(_DIFFICULTIES)}")
    limits = data.get("limits", {})
    if not isinstance(limits, dict):
        raise TaskFormatError(toml_path, "limits", "expected a table")
    max_commands = limits.get("max_commands")
    if max_commands is not None and (not isinstance(max_commands, int) or max_commands < 1):
        raise TaskFormatError(toml_path, "limits.max_commands", "expected a positive integer")
    setup_timeout = limits.get("setup_timeout_s")
    if setup_timeout is not None and (isinstance(setup_timeout, bool) or not isinstance(setup_timeout, (int, float)) or setup_timeout <= 0):
        raise TaskFormatError(toml_path, "limits.setup_timeout_s", "expected a positive number of seconds")

    instruction_path = task_dir / "instruction.md"
    instruction = check_instruction(instruction_path, None, read_text(instruction_path, what="the task's instruction for the agent"))
    tests_dir = task_dir / "tests"
    if not tests_dir.is_dir() or not any(tests_dir.glob("test_*.py")):
        raise TaskFormatError(tests_dir, None, "missing: expected hidden tests as tests/test_*.py")
    check_task_tree(task_dir)

    def optional(name: str) -> Path | None:
        candidate = task_dir / name
        return candidate if candidate.exists() else None

    return Task(
        id=task_id,
        title=_string(toml_path, data, "title", task_id),
        instruction=instruction,
        root=task_dir,
        difficulty=difficulty,
        category=_string(toml_path, data, "category", "general"),
        tags=_string_list(toml_path, data, "tags"),
        inputs=tuple(_relative_input(toml_path, v) for v in _string_list(toml_path, data, "inputs")),
        workdir=checked_workdir(toml_path, "workdir", data.get("workdir", DEFAULT_WORKDIR)),
        requires=_string_list(toml_path, data, "requires", ("bash",)),
        max_commands=max_commands,
        environment_dir=optional("environment"),
        setup_script=optional("setup.sh"),
        setup_timeout_s=float(setup_timeout) if setup_timeout is not None else None,
        solution_script=optional("solution.sh"),
        tests_dir=tests_dir,
        user=_user(toml_path, data),
    )


def _user(toml_path: Path, data: dict) -> str | None:
    """``user``: the account the setup and the agent run as (a name, or UID[:GID]); absent: the native shape."""
    value = data.get("user")
    return None if value is None else checked_user(toml_path, "user", value)


def check_task_tree(task_dir: Path) -> None:
    """Raise TaskFormatError naming the first file the episodes could not use (see ``files.check_tree``);
    the reference fed to the shell (``solution.sh``) must be UTF-8, ``setup.sh`` runs byte for byte."""
    check_tree(task_dir, task_dir / "tests")
    environment = task_dir / "environment"
    if os.path.lexists(environment) and not environment.is_dir():
        raise TaskFormatError(environment, None, "expected a directory of the files copied into the workdir")
    solution = task_dir / "solution.sh"
    if os.path.lexists(solution):
        read_text(solution, what="the reference solution, a bash script")
    setup = task_dir / "setup.sh"
    if os.path.lexists(setup):
        regular_file(setup, what="a bash script")
