"""Write a Task as a Harbor task directory, so Harbor users can run a suite with their own harness.

One directory per task::

    <id>/task.toml               [metadata] difficulty, category, tags; [agent]/[verifier] user
                                 and timeouts, the grader's env and pass threshold;
                                 [environment] workdir, network_mode = "no-network"
    <id>/instruction.md          the instruction
    <id>/environment/Dockerfile  FROM ${BASE_IMAGE} (the harness's base image by default), pytest
                                 for the verifier, the workdir owned by the agent's user (uid
                                 1000), the task's files COPY'd into it, its setup.sh COPY'd
                                 and run by that user in the workdir, then removed (no heredoc:
                                 engines before Docker 23 cannot parse one without pulling a frontend)
    <id>/environment/home/       the task's environment files, modes kept
    <id>/environment/termrl-setup.sh  the task's setup script
    <id>/solution/solve.sh       the reference
    <id>/tests/                  the hidden tests, and test.sh

The grader. A task graded by the trusted pytest gets a test.sh that runs pytest on /tests
and writes 1 to /logs/verifier/reward.txt when every test passes, else 0. A task graded by
a Harbor test.sh of its own (``grader.kind == "script"``) keeps that test.sh, its
``[verifier] env`` and its pass threshold. A task graded by a script whose output a parser
reads (Terminal-Bench's run-tests.sh) is named as not exported: Harbor reads a reward, not
a parser's verdict.

A multi-step task (``Task.steps``) is written as Harbor's ``[[steps]]``: the task.toml gets
``multi_step_reward_strategy`` and one ``[[steps]]`` table per step (its name,
``min_reward``, ``[steps.agent] timeout_sec``, ``[steps.verifier] timeout_sec`` and
``env``), and each step a folder ``steps/<name>/`` with its ``instruction.md``, its
``tests/`` (the step's whole checks: the task's shared tests merged with its own, so the
task needs no ``tests/`` of its own), ``solution/solve.sh`` (the step's reference; none
when the step has none) and ``workdir/`` (the files the step brings, its setup hook among
them). Read back by the Harbor importer, the steps, their instructions, checks, grader
settings, references and files are the same.

The environment written is the one this harness runs (for an imported task, its Dockerfile
as planned for a bwrap sandbox: the files and the replayed RUN steps, not the original
image's package installs). The base image must have the agent's user, uid 1000 (the
harness's base image does; the docker backend builds it with ``python -m
pytest_termrl.sandbox.docker.images.base build``); a workdir other than that user's home is created and
given to the user.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..errors import TaskFormatError
from ..tasks.importers import scan
from ..tasks.model import DEFAULT_WORKDIR, GraderSpec, Task, TaskStep

DEFAULT_BASE_IMAGE = "termrl-base:1"
AGENT_USER, AGENT_UID = "user", 1000
SETUP_FILE = "termrl-setup.sh"
"""The setup script's name in the build context, and (under /tmp) in the image while it runs."""
EXPORTED_GRADERS = ("pytest", "script")
"""Grader kinds a Harbor test.sh can stand for: the trusted pytest's, and a Harbor test.sh itself."""
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


def _toml_table(pairs) -> str:
    """An inline table of string keys (quoted) to strings or numbers."""
    items = [f"{_toml_string(k)} = {_toml_string(v) if isinstance(v, str) else repr(float(v))}" for k, v in pairs]
    return "{ " + ", ".join(items) + " }" if items else "{}"


def _min_reward(pairs: tuple[tuple[str, float], ...]) -> str:
    """Harbor's ``min_reward``: a number for the step's reward alone, else a table of named rewards."""
    if len(pairs) == 1 and pairs[0][0] == "reward":
        return repr(float(pairs[0][1]))
    return _toml_table(pairs)


def _step_tables(step: TaskStep) -> list[str]:
    lines = ["", "[[steps]]", f"name = {_toml_string(step.name)}"]
    if step.min_reward:
        lines.append(f"min_reward = {_min_reward(step.min_reward)}")
    if step.agent_timeout_s:
        lines += ["", "[steps.agent]", f"timeout_sec = {float(step.agent_timeout_s)}"]
    verifier = []
    if step.grader.timeout_s:
        verifier.append(f"timeout_sec = {float(step.grader.timeout_s)}")
    if step.grader.env:
        verifier.append(f"env = {_toml_table(step.grader.env)}")
    if verifier:
        lines += ["", "[steps.verifier]", *verifier]
    return lines


