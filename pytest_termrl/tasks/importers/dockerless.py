"""DockerLess JSONL rows: one task per line, materialised into a cached native task directory.

A row is a JSON object::

    {"id": "count_words",                      # or "task_id" / "instance_id"
     "instruction": "Count the words in ...",  # or "prompt"
     "title": "...", "difficulty": "easy", "category": "text", "tags": ["wc"],   # optional
     "inputs": ["notes/today.txt"], "workdir": "/home/user",                      # optional
     "dockerless": {"setup": "bash run once as the agent before the episode",     # optional
                    "files": {"notes/today.txt": "text",                          # path -> content
                              "bin/run": {"content": "#!/bin/sh ...", "mode": "0755"},
                              "data.bin": {"base64": "AAEC", "mode": 420}}},
     "tests": "pytest source"  or  {"test_outputs.py": "...", "helpers.py": "..."},
     "solution": "bash"}                                                          # optional

The flat keys ``"dockerless.setup"`` and ``"dockerless.files"`` are read too. Paths are
relative to the workdir (or absolute inside it). The row becomes ``<cache>/dockerless/
<digest>/<id>/`` with task.toml, instruction.md, environment/, setup.sh, solution.sh and
tests/, which the native loader reads; the Task remembers the file and line it came from.
A row's setup runs without network: one that installs packages is reported, not run online.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import json
import shlex
from pathlib import Path, PurePosixPath

from ...errors import TaskFormatError
from ..files import check_instruction, json_object, read_lines
from ..model import DEFAULT_WORKDIR, Task, TaskSource
from ..native import load_native_task
from .cache import IMPORTER_VERSION, cache_root, materialise
from .metadata import DIFFICULTIES, marker_word, task_id_from
from .reference import solution_wrapper
from .scripts import analyse_script

FORMAT = "dockerless"


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _mode(where: str, field: str, value) -> int:
    if value is None:
        return 0o644
    if isinstance(value, str):
        try:
            value = int(value, 8)
        except ValueError:
            raise TaskFormatError(where, field, "expected an octal mode such as '0755'") from None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0o7777:
        raise TaskFormatError(where, field, "expected a file mode (an integer or an octal string)")
    return value


def _relative(where: str, field: str, path, workdir: str) -> str:
    if not isinstance(path, str) or not path.strip():
        raise TaskFormatError(where, field, "expected a non-empty path")
    rel = path
    if rel.startswith("/"):
        root = workdir.rstrip("/") + "/"
        if not rel.startswith(root):
            raise TaskFormatError(where, field, f"expected a path inside the workdir {workdir}, got {path!r}")
        rel = rel[len(root):]
    parts = [p for p in PurePosixPath(rel).parts if p not in (".",)]
    if not parts or ".." in parts:
        raise TaskFormatError(where, field, f"expected a path inside the workdir, got {path!r}")
    return "/".join(parts)


def _files(where: str, files, workdir: str) -> dict[str, tuple[bytes, int]]:
    if files is None:
        return {}
    if not isinstance(files, dict):
        raise TaskFormatError(where, "dockerless.files", "expected an object of path -> content")
    out: dict[str, tuple[bytes, int]] = {}
    for path, spec in files.items():
        field = f"dockerless.files[{path!r}]"
        rel = _relative(where, field, path, workdir)
        if isinstance(spec, str):
            out[rel] = (spec.encode(), 0o644)
            continue
        if not isinstance(spec, dict) or ("content" in spec) == ("base64" in spec):
            raise TaskFormatError(where, field, "expected a string, or an object with 'content' or 'base64' (and 'mode')")
        if "content" in spec:
            if not isinstance(spec["content"], str):
                raise TaskFormatError(where, field + ".content", "expected a string")
            data = spec["content"].encode()
        else:
            try:
                data = base64.b64decode(spec["base64"], validate=True)
            except (binascii.Error, TypeError, ValueError):
                raise TaskFormatError(where, field + ".base64", "expected base64 text") from None
        out[rel] = (data, _mode(where, field + ".mode", spec.get("mode")))
    return out


def _tests(where: str, tests) -> dict[str, str]:
    if isinstance(tests, str) and tests.strip():
        return {"test_outputs.py": tests}
    if isinstance(tests, dict) and tests:
        out = {}
        for name, source in tests.items():
            if not isinstance(name, str) or "/" in name or not name.endswith(".py") or not isinstance(source, str):
                raise TaskFormatError(where, f"tests[{name!r}]", "expected file name -> pytest source (flat *.py names)")
            out[name] = source
        if not any(name.startswith("test_") for name in out):
            raise TaskFormatError(where, "tests", "expected at least one test_*.py file")
        return out
    raise TaskFormatError(where, "tests", "expected the pytest source (a string) or an object of file name -> source")


def _optional_str(where: str, row: dict, key: str) -> str | None:
    value = row.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise TaskFormatError(where, key, "expected a string")
    return value


def task_from_row(source: Path, lineno: int, line: str) -> Task:
    """One JSONL line -> a Task (materialised and loaded natively); errors name the file, line and field."""
    where = f"{source}:{lineno}"
    row = json_object(where, line)
    raw_id = next((row[k] for k in ("id", "task_id", "instance_id") if k in row), None)
    if not isinstance(raw_id, str) or not raw_id.strip():
        raise TaskFormatError(where, "id", "expected a non-empty string (id, task_id or instance_id)")
    instruction = row.get("instruction", row.get("prompt"))
    if not isinstance(instruction, str) or not instruction.strip():
        raise TaskFormatError(where, "instruction", "expected a non-empty string")
    check_instruction(where, "instruction", instruction)
    workdir = row.get("workdir", DEFAULT_WORKDIR)
    if not isinstance(workdir, str) or not workdir.startswith("/") or ".." in PurePosixPath(workdir).parts:
        raise TaskFormatError(where, "workdir", "expected an absolute path")
    dockerless = row.get("dockerless")
    if dockerless is None:
        dockerless = {k.split(".", 1)[1]: v for k, v in row.items() if k.startswith("dockerless.")}
    if not isinstance(dockerless, dict):
        raise TaskFormatError(where, "dockerless", "expected an object with 'setup' and 'files'")
    setup = dockerless.get("setup")
    if setup is not None and not isinstance(setup, str):
        raise TaskFormatError(where, "dockerless.setup", "expected a bash script (a string)")
    files = _files(where, dockerless.get("files"), workdir)
    tests = _tests(where, row.get("tests"))
    solution = _optional_str(where, row, "solution")
    title = _optional_str(where, row, "title") or raw_id
    difficulty = _optional_str(where, row, "difficulty") or "medium"
    if difficulty not in DIFFICULTIES:
        raise TaskFormatError(where, "difficulty", f"expected one of {', '.join(DIFFICULTIES)}")
    category = marker_word(_optional_str(where, row, "category") or "general")
    tags = row.get("tags", [])
    inputs = row.get("inputs", [])
    for key, value in (("tags", tags), ("inputs", inputs)):
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise TaskFormatError(where, key, "expected a list of non-empty strings")
    inputs = [_relative(where, "inputs", p, workdir) for p in inputs]
    task_id = task_id_from(raw_id)
    canonical = json.dumps(row, sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(f"{IMPORTER_VERSION}\0{task_id}\0{canonical}".encode()).hexdigest()

    def build(folder: Path) -> None:
        root = folder / task_id
        (root / "tests").mkdir(parents=True)
        requires = ["bash"] + [t for t, w in (("python", "python"), ("git", "git ")) if w in (setup or "") + (solution or "")]
        toml = [
            f"id = {_toml_string(task_id)}",
            f"title = {_toml_string(title)}",
            f"difficulty = {_toml_string(difficulty)}",
            f"category = {_toml_string(category)}",
            f"tags = [{', '.join(_toml_string(t) for t in tags)}]",
            f"inputs = [{', '.join(_toml_string(p) for p in inputs)}]",
            f"workdir = {_toml_string(workdir)}",
            f"requires = [{', '.join(_toml_string(r) for r in requires)}]",
        ]
        (root / "task.toml").write_text("\n".join(toml) + "\n")
        (root / "instruction.md").write_text(instruction.strip() + "\n")
        if files:
            env = root / "environment"
            env.mkdir()
            for rel, (data, mode) in sorted(files.items()):
                target = env / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                target.chmod(mode)
        if setup and setup.strip():
            (root / "setup.sh").write_text(f"cd {shlex.quote(workdir)} || exit 1\n{setup}\n")
        if solution and solution.strip():
            (root / "solution.sh").write_text(solution_wrapper(solution, workdir, f"DockerLess row {raw_id} ({where})"))
        for name, text in sorted(tests.items()):
            (root / "tests" / name).write_text(text)

    folder = materialise(FORMAT, task_id, digest, build)
    task = load_native_task(folder / task_id)
    setup_findings = analyse_script(setup or "")
    return dataclasses.replace(
        task,
        source=TaskSource(format=FORMAT, id=raw_id, path=where, import_cache=folder),
        setup_blockers=tuple(f"its setup needs the network: {line}" for line in setup_findings.network[:3]),
    )


def load_dockerless(path: Path) -> tuple[list[Task], list[TaskFormatError]]:
    """Every well-formed row of a JSONL file, and an error for each bad one (the others still load)."""
    path = Path(path)
    tasks: list[Task] = []
    errors: list[TaskFormatError] = []
    seen: dict[str, int] = {}
    try:
        lines = read_lines(path)
    except TaskFormatError as exc:
        return [], [exc]
    for lineno, line in lines:
        try:
            if isinstance(line, TaskFormatError):
                raise line
            task = task_from_row(path, lineno, line)
        except TaskFormatError as exc:
            errors.append(exc)
            continue
        if task.id in seen:
            errors.append(TaskFormatError(f"{path}:{lineno}", "id", f"duplicate task id {task.id!r} (first on line {seen[task.id]})"))
            continue
        seen[task.id] = lineno
        tasks.append(task)
    return tasks, errors


def cached_root() -> Path:
    return cache_root() / FORMAT
