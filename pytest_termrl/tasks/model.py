"""The Task: one terminal task, whatever format it was loaded from.

Frozen and free of pytest so that the plugin, the training loop and scripts share it. What
an importer learns about a task beyond the native fields (where it came from, how its own
grader runs, the image it was written for) is typed here too: :class:`TaskSource`,
:class:`GraderSpec` and :class:`ImageSpec`. A native task leaves them at their defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

DEFAULT_WORKDIR = "/home/user"


@dataclass(frozen=True)
class TaskSource:
    """Where a task was read from: its format, its own id and file, and what the import cached."""

    format: str = "native"
    """'native', 'terminal_bench', 'harbor' or 'dockerless'."""
    id: str | None = None
    """The task's id in its own format (before it was made a test-id-safe ``Task.id``)."""
    path: str | None = None
    """Where it was read when that is not ``Task.root``: a DockerLess row's ``file:line``."""
    original_category: str | None = None
    """The category as the format wrote it (``Task.category`` is that made a marker word)."""
    import_cache: Path | None = None
    """The cache folder the importer wrote the task's environment, setup and reference wrapper into."""


@dataclass(frozen=True)
class GraderSpec:
    """How a task is graded: the grader kind and what that kind needs."""

    kind: str = "pytest"
    """'pytest': the hidden tests run with the trusted pytest; 'script': the task's own grader
    script (Harbor's tests/test.sh) decides by the reward it writes (verifier/script_grader.py);
    'parsed': the task's own script (Terminal-Bench's run-tests.sh) decides by its output, read
    by ``parser``."""
    parser: str | None = None
    """The parser read on a parsed grader's output (Terminal-Bench's ``parser_name``: 'pytest')."""
    script: Path | None = None
    """The grader script (script graders; else ``tests_dir/test.sh`` when present)."""
    reward_threshold: float = 1.0
    """The reward a script grader's run must reach to pass."""
    env: tuple[tuple[str, str], ...] = ()
    """(name, value) pairs set for the grader script (Harbor's ``[verifier] env``)."""
    timeout_s: float | None = None
    """The format's own time limit for its grader (None: the verifier's default)."""
    note: str | None = None
    """Set when the task's own grader needs the network but its tests run offline with the
    trusted pytest ("offline-runnable via trusted pytest")."""
    blockers: tuple[str, ...] = ()
    """Why the grader cannot run offline here."""
    agent_output: tuple[str, ...] = ()
    """Where a parsed grader's script runs the agent's code outside pytest, before or after its
    summary, one line each (:mod:`.importers.grader_trust`): that output is parsed too."""


@dataclass(frozen=True)
class ImageSpec:
    """The container image an imported task was written for, and why a bwrap sandbox cannot stand in for it."""

    docker_image: str | None = None
    """A prebuilt image the task names (Harbor's ``[environment] docker_image``, when not a generic base)."""
    build_context: Path | None = None
    """The folder holding the task's Dockerfile: the build context of its image."""
    base_images: tuple[str, ...] = ()
    """The images its Dockerfile builds FROM (or the prebuilt image)."""
    env: tuple[tuple[str, str], ...] = ()
    """(name, value) pairs of the Dockerfile's ENV lines."""
    needs_docker: tuple[str, ...] = ()
    """Why a bwrap sandbox cannot stand in for the image; empty when it can."""
    dockerfile: Path | None = None
    """The Dockerfile a whole-machine bwrap sandbox builds by running it (:mod:`pytest_termrl.sandbox.build`); None: none to build."""
    build_timeout_s: float | None = None
    """How long its build may take (Harbor's ``[environment] build_timeout_sec``); None: the builder's default."""
    planned: bool = True
    """Whether the importer's static plan (environment files and a setup script) reproduces the Dockerfile: the docker
    backend uses the plan over its own base image only then, and builds the Dockerfile with the engine otherwise."""


@dataclass(frozen=True)
class Resources:
    """What a task asks of its sandbox (Harbor's ``cpus``, ``memory_mb``, ``storage_mb``); None where it says nothing.

    The sandbox and the verifier's sandbox enforce ``cpus`` and ``memory_mb`` in place of the
    harness's defaults, capped at the machine's CPUs and memory; ``storage_mb`` is recorded as
    not enforced (:func:`pytest_termrl.sandbox.limits.task_settings`).
    """

    cpus: float | None = None
    memory_mb: int | None = None
    storage_mb: int | None = None