def task_toml(task: Task) -> str:
    lines = ['version = "1.0"']
    if task.steps:
        lines.append(f"multi_step_reward_strategy = {_toml_string(task.step_reward_strategy)}")
    lines += [
        "",
        "[metadata]",
        f"difficulty = {_toml_string(task.difficulty)}",
        f"category = {_toml_string(task.source.original_category or task.category)}",
        "tags = [" + ", ".join(_toml_string(t) for t in task.tags) + "]",
        f"termrl_id = {_toml_string(task.id)}",
        "",
        "[agent]",
        f"user = {_toml_string(task.user or AGENT_USER)}",
    ]
    if task.agent_timeout_s:
        lines.append(f"timeout_sec = {float(task.agent_timeout_s)}")
    grader_user = task.verifier_user or ("root" if task.whole_machine else AGENT_USER)
    lines += ["", "[verifier]", f"user = {_toml_string(grader_user)}"]
    # A multi-step task's grader settings are its steps' (written with each step below).
    if task.grader.timeout_s and not task.steps:
        lines.append(f"timeout_sec = {float(task.grader.timeout_s)}")
    scripts = [g for g in ([s.grader for s in task.steps] or [task.grader]) if g.kind == "script"]
    if scripts and scripts[0].reward_threshold != 1.0:
        lines.append(f"pass_threshold = {float(scripts[0].reward_threshold)}")
    if task.grader.env and not task.steps:
        lines.append(f"env = {_toml_table(task.grader.env)}")
    lines += ["", "[environment]", f"workdir = {_toml_string(task.workdir)}", 'network_mode = "no-network"']
    if task.resources is not None:
        for name in ("cpus", "memory_mb", "storage_mb"):
            value = getattr(task.resources, name)
            if value is not None:
                lines.append(f"{name} = {int(value) if name != 'cpus' or float(value).is_integer() else value}")
    for step in task.steps:
        lines += _step_tables(step)
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
    owner = task.user or f"{AGENT_UID}:{AGENT_UID}"  # a whole-machine task's user, else the agent's
    if workdir != DEFAULT_WORKDIR or task.whole_machine:
        # The base image has the agent's home; another workdir is made here and given to the task's user.
        lines += [f"WORKDIR {workdir}", f"RUN chown {owner} ."]
    if has_files:
        lines.append(f"COPY --chown={owner} home/ {workdir}/")
    lines += [f"USER {owner}", f"WORKDIR {workdir}"]
    if has_setup(task):
        lines += [f"COPY --chown={owner} {SETUP_FILE} /tmp/{SETUP_FILE}",
                  f"RUN bash /tmp/{SETUP_FILE} && rm -f /tmp/{SETUP_FILE}"]
    return "\n".join(lines) + "\n"


def has_setup(task: Task) -> bool:
    return task.setup_script is not None and task.setup_script.is_file()


def _check_grader(task: Task, grader: GraderSpec, tests_dir: Path | None, step: TaskStep | None = None) -> Path:
    """The folder of the hidden tests; TaskFormatError when the grader or the tests cannot be exported."""
    its, which = (f"step {step.name!r}: its", f"step {step.name!r}") if step is not None else ("its", "a task")
    if grader.kind not in EXPORTED_GRADERS:
        raise TaskFormatError(
            task.root, None,
            f"{its} grader is a {grader.kind!r} grader of its own format; only graders that write a reward "
            "(the trusted pytest's, a Harbor test.sh) are exported",
        )
    if tests_dir is None or not tests_dir.is_dir():
        raise TaskFormatError(task.root, "tests", f"missing: {which} without hidden tests cannot be exported")
    return tests_dir


def _write_tests(grader: GraderSpec, tests_dir: Path, target: Path, label: str, workdir: str) -> None:
    """The hidden tests into ``target``: a Harbor test.sh kept as it is, else one that runs pytest on them."""
    shutil.copytree(tests_dir, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    test_sh = target / "test.sh"
    if grader.kind != "script":
        test_sh.write_text(TEST_SH.format(id=label, workdir=workdir))
    test_sh.chmod(0o755)


def _write_solution(text: str | None, folder: Path) -> None:
    folder.mkdir(parents=True)
    solve = folder / "solve.sh"
    if text is None:
        solve.write_text("#!/bin/bash\nexit 1\n")
    else:
        solve.write_text("#!/bin/bash\n" + text)
    solve.chmod(0o755)


def export_task(task: Task, out: Path, base_image: str = DEFAULT_BASE_IMAGE) -> Path:
    """Write one task as ``out/<task id>/``; raise TaskFormatError naming what cannot be exported."""
    if task.steps:
        for step in task.steps:
            _check_grader(task, step.grader, step.tests_dir, step)
    else:
        tests_dir = _check_grader(task, task.grader, task.tests_dir)
    target = out / task.id
    if target.exists():
        shutil.rmtree(target)
    (target / "environment").mkdir(parents=True)
    (target / "task.toml").write_text(task_toml(task))
    env_dir = task.environment_dir
    if env_dir is not None and not (env_dir.is_dir() and any(env_dir.iterdir())):
        env_dir = None  # a missing or empty environment folder: nothing to copy
    has_files = env_dir is not None
    if env_dir is not None:
        shutil.copytree(env_dir, target / "environment" / "home", symlinks=True)
    (target / "environment" / "Dockerfile").write_text(dockerfile(task, base_image, has_files))
    if has_setup(task):
        assert task.setup_script is not None
        shutil.copyfile(task.setup_script, target / "environment" / SETUP_FILE)
    if task.steps:
        for step in task.steps:
            folder = target / "steps" / step.name
            folder.mkdir(parents=True)
            (folder / "instruction.md").write_text(step.instruction.rstrip("\n") + "\n")
            _write_tests(step.grader, step.tests_dir, folder / "tests", f"{task.id}, step {step.name}", task.workdir)
            if step.solution_script is not None:
                _write_solution(step.solution_text(), folder / "solution")
            if step.files is not None:  # the files the step brings and its setup hook, as Harbor places them
                shutil.copytree(step.files, folder / "workdir", symlinks=True)
        return target
    (target / "instruction.md").write_text(task.instruction.rstrip("\n") + "\n")
    _write_tests(task.grader, tests_dir, target / "tests", task.id, task.workdir)
    _write_solution(task.solution_text() if task.solution_script is not None else None, target / "solution")
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
