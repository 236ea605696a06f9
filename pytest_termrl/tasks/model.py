"""The Task: one terminal task, whatever format it was loaded from.

Frozen and free of pytest so that the plugin, the training loop and scripts share it. What
an importer learns about a task beyond the native fields (where it came from, how its own
grader runs, the image it was written for) is typed here too: :class:`TaskSource`,
:class:`GraderSpec` and :class:`ImageSpec`. A native task leaves them at their defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Resources:
    """What a task asks of its sandbox (Harbor's ``cpus``, ``memory_mb``, ``storage_mb``); None where it says nothing."""

    cpus: float | None = None
    memory_mb: int | None = None
    storage_mb: int | None = None


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
    """The sandbox resources the task asks for (recorded; the backend's own limits apply)."""
    notes: tuple[str, ...] = ()
    """What the importer assumed or changed, each a readable line."""
    extra: dict = field(default_factory=dict, compare=False, hash=False)
    """Free-form data a third-party loader attaches; the loaders here leave it empty."""

    @property
    def backend(self) -> str:
        """'docker' when a bwrap sandbox cannot stand in for the task's image (``image.needs_docker``), else 'bwrap'."""
        return "docker" if self.image is not None and self.image.needs_docker else "bwrap"

    def solution_text(self) -> str:
        """The reference solution as one bash script ('' when the task has none)."""
        if self.solution_script is None or not self.solution_script.is_file():
            return ""
        return self.solution_script.read_text()