GRADED_IN_THE_AGENTS_CONTAINER = ("terminal_bench", "harbor")
"""The formats whose own harness runs the grader in the agent's container (Harbor in its shared mode)."""


@dataclass(frozen=True)
class Healthcheck:
    """Harbor's ``[environment.healthcheck]``: a command that must pass in the prepared sandbox before the agent starts.

    Harbor's semantics and defaults (those of Docker's HEALTHCHECK, in seconds): during the
    start period a failure does not count and the next try comes after ``start_interval_s``;
    after it, ``retries`` failures in a row, ``interval_s`` apart, make the environment
    unhealthy; one try may take ``timeout_s``. Tasks use it as a wait for a service and as a
    pre-agent hook (fetching inputs, making folders); either way it runs once, as setup does.
    """

    command: str
    interval_s: float = 5.0
    timeout_s: float = 30.0
    start_period_s: float = 0.0
    start_interval_s: float = 5.0
    retries: int = 3
    source: str = "task.toml [environment.healthcheck]"
    """Where it was read, for the message of a check that never passes."""


SETUP_HOOK = "setup.sh"
"""The file among a step's own files that is its setup hook (Harbor's reserved ``steps/<name>/workdir/setup.sh``)."""


@dataclass(frozen=True)
class TaskStep:
    """One step of a multi-step task (Harbor's ``[[steps]]``): its own instruction, checks and reference.

    The steps of a task run in order in one sandbox; each is graded by its own checks when
    the agent ends it (:mod:`pytest_termrl.verifier.steps` says how the results combine).
    """

    name: str
    instruction: str
    """What the agent is told when the step begins."""
    tests_dir: Path
    """The step's checks: its own tests/ over the task's (a merged copy when both exist)."""
    grader: GraderSpec
    """How the step's checks are graded, as for a task of one step."""
    solution_script: Path | None = None
    """The step's reference (the oracle agent's command for this step); None when it has none."""
    agent_timeout_s: float | None = None
    """The format's time limit for the agent in this step (recorded, not enforced)."""
    min_reward: tuple[tuple[str, float], ...] = ()
    """(reward name, least value) pairs: a step whose reward falls below one ends the episode
    there (Harbor's ``min_reward``; the name ``reward`` is the step's reward itself)."""
    files: Path | None = None
    """The files the step brings (Harbor's ``steps/<name>/workdir/``), placed in the workdir by the harness
    before the step's agent begins (None: it brings none). A ``setup.sh`` among them is the step's setup
    hook (:attr:`setup_hook`)."""
    healthcheck: Healthcheck | None = None
    """The step's own check (Harbor's ``[steps.healthcheck]``), tried once its files and hook are in place and
    before its agent begins, over the task's; one that never passes ends the episode there."""

    @property
    def setup_hook(self) -> str | None:
        """The step's setup hook, relative to the workdir: Harbor's reserved ``workdir/setup.sh``, run in the
        workdir as the agent's user once the step's files are placed (None: the step has none)."""
        return SETUP_HOOK if self.files is not None and (self.files / SETUP_HOOK).is_file() else None

    def solution_text(self) -> str:
        """The step's reference as one bash script ('' when it has none)."""
        if self.solution_script is None or not self.solution_script.is_file():
            return ""
        return self.solution_script.read_text()


