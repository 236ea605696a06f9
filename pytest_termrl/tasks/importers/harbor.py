"""Harbor task directories: task.toml, instruction.md, environment/, solution/solve.sh, tests/test.sh.

Harbor's grader is a script: ``tests/test.sh`` runs in the task's container with the tests
at ``/tests`` and writes a reward to ``/logs/verifier/reward.txt`` (a number) or
``/logs/verifier/reward.json`` (``{"reward": x, ...}``). Imported, the task keeps that grader:
``Task.grader.kind == "script"`` and :mod:`pytest_termrl.verifier.script_grader` runs test.sh
in the verifier's fresh sandbox and passes the episode when the reward reaches the
threshold (1.0, or ``[verifier] pass_threshold`` in task.toml). The fields of task.toml
that change a trial are read by :mod:`.harbor_config` (workdir, network, users, resources,
timeouts, environment variables), each honoured or refused by name.

Most Harbor test.sh files first install pytest over the network (uv, pip, apt) and then
write ``1`` when pytest passes and ``0`` otherwise. Such a script cannot run offline, but
its verdict can: when test.sh is only "install pytest, run it on /tests, write the reward
from its exit status", the tests run with the harness's trusted pytest instead
(``grader.kind == "pytest"``, reported as offline-runnable via trusted pytest).

The environment is read from ``environment/Dockerfile`` (its build context is
``environment/``) as for Terminal-Bench, or ``[environment] docker_image`` names a prebuilt
image. The reference ``solution/solve.sh`` runs as its own bash script in the workdir, with
the rest of ``solution/`` beside it (references to ``/solution/`` are pointed there).

A multi-step task (``[[steps]]``) keeps its steps in ``steps/<name>/``: each has its own
``instruction.md`` (required), ``tests/`` (layered over the task's ``tests/``: the step's
files win, so its own test.sh does when it has one) and ``solution/solve.sh`` (the step's
reference). The environment is the task's, built once for all steps. Each step's merged
tests and reference wrapper are written into an import cache folder of their own, and the
step's grader is found as a task's is (:func:`script_grader_analysis`). A step's
``workdir/`` holds the files it brings (``TaskStep.files``, copied into the cache too): the
episode places them in the workdir before the step's agent begins and runs the reserved
``workdir/setup.sh`` there, as Harbor does, and the collateral oracle takes what the harness
placed into its baseline (:mod:`pytest_termrl.sandbox.placing`). A step's ``environment/``
is not Harbor's (the environment is the task's, built once) and is refused by name, as is a
``workdir/`` entry that cannot be placed (a FIFO, a device, a socket).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tomllib
from dataclasses import replace
from pathlib import Path, PurePosixPath

from ...errors import TaskFormatError

from ..files import check_instruction, check_tree, read_text, read_toml, regular_file
from ..model import GraderSpec, Task, TaskSource, TaskStep
from ...sandbox.build.check import read_buildable
from .cache import digest_tree, materialise, materialise_plan
from .dockerfile import DockerPlan, image_spec, is_generic_base, plan_dockerfile
from .harbor_config import HarborConfig, StepConfig, read_config
from .metadata import difficulty_of, inputs_named, marker_word, requires_from, string_list, task_id_from
from .reference import solution_wrapper
from .scripts import analyse_script, missing_test_imports
from .standin_check import unserved_network
from .terminal_bench import _compose_blockers
from .toolchains import task_toolchains

FORMAT = "harbor"
DEFAULT_WORKDIR = "/app"
TEST_SCRIPT = "test.sh"
_HARBOR_KEYS = {"version", "schema_version", "metadata", "verifier", "agent", "environment", "solution", "task", "steps"}


def is_harbor_dir(path: Path) -> bool:
    """task.toml in Harbor's shape: a tests/test.sh or solution/solve.sh, or Harbor's tables and no native 'id'."""
    toml_path = path / "task.toml"
    if not toml_path.is_file():
        return False
    if (path / "tests" / TEST_SCRIPT).is_file() or (path / "solution" / "solve.sh").is_file():
        return True
    try:
        data = tomllib.loads(read_text(toml_path))
    except (tomllib.TOMLDecodeError, TaskFormatError):
        return False
    return "id" not in data and bool(_HARBOR_KEYS & set(data))


def _table(path: Path, data: dict, key: str) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise TaskFormatError(path, key, "expected a table")
    return value


def script_grader_analysis(test_sh: Path, tests_dir: Path) -> tuple[str, str | None, list[str]]:
    """(grader, note, blockers): the script when it runs offline; else the trusted pytest when equivalent;
    else the script, whose network installs the offline stand-ins meet or are blockers by line."""
    findings = analyse_script(test_sh.read_text(errors="replace"))
    if findings.offline:
        return "script", None, []
    pytest_shaped = bool(findings.pytest) and not findings.other and bool(findings.rewards) and any(tests_dir.glob("test_*.py"))
    if pytest_shaped:
        blockers = []
        missing = missing_test_imports(tests_dir)
        if missing:
            blockers.append(f"the tests import {', '.join(missing)}, which the trusted toolchain lacks")
        note = (
            f"offline-runnable via trusted pytest ({TEST_SCRIPT} needs the network: {findings.network[0]}; "
            "its reward is 1 when pytest passes, so every test passing is reward 1)"
        )
        unmet = unserved_network(test_sh.read_text(errors="replace"))
        if unmet:  # the trusted toolchain runs the tests anyway; a failing reference is then explained
            note += f"; not met offline, the trusted toolchain's versions serve instead: {unmet[0]}"
        return "pytest", note, blockers
    unserved = unserved_network(test_sh.read_text(errors="replace"))
    return "script", None, [f"network installs in its grader: {line}" for line in unserved[:3]]


def load_harbor_task(task_dir: Path) -> Task:
    """Read one Harbor task directory; raise TaskFormatError naming the file and field."""
    task_dir = Path(task_dir)
    toml_path = task_dir / "task.toml"
    data = read_toml(toml_path, what="a Harbor task's task.toml")
    meta = _table(toml_path, data, "metadata")
    task_table = _table(toml_path, data, "task")
    environment = _table(toml_path, data, "environment")
    config = read_config(toml_path, data)

    instruction_path = task_dir / "instruction.md"
    notes: list[str] = list(config.notes)
    if config.steps:
        instruction = ""  # the first step's, once the steps are read
        if os.path.lexists(instruction_path):
            notes.append("instruction.md at the task's root is not sent: a multi-step task's instructions are its steps'")
    else:
        instruction = check_instruction(instruction_path, None, read_text(instruction_path, what="the task's instruction for the agent"))

    difficulty = difficulty_of(toml_path, meta.get("difficulty", data.get("difficulty")), notes)
    category = meta.get("category", "general")
    if not isinstance(category, str) or not category.strip():
        raise TaskFormatError(toml_path, "metadata.category", "expected a non-empty string")
    tags = string_list(toml_path, "metadata.tags", meta.get("tags", task_table.get("keywords")))
    image = environment.get("docker_image")
    if image is not None and (not isinstance(image, str) or not image.strip()):
        raise TaskFormatError(toml_path, "environment.docker_image", "expected an image name")
    default_workdir = config.workdir or DEFAULT_WORKDIR

    tests_dir = task_dir / "tests"
    test_sh = tests_dir / TEST_SCRIPT
    if not config.steps:
        if not os.path.lexists(test_sh):
            raise TaskFormatError(test_sh, None, "missing: a Harbor task's grader is tests/test.sh")
        regular_file(test_sh, what="the Harbor grader script")
    check_tree(task_dir, tests_dir)

    env_dir = task_dir / "environment"
    dockerfile = env_dir / "Dockerfile"
    needs_docker: list[str] = []
    buildable = None
    if dockerfile.is_file():
        plan = plan_dockerfile(
            dockerfile, env_dir, {"Dockerfile", "docker-compose.yaml", "docker-compose.yml", ".dockerignore"}, default_workdir,
            workdir_override=config.workdir,
        )
        needs_docker += _compose_blockers(env_dir)
        buildable = read_buildable(dockerfile)
    elif image:
        plan = DockerPlan(dockerfile=None, workdir=default_workdir, bases=[image])
        if config.workdir is None:
            notes.append(f"prebuilt image {image}: the workdir {DEFAULT_WORKDIR} is assumed")
    else:
        raise TaskFormatError(dockerfile, None, "missing: a Harbor task needs environment/Dockerfile or [environment] docker_image")
    if image and not is_generic_base(image):
        needs_docker.append(f"{toml_path}: [environment] docker_image = {image} (a prebuilt image)")
    # Over the whole machine, as Harbor runs it (the Dockerfile built by running it, or a generic prebuilt image the host
    # stands in for), unless the task uses what a whole-machine sandbox lacks here. A separate verifier there grades the
    # agent's image with the declared artifacts alone over it: a verifier with an image of its own keeps the native shape
    # (a fresh sandbox stands in for that image) unless the task names a user, when it is refused by name below.
    names_user = config.agent_user is not None or config.verifier_user is not None
    machine_shaped = not config.steps and (config.verifier_mode != "separate" or names_user or _verifier_image_is_agents(task_dir))
    built = buildable is not None and not buildable.blockers and machine_shaped
    generic = buildable is None and image is not None and is_generic_base(image) and machine_shaped
    if built or generic:
        needs_docker = needs_docker + config.image_refusals
        config.agent_user = (config.agent_user or _agent_account(config.agent_user_named)
                             or (buildable.user if buildable is not None else "") or "root")
    else:
        if config.verifier_user is not None and config.agent_user is None:
            config.agent_user = "user"  # the grader as another user needs the whole machine; the agent stays uid 1000
        needs_docker = (list(buildable.blockers) if buildable is not None and buildable.blockers else plan.blockers) + needs_docker + config.image_refusals
    needs_docker += _verifier_environment(task_dir, config, plan.workdir, notes, whole_machine=config.agent_user is not None)

    task_id = task_id_from(task_dir.name)
    label = f"Harbor task {task_dir.name}"
    steps: tuple[TaskStep, ...] = ()
    inputs_text = instruction
    if config.steps:
        steps = load_steps(task_dir, config, plan.workdir, task_id, label)
        instruction, inputs_text = steps[0].instruction, "\n".join(step.instruction for step in steps)
        last = steps[-1].grader  # the task as a whole is graded as its last step is
        grader, grader_script, graded_tests, grader_env, grader_timeout = last.kind, last.script, steps[-1].tests_dir, last.env, last.timeout_s
        grader_note = "; ".join(f"step {step.name}: {step.grader.note}" for step in steps if step.grader.note) or None
        grader_blockers = [f"step {step.name}: {why}" for step in steps for why in step.grader.blockers]
        references = [step.solution_text() for step in steps]
        solution = "\n".join(references) if any(references) else None
        reference = "".join(f"# step {step.name}\n{text}" for step, text in zip(steps, references)) if solution else None
        if os.path.lexists(task_dir / "solution"):
            notes.append("solution/ at the task's root is not run: a multi-step task's references are its steps'")
    else:
        solution_dir = task_dir / "solution"
        solution, reference = _reference(solution_dir, plan.workdir, f"{label} (solution/solve.sh)", config)
        grader, grader_note, grader_blockers = script_grader_analysis(test_sh, tests_dir)
        grader_script, graded_tests = test_sh, tests_dir
        grader_env, grader_timeout = tuple(config.verifier_env.items()), config.verifier_timeout
    # The compilers and runtimes its image installs and its test.sh scripts run: the host's on bwrap, else refused here.
    if steps:  # read from the merged copy, named by the task's own file
        scripts: list[Path | tuple[Path, Path]] = [
            (step.grader.script, step_grader_source(task_dir, step.name))
            for step in steps
            if step.grader.kind == "script" and step.grader.script is not None  # a script grader always names its script
        ]
    else:
        scripts = [test_sh] if grader == "script" else []
    toolchains = task_toolchains(replace(plan, missing_toolchains=[]) if built else plan, needs_docker, scripts)
    files = materialise_plan(FORMAT, task_id, task_dir, plan, str(dockerfile), reference)
    title = task_table.get("description") if isinstance(task_table.get("description"), str) else None
    return Task(
        id=task_id,
        title=(title or re.sub(r"\s+", " ", instruction.splitlines()[0]))[:80],
        instruction=instruction,
        root=task_dir,
        difficulty=difficulty,
        category=marker_word(category),
        tags=tags,
        inputs=inputs_named(inputs_text, files.environment_dir, plan.workdir),
        workdir=plan.workdir,
        requires=requires_from(solution or "", "\n".join(plan.setup)) + toolchains,
        environment_dir=files.environment_dir,
        setup_script=files.setup_script,
        setup_timeout_s=config.build_timeout,
        solution_script=files.solution_script,
        tests_dir=graded_tests,
        source=TaskSource(format=FORMAT, id=str(task_table.get("name") or task_dir.name), original_category=category, import_cache=files.folder),
        grader=GraderSpec(
            kind=grader,
            script=grader_script,
            reward_threshold=config.threshold,
            env=grader_env,
            timeout_s=grader_timeout,
            note=grader_note,
            blockers=tuple(grader_blockers) + tuple(config.refusals),
        ),
        image=image_spec(plan, needs_docker, image if image and not is_generic_base(image) else None, built=built,
                         build_timeout_s=config.build_timeout),
        dropped_steps=tuple(plan.dropped),
        agent_timeout_s=config.agent_timeout,
        allow_internet=config.allow_internet,
        network_mode=config.network_mode,
        resources=config.resources,
        user=config.agent_user,
        verifier_user=config.verifier_user,
        healthcheck=config.healthcheck,
        verifier_mode=config.verifier_mode,
        artifacts=config.artifacts,
        notes=tuple(notes),
        steps=steps,
        step_reward_strategy=config.step_reward_strategy,
    )


def _agent_account(named: str | None) -> str | None:
    """The account ``[agent] user = "user" | "agent" | 1000`` names in a built image, as an engine's exec takes it: a
    numeric uid needs no account, a name must be one the image has (its Dockerfile's useradd, or the harness's base image's
    'user'), else the sandbox is refused naming it; None when the task names none."""
    return named


def _verifier_image_is_agents(task_dir: Path) -> bool:
    """Whether a separate verifier's own image is the agent's: ``tests/Dockerfile`` says what ``environment/Dockerfile``
    says and copies nothing (its build context is ``tests/``, so a COPY there brings other files)."""
    own, agents = task_dir / "tests" / "Dockerfile", task_dir / "environment" / "Dockerfile"
    if not (own.is_file() and agents.is_file()):
        return False
    text = own.read_text(errors="replace")
    return text.strip() == agents.read_text(errors="replace").strip() and not re.search(r"(?im)^\s*(COPY|ADD)\s", text)


def _verifier_environment(task_dir: Path, config: HarborConfig, workdir: str, notes: list[str], *, whole_machine: bool) -> list[str]:
    """Check the declared artifacts and a separate verifier's environment: what bwrap cannot stand in for (refusals go to ``config``).

    A separate verifier runs in a fresh sandbox that holds, of the agent's workdir, only the
    artifacts; its own image (``tests/Dockerfile``, whose build context is ``tests/``) must be one
    this sandbox stands in for: a generic base whose installs are the grader's tooling or here.
    Over the whole machine the artifacts may lie anywhere, and the separate verifier's machine is
    the agent's image with the artifacts alone over it: its own image must be that one.
    """
    if whole_machine and not config.steps:
        if config.verifier_mode == "separate" and not _verifier_image_is_agents(task_dir):
            config.refusals.append(
                "verifier.environment_mode = 'separate' in a task that runs over the whole machine: its verifier's machine "
                "here is the agent's image with the artifacts, so tests/Dockerfile must be environment/Dockerfile's own text, copying nothing"
            )
        elif config.verifier_mode == "separate":
            notes.append(f"verifier.environment_mode = 'separate': the grader's machine is the image with {', '.join(config.artifacts) or 'nothing'} of the agent's")
        return []
    root = PurePosixPath(workdir)
    for index, source in enumerate(config.artifacts):
        path = PurePosixPath(source)
        if path != root and root not in path.parents:
            config.refusals.append(
                f"artifacts[{index}] = {source!r}: outside the workdir {workdir}, the only part of the agent's environment kept here"
            )
    if config.verifier_mode != "separate":
        return []
    if config.steps:
        config.refusals.append("verifier.environment_mode = 'separate' in a multi-step task: a step's own verifier environment is not run here")
        return []
    tests_dir = task_dir / "tests"
    dockerfile = tests_dir / "Dockerfile"
    kept = ", ".join(config.artifacts) or "nothing"
    if dockerfile.is_file():
        plan = plan_dockerfile(dockerfile, tests_dir, {"Dockerfile", ".dockerignore"}, "/", workdir_override="/")
        notes.append(f"verifier.environment_mode = 'separate': the grader sees {kept} of the workdir (tests/Dockerfile: FROM {plan.bases[0]})")
        return [f"the separate verifier's image: {why}" for why in plan.blockers]
    if not (isinstance(config.verifier_environment, dict) and config.verifier_environment.get("docker_image")):
        config.refusals.append(
            "verifier.environment_mode = 'separate' with neither tests/Dockerfile nor [verifier.environment] docker_image: "
            "there is no environment to run the verifier in (Harbor refuses it too)"
        )
    return []


def _reference(solution_dir: Path, workdir: str, label: str, config: HarborConfig) -> tuple[str | None, str | None]:
    """(solve.sh's text, the wrapper that runs it with its siblings) of a solution/ folder; (None, None) without one."""
    solve = solution_dir / "solve.sh"
    if not os.path.lexists(solve):
        return None, None
    solution = read_text(solve, what="the reference solution, a bash script")
    siblings = {}
    for path in sorted(solution_dir.rglob("*")):
        if path.is_file() and path != solve and "__pycache__" not in path.parts:
            siblings[path.relative_to(solution_dir).as_posix()] = path.read_bytes()
    return solution, solution_wrapper(solution, workdir, label, siblings, rewrite_dir="/solution", env=config.solution_env)


def step_grader_source(task_dir: Path, step: str) -> Path:
    """The task's own test.sh a step is graded by: the step's, else the task's shared one."""
    own = task_dir / "steps" / step / "tests" / TEST_SCRIPT
    return own if own.is_file() else task_dir / "tests" / TEST_SCRIPT


def load_steps(task_dir: Path, config: HarborConfig, workdir: str, task_id: str, label: str) -> tuple[TaskStep, ...]:
    """The steps of a multi-step task from ``steps/<name>/``: instruction, merged tests, grader, reference.

    The merged tests/ (the task's, then the step's over them) and the reference wrappers go
    into an import cache folder of their own; a step without a test.sh in either is refused.
    """
    shared_tests = task_dir / "tests"
    read: list[tuple[StepConfig, Path, str, str | None]] = []
    for step in config.steps:
        folder = task_dir / "steps" / step.name
        if not folder.is_dir():
            raise TaskFormatError(folder, None, f"missing: the folder of step {step.name!r} ([[steps]] in task.toml)")
        if os.path.lexists(folder / "environment"):
            raise TaskFormatError(
                folder / "environment", None,
                "a step has no environment of its own: the task's environment/ is built once for every step; "
                f"the files step {step.name!r} brings go in steps/{step.name}/workdir/ (placed in the workdir before "
                f"the step), its setup in steps/{step.name}/workdir/setup.sh",
            )
        _check_step_files(folder / "workdir", step.name)
        path = folder / "instruction.md"
        text = check_instruction(path, None, read_text(path, what=f"the instruction of step {step.name!r}"))
        step_tests = folder / "tests"
        if not (step_tests / TEST_SCRIPT).is_file() and not (shared_tests / TEST_SCRIPT).is_file():
            raise TaskFormatError(step_tests / TEST_SCRIPT, None, f"missing: step {step.name!r} has no grader (steps/{step.name}/tests/test.sh or tests/test.sh)")
        regular_file(step_tests / TEST_SCRIPT if (step_tests / TEST_SCRIPT).is_file() else shared_tests / TEST_SCRIPT, what="the Harbor grader script")
        check_tree(folder, step_tests)
        _, reference = _reference(folder / "solution", workdir, f"{label}, step {step.name} (steps/{step.name}/solution/solve.sh)", config)
        read.append((step, step_tests, text, reference))

    def build(cache: Path) -> None:
        for index, (step, step_tests, _, reference) in enumerate(read):
            target = cache / f"{index + 1}-{step.name}"
            tests = target / "tests"
            tests.mkdir(parents=True)
            for source in (shared_tests, step_tests):
                if source.is_dir():
                    shutil.copytree(source, tests, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            for folder in [tests, *(p for p in tests.rglob("*") if p.is_dir() and not p.is_symlink())]:
                os.chmod(folder, 0o755)
            if reference is not None:
                (target / "solution.sh").write_text(reference)
            files = task_dir / "steps" / step.name / "workdir"
            if files.is_dir():
                shutil.copytree(files, target / STEP_FILES, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))

    cache = materialise(f"{FORMAT}-steps", task_id, digest_tree(task_dir), build)
    steps = []
    for index, (step, _, text, reference) in enumerate(read):
        target = cache / f"{index + 1}-{step.name}"
        tests = target / "tests"
        kind, note, blockers = script_grader_analysis(tests / TEST_SCRIPT, tests)
        steps.append(TaskStep(
            name=step.name,
            instruction=text,
            tests_dir=tests,
            grader=GraderSpec(
                kind=kind, script=tests / TEST_SCRIPT, reward_threshold=config.threshold, env=tuple(step.verifier_env.items()),
                timeout_s=step.verifier_timeout, note=note, blockers=tuple(blockers),
            ),
            solution_script=target / "solution.sh" if reference is not None else None,
            agent_timeout_s=step.agent_timeout,
            min_reward=step.min_reward,
            files=target / STEP_FILES if (target / STEP_FILES).is_dir() else None,
            healthcheck=step.healthcheck,
        ))
    return tuple(steps)


STEP_FILES = "workdir"
"""A step's folder of the files it brings (``steps/<name>/workdir/``), and its copy's name in the import cache."""


def _check_step_files(files: Path, name: str) -> None:
    """Refuse a step's ``workdir/`` that cannot be placed: not a folder, or holding what is neither a file, a folder nor a link."""
    if not os.path.lexists(files):
        return
    if files.is_symlink() or not files.is_dir():
        raise TaskFormatError(files, None, f"expected a folder: the files step {name!r} brings, placed in the workdir before the step")
    for path in sorted(files.rglob("*")):
        mode = path.lstat().st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            raise TaskFormatError(
                path, None,
                f"cannot be placed: step {name!r}'s workdir/ may hold files, folders and links only (this is neither)",
            )
