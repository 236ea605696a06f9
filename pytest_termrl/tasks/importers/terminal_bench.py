"""Terminal-Bench task directories: task.yaml, Dockerfile, solution.sh|yaml, run-tests.sh, tests/.

The task becomes a :class:`Task` whose workdir is the image's WORKDIR (``/app`` for every
Terminal-Bench image), so instructions, references and tests keep their absolute paths;
the sandbox presents the agent's home at that path (see ``docs`` in the importers package).

- Environment: the files the Dockerfile COPYs into the workdir are gathered into a cached
  ``environment/``; its RUN steps that install nothing become a ``setup.sh`` replayed as the
  agent's user. Package installs the host already satisfies (and Terminal-Bench's own tmux
  and asciinema) are dropped; anything else (a specific base image, a package the sandbox
  lacks, a file copied outside the workdir, several compose services) means bwrap cannot
  stand in for the image: the task is marked ``backend="docker"`` with the reasons.
- Grader: in Terminal-Bench the grader is ``run-tests.sh``, run with ``$TEST_DIR`` pointing
  at the tests, and its output is read by the parser ``parser_name`` names. Where that is
  only "install pytest, run it on tests/test_*.py", the hidden tests run here with the
  harness's trusted pytest instead ("offline-runnable via trusted pytest"; a module the
  trusted toolchain lacks is then a blocker). Any other run-tests.sh (``*_test.py`` files,
  a build, another language's tests) is itself the grader: ``grader.kind == "parsed"``,
  run by :mod:`pytest_termrl.verifier.script_grader` with the tests and the script at
  ``/tests``, its verdict the named parser's reading of its output (a network install in
  it that the verifier's offline stand-ins cannot meet is a blocker naming the line; a parser name the verifier has no parser for is refused
  by the verifier and by the admission, naming it).
- Toolchains: a compiler or runtime the image installs (``apt-get install golang-go``) or the
  grader script runs (``go test``, ``cargo test``, ``make``, ``javac``; :mod:`.toolchains`) is
  the host's on bwrap, recorded in ``requires``; when the sandbox lacks it, the task is
  refused at load, naming the Dockerfile's or the script's line, the command and the Debian
  package to install. A task whose image bwrap cannot stand in for anyway (say ``FROM
  golang:1.22``) is left to the docker backend, its image bringing its toolchains.
- Reference: ``solution.sh`` (or the commands of ``solution.yaml``) runs as its own bash
  script in the workdir, as Terminal-Bench runs it.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

from ...errors import TaskFormatError
from ..files import check_instruction, check_tree, read_text
from ..model import GraderSpec, Task, TaskSource
from ...sandbox.build.check import read_buildable
from .cache import digest_tree, materialise, materialise_plan
from .dockerfile import DockerPlan, image_spec, plan_dockerfile
from .grader_trust import agent_code_around_summary
from .metadata import difficulty_of, inputs_named, marker_word, number, requires_from, string_list, task_id_from
from .reference import solution_wrapper
from .scripts import ScriptFindings, analyse_script, missing_test_imports
from .standin_check import unserved_network
from .tb_scripts import inlined, missing_scripts
from .toolchains import task_toolchains

FORMAT = "terminal_bench"
META_FILES = {
    "task.yaml", "solution.sh", "solution.yaml", "run-tests.sh", "tests", "Dockerfile",
    "docker-compose.yaml", "docker-compose.yml", ".dockerignore",
}
DEFAULT_WORKDIR = "/app"


def is_terminal_bench_dir(path: Path) -> bool:
    return os.path.lexists(path / "task.yaml")


def _yaml(path: Path):
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML ships with the harness's environment
        raise TaskFormatError(path, None, "reading Terminal-Bench tasks needs PyYAML (pip install pyyaml)") from None
    try:
        return yaml.safe_load(read_text(path, what="a YAML file"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise TaskFormatError(path, None, f"not valid YAML{where} ({getattr(exc, 'problem', None) or exc})") from None


def _solution(task_dir: Path) -> tuple[str | None, str | None]:
    """(script text, file name) of the reference, or (None, None) when the task has none."""
    sh = task_dir / "solution.sh"
    if os.path.lexists(sh):
        return read_text(sh, what="the reference solution, a bash script"), sh.name
    yml = task_dir / "solution.yaml"
    if not yml.is_file():
        return None, None
    data = _yaml(yml)
    if not isinstance(data, list) or not data:
        raise TaskFormatError(yml, None, "expected a list of steps, each with a 'command'")
    commands = []
    for index, step in enumerate(data):
        if isinstance(step, str):
            commands.append(step)
        elif isinstance(step, dict) and isinstance(step.get("command"), str) and step["command"].strip():
            commands.append(step["command"])
        else:
            raise TaskFormatError(yml, f"[{index}].command", "expected a non-empty string")
    return "\n".join(commands) + "\n", yml.name


def _compose_blockers(task_dir: Path) -> list[str]:
    for name in ("docker-compose.yaml", "docker-compose.yml"):
        path = task_dir / name
        if path.is_file():
            data = _yaml(path)
            services = data.get("services") if isinstance(data, dict) else None
            if not isinstance(services, dict) or not services:
                raise TaskFormatError(path, "services", "expected a mapping of at least one service")
            if len(services) > 1:
                return [f"{path}: {len(services)} services ({', '.join(sorted(services))}); only single-container tasks run here"]
    return []


_NON_DEFAULT_TEST_FILE = re.compile(r"(?<![\w/.-])(?:[\w./$-]*/)?(?!test_)[\w-]+\.py\b")


def _pytest_shaped(findings: ScriptFindings, tests_dir: Path) -> bool:
    """run-tests.sh only installs and runs pytest, on test_*.py files: the trusted pytest can stand in for it."""
    if findings.other or not findings.pytest or not any(tests_dir.glob("test_*.py")):
        return False
    return not any(_NON_DEFAULT_TEST_FILE.search(line.split(": ", 1)[1]) for line in findings.pytest)


def grader_analysis(script: Path | None, tests_dir: Path, parser: str = "pytest") -> tuple[str, str | None, list[str]]:
    """(grader kind, note, blockers) for a classic task.

    The trusted pytest on the tests folder is preferred where it is equivalent: the
    parser is pytest and run-tests.sh only installs pytest and runs it on test_*.py files
    (or there is no run-tests.sh). Otherwise run-tests.sh itself is the grader, its output
    read by the named parser ('parsed').
    """
    raw = script.read_text(errors="replace") if script is not None else None
    text = inlined(raw, tests_dir) if raw is not None else None
    findings = analyse_script(text) if text is not None else None
    if script is None or findings is None or (parser == "pytest" and _pytest_shaped(findings, tests_dir)):
        blockers: list[str] = []
        note = None
        if script is not None and raw is not None and text is not None and findings is not None and findings.network:
            shared = sorted(missing_scripts(raw, tests_dir))
            read_as = f", with Terminal-Bench's {' and '.join(shared)} read in," if shared else ""
            note = f"offline-runnable via trusted pytest ({script.name}{read_as} needs the network: {findings.network[0]})"
            unmet = unserved_network(text)
            if unmet:  # the trusted toolchain runs the tests anyway; a failing reference is then explained
                note += f"; not met offline, the trusted toolchain's versions serve instead: {unmet[0]}"
        missing = missing_test_imports(tests_dir)
        if missing:
            blockers.append(f"the tests import {', '.join(missing)}, which the trusted toolchain lacks")
        return "pytest", note, blockers
    unserved = unserved_network(text or "")
    return "parsed", None, [f"network installs in its grader: {line}" for line in unserved[:3]]


def _with_shared_scripts(task_dir: Path, tests_dir: Path, scripts: dict[str, str]) -> Path:
    """The tests folder a script grader gets: the task's own, or a cached copy with Terminal-Bench's shared scripts beside
    its tests (``scripts``: those run-tests.sh runs from $TEST_DIR and the task does not ship)."""
    if not scripts:
        return tests_dir

    def build(folder: Path) -> None:
        shutil.copytree(tests_dir, folder / "tests", symlinks=True)
        for name, text in scripts.items():
            (folder / "tests" / name).write_text(text)
            os.chmod(folder / "tests" / name, 0o755)

    extra = "\0".join(f"{name}\0{text}" for name, text in sorted(scripts.items())).encode()
    return materialise("terminal-bench-tests", task_id_from(task_dir.name), digest_tree(tests_dir, extra), build) / "tests"


def load_terminal_bench_task(task_dir: Path) -> Task:
    """Read one Terminal-Bench task directory; raise TaskFormatError naming the file and field."""
    task_dir = Path(task_dir)
    yaml_path = task_dir / "task.yaml"
    data = _yaml(yaml_path)
    if not isinstance(data, dict):
        raise TaskFormatError(yaml_path, None, "expected a mapping of fields")
    instruction = data.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise TaskFormatError(yaml_path, "instruction", "expected a non-empty string")
    instruction = check_instruction(yaml_path, "instruction", instruction)
    notes: list[str] = []
    difficulty = difficulty_of(yaml_path, data.get("difficulty"), notes)
    category = data.get("category", "general")
    if not isinstance(category, str) or not category.strip():
        raise TaskFormatError(yaml_path, "category", "expected a non-empty string")
    tags = string_list(yaml_path, "tags", data.get("tags"))
    agent_timeout = number(yaml_path, "max_agent_timeout_sec", data.get("max_agent_timeout_sec"))
    test_timeout_s = number(yaml_path, "max_test_timeout_sec", data.get("max_test_timeout_sec"))
    parser = data.get("parser_name", "pytest")
    if not isinstance(parser, str):
        raise TaskFormatError(yaml_path, "parser_name", "expected a string")

    tests_dir = task_dir / "tests"
    run_tests = task_dir / "run-tests.sh"
    if not run_tests.is_file() and (not tests_dir.is_dir() or not any(tests_dir.glob("test_*.py"))):
        raise TaskFormatError(tests_dir, None, "missing: expected the tests as tests/test_*.py, or a run-tests.sh that runs them")
    if not tests_dir.is_dir():
        raise TaskFormatError(tests_dir, None, "missing: expected a tests/ folder beside run-tests.sh (Terminal-Bench copies it to $TEST_DIR)")
    check_tree(task_dir, tests_dir)
    solution, solution_name = _solution(task_dir)

    dockerfile = task_dir / "Dockerfile"
    buildable = None
    if dockerfile.is_file():
        plan = plan_dockerfile(dockerfile, task_dir, META_FILES, DEFAULT_WORKDIR)
        buildable = read_buildable(dockerfile)
        needs_docker = list(buildable.blockers) + _compose_blockers(task_dir)
    else:
        plan = DockerPlan(dockerfile=None, workdir=DEFAULT_WORKDIR)
        notes.append(f"no Dockerfile: a plain Linux with the workdir {DEFAULT_WORKDIR} is assumed")
        needs_docker = _compose_blockers(task_dir)
    built = buildable is not None and not needs_docker
    grader_kind, grader_note, grader_blockers = grader_analysis(run_tests if run_tests.is_file() else None, tests_dir, parser)
    # A built image names a toolchain it lacks when its step runs; the grader's own commands are checked now.
    toolchains = task_toolchains(replace(plan, missing_toolchains=[]) if built else plan, needs_docker,
                                 [run_tests] if grader_kind == "parsed" else [])
    if not run_tests.is_file():
        notes.append("no run-tests.sh: the tests run with pytest, as Terminal-Bench does by default")
    agent_output = agent_code_around_summary(read_text(run_tests), plan.workdir) if grader_kind == "parsed" else ()
    if grader_kind == "parsed":
        tests_dir = _with_shared_scripts(task_dir, tests_dir, missing_scripts(read_text(run_tests), tests_dir))
    notes += [f"run-tests.sh: {line}" for line in agent_output]

    task_id = task_id_from(task_dir.name)
    label = f"Terminal-Bench task {task_dir.name}"
    reference = solution_wrapper(solution, plan.workdir, f"{label} ({solution_name})") if solution is not None else None
    files = materialise_plan(FORMAT, task_id, task_dir, plan, f"{dockerfile}", reference)
    first_line = instruction.strip().splitlines()[0]
    return Task(
        id=task_id,
        title=re.sub(r"\s+", " ", first_line)[:80],
        instruction=instruction.strip(),
        root=task_dir,
        difficulty=difficulty,
        category=marker_word(category),
        tags=tags,
        inputs=inputs_named(instruction, files.environment_dir, plan.workdir),
        workdir=plan.workdir,
        requires=requires_from(solution or "", "\n".join(plan.setup)) + toolchains,
        environment_dir=files.environment_dir,
        setup_script=files.setup_script,
        solution_script=files.solution_script,
        tests_dir=tests_dir,
        source=TaskSource(format=FORMAT, id=task_dir.name, original_category=category, import_cache=files.folder),
        grader=GraderSpec(
            kind=grader_kind,
            script=run_tests if grader_kind == "parsed" else None,
            parser=parser if grader_kind == "parsed" else None,
            timeout_s=test_timeout_s,
            note=grader_note,
            blockers=tuple(grader_blockers),
            agent_output=agent_output,
        ),
        image=image_spec(plan, needs_docker, built=built),
        dropped_steps=tuple(plan.dropped),
        agent_timeout_s=agent_timeout,
        notes=tuple(notes),
        # as Terminal-Bench runs the agent and its tests: root in the task's image, or its Dockerfile's USER (over the whole machine)
        user=(buildable.user if buildable is not None and buildable.user else "root"),
    )