STEP_REWARD_STRATEGIES = ("mean", "final")
"""How a multi-step task's reward is made of its steps' (Harbor's ``multi_step_reward_strategy``)."""


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    instruction: str
    root: Path
    difficulty: str = "medium"
    category: str = "general"
    tags: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    """Paths (relative to the workdir) of files the instruction names and the task reads."""
    workdir: str = DEFAULT_WORKDIR
    requires: tuple[str, ...] = ("bash",)
    max_commands: int | None = None
    environment_dir: Path | None = None
    setup_script: Path | None = None
    setup_timeout_s: float | None = None
    """Seconds its setup may take (None: the run's --termrl-setup-timeout, default 180)."""
    solution_script: Path | None = None
    tests_dir: Path | None = None
    source: TaskSource = TaskSource()
    """Where the task was read from (``source.format`` says which loader)."""
    grader: GraderSpec = GraderSpec()
    """How the verifier grades it (``grader.kind`` picks the grader)."""
    image: ImageSpec | None = None
    """The image an imported task was written for (None: a native task, or none)."""
    setup_blockers: tuple[str, ...] = ()
    """Why its setup cannot run offline."""
    dropped_steps: tuple[str, ...] = ()
    """Steps of its image build left out on bwrap, and why (harness-only tools, packages the host has)."""
    agent_timeout_s: float | None = None
    """The format's own time limit for the agent (recorded, not enforced)."""
    allow_internet: bool | None = None
    """What the format says about the agent's network (Harbor's ``[environment] allow_internet``; recorded)."""
    network_mode: str | None = None
    """Harbor's ``[environment] network_mode`` ('public', 'no-network', 'allowlist'; recorded: the sandbox has none)."""
    resources: Resources | None = None
    """The sandbox resources the task asks for: its cpus and memory are the sandbox's limits (``enforced_limits`` says how)."""
    healthcheck: Healthcheck | None = None
    """Run after the setup, before the agent's first command; a check that never passes fails the setup."""
    verifier_mode: str = "shared"
    """Harbor's ``[verifier] environment_mode``: 'shared' (the grader sees the agent's workdir) or
    'separate' (it sees only ``artifacts`` of it, as a verifier environment of its own would)."""
    artifacts: tuple[str, ...] = ()
    """Harbor's top-level ``artifacts``: absolute paths (in the workdir, or anywhere over the whole machine) kept from
    the agent's environment when it ends (into the run directory; the only files a separate verifier gets)."""
    notes: tuple[str, ...] = ()
    """What the importer assumed or changed, each a readable line."""
    steps: tuple[TaskStep, ...] = ()
    """A multi-step task's steps, in order (empty: a task of one step). ``instruction`` is then
    the first step's, ``grader`` and ``tests_dir`` the last step's, ``solution_script`` every
    step's reference in order."""
    step_reward_strategy: str = "mean"
    """How the steps' rewards make the task's reward: 'mean' or 'final' (:data:`STEP_REWARD_STRATEGIES`)."""
    user: str | None = None
    """Who the setup and the agent run as, named as the task's harness would: 'root', an account of the
    machine, or 'UID[:GID]'. None: the native shape (uid 1000 owning /home/user, the oracle watching that
    home). A task that names a user runs in a whole-machine sandbox (:attr:`whole_machine`)."""
    verifier_user: str | None = None
    """Who the grader runs as in a whole-machine sandbox (None: root, as Terminal-Bench and Harbor grade)."""
    extra: dict = field(default_factory=dict, compare=False, hash=False)
    """Free-form data a third-party loader attaches; the loaders here leave it empty."""

    @property
    def backend(self) -> str:
        """'docker' when a bwrap sandbox cannot stand in for the task's image (``image.needs_docker``), else 'bwrap'."""
        return "docker" if self.image is not None and self.image.needs_docker else "bwrap"

    @property
    def whole_machine(self) -> bool:
        """Whether the task runs over the whole machine: its user's view, every change anywhere recorded and judged."""
        return self.user is not None

    @property
    def runs_as_root(self) -> bool:
        """Whether the agent is root inside, as far as the task says (a native task's uid 1000 is not)."""
        return self.user is not None and self.user.split(":")[0] in ("root", "0")

    @property
    def graded_beside_the_agent(self) -> bool:
        """Whether the grader reaches what the agent left running (its servers), as the authors' harness grades.

        Terminal-Bench and Harbor (shared mode) run the tests in the agent's container after
        the agent ends; here the grader still runs in a fresh sandbox on the snapshot, but in
        the agent's network, and the agent's processes are stopped only once it is done.
        """
        in_container = self.source.format in GRADED_IN_THE_AGENTS_CONTAINER or self.whole_machine
        return in_container and self.verifier_mode == "shared" and not self.steps

    def solution_text(self) -> str:
        """The reference solution as one bash script ('' when the task has none)."""
        if self.solution_script is None or not self.solution_script.is_file():
            return ""
        return self.solution_script.read_text()

    def step_task(self, index: int) -> "Task":
        """Step ``index`` of a multi-step task as a task of one step: its instruction, checks and reference."""
        step = self.steps[index]
        return replace(
            self, instruction=step.instruction, tests_dir=step.tests_dir, grader=step.grader,
            solution_script=step.solution_script, agent_timeout_s=step.agent_timeout_s, steps=(),
        )
