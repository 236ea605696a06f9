"""Write a Task as a Harbor task directory, so Harbor users can run a suite with their own harness.

One directory per task::

    <id>/task.toml               [metadata] difficulty, category, tags; [agent]/[verifier] user
                                 and timeouts; [environment] workdir, network_mode = "no-network"
    <id>/instruction.md          the instruction
    <id>/environment/Dockerfile  FROM ${BASE_IMAGE} (the harness's base image by default), pytest
                                 for the verifier, the task's files COPY'd into the workdir owned
                                 by the agent's user (uid 1000), its setup.sh as a RUN heredoc run
                                 as that user in the workdir
    <id>/environment/home/       the task's environment files, modes kept
    <id>/solution/solve.sh       the reference
    <id>/tests/                  the hidden tests, and test.sh: pytest on /tests, writing 1 to
                                 /logs/verifier/reward.txt when every test passes, else 0

The base image must have the agent's user, uid 1000, owning the workdir (the harness's
base image does; the docker backend builds it with ``python -m pytest_termrl.sandbox.image
build``). Only what this harness itself can run is exported: a task that has no tests, or that was
imported with a grader of its own (a script or a parser), is named as not exported.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..errors import TaskFormatError
from ..tasks.importers import scan
from ..tasks.model import Task

DEFAULT_BASE_IMAGE = "termrl-base:1"
AGENT_USER, AGENT_UID = "user", 1000
SETUP_WORD = "TERMRL_SETUP"
TEST_SH = """#!/bin/bash
# The hidden tests of {id}: reward 1 when every test passes, else 0.
mkdir -p /logs/verifier
cd {workdir}
PYTEST="python3 -m pytest"
if command -v pytest >/dev/null 2>&1; then
  PYTEST=pytest
fi
if $PYTEST /tests -rA -p no:cacheprovider; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def task_toml(task: Task) -> str:
    lines = [
        'version = "1.0"',
        "",
        "[metadata]",
        f"difficulty = {_toml_string(task.difficulty)}",
        f"category = {_toml_string(task.source.original_category or task.category)}",
        "tags = [" + ", ".join(_toml_string(t) for t in task.tags) + "]",
        f"termrl_id = {_toml_string(task.id)}",
        "",
        "[agent]",
        f"user = {_toml_string(AGENT_USER)}",
    ]
    if task.agent_timeout_s:
        lines.append(f"timeout_sec = {float(task.agent_timeout_s)}")
    lines += ["", "[verifier]", f"user = {_toml_string(AGENT_USER)}"]
    if task.grader.timeout_s:
        lines.append(f"timeout_sec = {float(task.grader.timeout_s)}")
    lines += ["", "[environment]", f"workdir = {_toml_string(task.workdir)}", 'network_mode = "no-network"']
    if task.resources is not None:
        for name in ("cpus", "memory_mb", "storage_mb"):
            value = getattr(task.resources, name)
            if value is not None:
                lines.append(f"{name} = {int(value) if name != 'cpus' or float(value).is_integer() else value}")
    return "\n".join(lines) + "\n"


def dockerfile(task: Task, base_image: str, has_files: bool) -> str:
    workdir = task.workdir
    lines = [
        f"ARG BASE_IMAGE={base_image}",
        "FROM ${BASE_IMAGE}",
        "USER root",
        "# pytest for the verifier's tests/test.sh",
        "RUN apt-get update && apt-get install -y python3-pytest && rm -rf /var/lib/apt/lists/*",
    ]
    if has_files:
        lines.append(f"COPY --chown={AGENT_UID}:{AGENT_UID} home/ {workdir}/")
    lines += [f"USER {AGENT_UID}:{AGENT_UID}", f"WORKDIR {workdir}"]
    if task.setup_script is not None and task.setup_script.is_file():
        body = task.setup_script.read_text()
        if SETUP_WORD in body:
            raise TaskFormatError(task.setup_script, None, f"the setup script holds the heredoc delimiter {SETUP_WORD}")
        if not body.endswith("\n"):
            body += "\n"
        lines += [f"RUN <<'{SETUP_WORD}'", "#!/bin/bash", body + SETUP_WORD]
    return "\n".join(lines) + "\n"


def export_task(task: Task, out: Path, base_image: str = DEFAULT_BASE_IMAGE) -> Path:
    """Write one task as ``out/<task id>/``; raise TaskFormatError naming what cannot be exported."""
    if task.grader.kind != "pytest":
        raise TaskFormatError(task.root, None, f"its grader is a {task.grader.kind!r} grader of its own format; only pytest-graded tasks are exported")
    if task.tests_dir is None or not task.tests_dir.is_dir():
        raise TaskFormatError(task.root, "tests", "missing: a task without hidden tests cannot be exported")
    target = out / task.id
    if target.exists():
        shutil.rmtree(target)
    (target / "environment").mkdir(parents=True)
    (target / "solution").mkdir()
    (target / "task.toml").write_text(task_toml(task))
    (target / "instruction.md").write_text(task.instruction.rstrip("\n") + "\n")
    has_files = task.environment_dir is not None and task.environment_dir.is_dir() and any(task.environment_dir.iterdir())
    if has_files:
        shutil.copytree(task.environment_dir, target / "environment" / "home", symlinks=True)
    (target / "environment" / "Dockerfile").write_text(dockerfile(task, base_image, has_files))
    shutil.copytree(task.tests_dir, target / "tests", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    test_sh = target / "tests" / "test.sh"
    test_sh.write_text(TEST_SH.format(id=task.id, workdir=task.workdir))
    test_sh.chmod(0o755)
    solve = target / "solution" / "solve.sh"
    solve.write_text("#!/bin/bash\n" + task.solution_text() if task.solution_script is not None else "#!/bin/bash\nexit 1\n")
    solve.chmod(0o755)
    return target


def export_suite(suite: Path, out: Path, base_image: str = DEFAULT_BASE_IMAGE) -> tuple[list[Path], dict[str, str]]:
    """Every task of a suite folder written under ``out``: (the directories written, a problem per task not written)."""
    tasks, problems = scan(Path(suite))
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for task in sorted(tasks, key=lambda t: t.id):
        try:
            written.append(export_task(task, out, base_image))
        except TaskFormatError as exc:
            problems[task.id] = str(exc)
    return written, problems
