"""The Sandbox abstraction: what the episode loop needs from any isolation backend.

Backends register under a name (``bwrap``, ``docker``); the plugin picks one with
``--termrl-sandbox`` and a ``pytest_termrl_make_sandbox`` hook may supply another.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Protocol

from ..errors import SandboxError, SetupFailed
from ..tasks.model import Task
from ..registry import Entry, Registry
from ..settings import GiB, MiB, SandboxSettings  # noqa: F401  (the sandbox's section of the settings tree, re-exported)
from .healthcheck import wait_healthy
from .layout import HOME_INSIDE
from .reach import ReachedHome
from .standin_shims import read_log

if TYPE_CHECKING:
    from ..oracle.record import ChangeRecord

@dataclass(frozen=True)
class CommandResult:
    output: str
    exit_code: int | None
    timed_out: bool = False
    shell_restarted: bool = False
    output_truncated: bool = False
    duration_s: float = 0.0


@dataclass(frozen=True)
class ExecRequest:
    """One process run in a live sandbox beside the agent's shell, as another harness asks for it (Harbor's ``exec``,
    Inspect's ``exec``): its own user, folder, variables and standard input, stdout and stderr kept apart."""

    argv: tuple[str, ...]
    user: str | None = None
    """An account of the sandbox's machine, or ``UID[:GID]``; None: the task's user (the agent's)."""
    cwd: str | None = None
    """None: the task's workdir."""
    env: tuple[tuple[str, str], ...] = ()
    """Set over the sandbox's own environment (the image's ``ENV``, the user's ``HOME``, ``PATH``)."""
    stdin: bytes = b""
    timeout_s: float | None = None
    """None: the sandbox's command timeout. At the limit every process the run started is killed."""
    output_cap_bytes: int = 10 * 1024 * 1024
    """Each of stdout and stderr is cut here (``truncated``)."""


@dataclass(frozen=True)
class ExecResult:
    returncode: int | None
    """None: killed at the timeout."""
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    truncated: bool = False
    duration_s: float = 0.0


@dataclass(frozen=True)
class KeystrokeBatch:
    """Keys for the terminal session, as tmux names them, and how long to wait for the screen.

    Each key is one tmux ``send-keys`` argument: a whole argument that is a key name
    (``Enter``, ``C-c``, ``C-d``, ``Escape``, ``Up``, ``Tab``, ``F1``...) is that key; any other
    is typed as text, a newline in it pressing Enter as in a terminal.
    """

    keys: tuple[str, ...]
    max_wait_s: float = 1.0
    """The longest wait for the screen after the last key (a recorded call's ``duration``)."""
    settle: bool = True
    """End the wait early when the shell's prompt is back or the screen has been quiet a moment;
    False: wait the whole ``max_wait_s``."""

    def text(self) -> str:
        """One line for transcripts and the oracle's findings: text as typed, key names in angle brackets."""
        from .keys import describe  # noqa: PLC0415 - the key table is the terminal's

        return describe(self.keys)


@dataclass(frozen=True)
class IsolatedRun:
    """What a one-shot trusted process (the verifier) sent back."""

    returncode: int | None
    payload: bytes
    log: str
    timed_out: bool = False


@dataclass(frozen=True)
class TrustedMount:
    host_path: Path
    sandbox_path: str
    staged: bool = False
    """Content that differs from run to run (a task's tests): a backend may copy it into a
    read-only folder it mounted ahead instead of binding ``host_path`` itself."""


@dataclass(frozen=True)
class LayeredRoot:
    """A whole-machine snapshot to grade: per mount point its layers (the agent's copied upper first), and who grades."""

    slots: tuple[tuple[str, tuple[Path, ...]], ...]
    id_base: int
    """The host id of root inside (:class:`.bwrap.idmap.IdRange`)."""
    uid: int
    gid: int
    user: str
    home: str
    artifacts_only: bool = False
    """The snapshot already holds, of the agent's changes, the declared artifacts alone (a separate verifier's machine
    on an engine whose snapshot is an image: :mod:`.docker.machine_apart`); nothing is left to prune."""


@dataclass(frozen=True)
class IsolatedRequest:
    """One trusted one-shot run (the verifier's), whole: the backend looks nothing up elsewhere."""

    home: Path
    """A snapshot of the agent's home (:meth:`Sandbox.snapshot`): the run's home is a copy of it."""
    argv: list[str]
    mounts: list[TrustedMount]
    secret: bytes
    """Reaches the process on a channel its children cannot read (TERMRL_SECRET_FD)."""
    timeout_s: float
    settings: SandboxSettings
    """The limits it runs under: those of the sandbox the snapshot came from, so a task's cpus and memory hold for its grader."""
    cwd: str = HOME_INSIDE
    network: str | None = None
    """The network it joins (:meth:`Sandbox.grading_network` of the agent's sandbox, to reach what the agent
    left running); None: its own, empty one."""
    root: LayeredRoot | None = None
    """A whole-machine task's snapshot (``home`` is then the snapshot's folder): the run sees the machine
    as the agent left it, with an empty upper layer of its own, as ``root``'s user."""


class ShellChannel(Protocol):
    """One running bash as the shell's protocol sees it: bytes in, merged stdout and stderr out."""

    def send(self, data: bytes) -> None:
        """Write to the shell's stdin; ignored once the shell is gone."""

    def receive(self, timeout_s: float) -> bytes | None:
        """What the shell printed within timeout_s (b"" for nothing); None once its output has ended."""

    def exit_code(self, wait_s: float) -> int | None:
        """The shell's exit status, waiting up to wait_s for it to exit; None if it has not."""

    def kill(self) -> None:
        """Kill the shell and every process the agent started."""

    def release(self) -> None:
        """Free the channel's own pipes or connections; kills nothing."""


class ControlFiles(Protocol):
    """Where the shell's command files and output files live, seen from the harness."""

    def write(self, name: str, text: str) -> None:
        """Put a file the shell reads (a command, the init script, a setup script) in the control folder."""

    def read_output(self, name: str, cap: int) -> tuple[str, bool]:
        """A command's output file, head and tail within ``cap``; ("", False) if there is none to read."""

    def discard(self, n: int) -> str:
        """Drop command n-1's files, and anything the agent left at command n's output, before command n.

        Returns shell code to run before command n's redirection for what cannot be dropped
        from outside at no cost ("" when all is done), so that no extra round trip is needed.
        """


class Sandbox(ABC):
    """One agent's isolated home and persistent shell for one episode."""

    backend_name: str = "?"
    installer_standins: bool = False
    """Whether the agent's shell runs with the offline installer stand-ins (:mod:`.standin_shims`) first on PATH."""

    def __init__(self, settings: SandboxSettings) -> None:
        self.settings = settings
        """The backend's settings; ``prepare`` puts a task's own resources in (:func:`.limits.task_settings`)."""
        self.enforced_limits: dict[str, str] = {}
        """What the backend enforced and how (``memory``, ``cpu``, ...), with what the task asked
        (``task_resources``), what was capped at the machine's amount (``capped``) and what was not
        enforced (``storage``)."""
        self._setup_stood_in = 0
        """How many of :meth:`stood_in`'s lines the setup script and healthcheck caused (they come first)."""

    @property
    @abstractmethod
    def home(self) -> Path:
        """Host path of the agent's home, for the harness's manifests and faults (root rights)."""

    @property
    def home_owner(self) -> tuple[int, int]:
        """The host ids that own what the harness puts in the home (decoys, a fault's objects): the agent's as it is
        seen inside."""
        return self.settings.agent_uid, self.settings.agent_gid

    @contextmanager
    def reach_home(self) -> Iterator[ReachedHome]:
        """The agent's workdir as the harness reaches it to break it on purpose and check it (the fault families),
        while the sandbox lives or after its processes stopped; a whole-machine sandbox's lives in its overlays."""
        yield ReachedHome(self.home, *self.home_owner, HOME_INSIDE)

    @abstractmethod
    def prepare(self, task: Task) -> None:
        """Apply the task's resources, copy its environment into the home and run its setup script as the agent's user."""

    @abstractmethod
    def run(self, command: str, timeout_s: float | None = None) -> CommandResult:
        """Run one command in the persistent shell; never raises for anything the command does."""

    has_terminal: bool = False
    """Whether :meth:`send_keys` works here: a terminal session on a pseudo-terminal inside the sandbox."""

    def send_keys(self, batch: KeystrokeBatch) -> CommandResult:
        """Type ``batch`` into the sandbox's terminal session (started on first use) and return the screen.

        The output is the lines that scrolled off since the last look, then the screen; the exit
        code is None (a terminal has none), ``timed_out`` says the wait ran to ``max_wait_s``
        while output was still coming. Never raises for anything typed.
        """
        raise NotImplementedError(f"the {self.backend_name} sandbox has no terminal session")

    can_exec: bool = False
    """Whether :meth:`exec` works here: one-shot processes as any user of the machine, beside the shell."""

    def exec(self, request: ExecRequest) -> ExecResult:
        """Run ``request`` inside this sandbox (same filesystem, processes, network and limits as the agent's shell).

        Raises :class:`SandboxError` for a user the machine lacks or a folder that is not there;
        never for anything the process does.
        """
        raise NotImplementedError(f"the {self.backend_name} sandbox runs no one-shot processes")

    @abstractmethod
    def stop_processes(self) -> None:
        """Kill every process in the sandbox (the episode is over); the home stays for grading."""

    def change_record(self) -> "ChangeRecord | None":
        """The upper layers that hold every change made in this sandbox (a whole-machine sandbox); None: the home alone is watched."""
        return None

    def layered_root(self, snapshot: Path, user: str | None) -> LayeredRoot | None:
        """How the verifier sees :meth:`snapshot`'s copy, for a whole-machine sandbox (None: a copy of the home)."""
        return None

    def image_layers(self) -> list[Path]:
        """The layers a built image lays under this sandbox, topmost first, as host folders (empty: no built image)."""
        return []

    def storage_exhausted(self) -> bool:
        """Whether the agent filled the space its sandbox gives it (a whole-machine sandbox's upper layers): the episode ends."""
        return False

    decoys: list[str] = []
    """Decoys the sandbox planted itself while preparing (a whole-machine sandbox plants before its shell starts)."""

    def grading_network(self) -> str | None:
        """What a verifier's run joins to reach the servers the agent left running here (None: it cannot)."""
        return None

    names_agent_processes: bool = False
    """Whether :meth:`agent_pids` names the agent's processes (bwrap): the oracle then follows kernel events."""

    def agent_pids(self) -> list[int]:
        """Every process of the agent's now, for the oracle; empty where the backend cannot name them."""
        return []

    @property
    def control_files(self) -> ControlFiles | None:
        """The shell's command and output folders, where the stand-ins keep their log; None where there are none."""
        return None

    @abstractmethod
    def snapshot(self, dest: Path) -> Path:
        """Copy the home, byte for byte and without following links, to dest; return it."""

    @abstractmethod
    def close(self) -> None:
        """Kill every process the episode left and remove what the sandbox created."""

    def run_setup_script(self, task: Task, files: ControlFiles, ctl_inside: str) -> None:
        """Run the task's setup script, then its healthcheck, in the agent's shell; a failure is the task's, with its output."""
        if task.setup_script is not None:
            files.write("setup.sh", task.setup_script.read_text(errors="surrogateescape"))  # byte for byte
            timeout_s = task.setup_timeout_s or self.settings.setup_timeout_s
            result = self.run(f"bash {ctl_inside}/setup.sh", timeout_s=timeout_s)
            if result.exit_code != 0 or result.timed_out:
                raise SetupFailed(task.setup_script, result.exit_code, timeout_s if result.timed_out else None, result.output)
        if task.healthcheck is not None:
            wait_healthy(self.run, task.healthcheck)
        if task.setup_script is not None or task.healthcheck is not None:
            self._setup_stood_in = len(self.stood_in())

    def stood_in(self) -> list[str]:
        """What the offline installer stand-ins did in this sandbox, one line each; the setup script's begin ``setup:``.

        Read from the log the stand-ins keep in the shell's output folder (the agent's user
        writes it): informational, never a verdict. Empty where the shell has no stand-ins.
        """
        files = self.control_files
        if not self.installer_standins or files is None:
            return []
        try:
            lines = read_log(files)
        except (OSError, SandboxError):  # an engine that could not hand the file back: no list, no failure
            return []
        setup = self._setup_stood_in
        return [f"setup: {line}" for line in lines[:setup]] + lines[setup:]

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SandboxBackend(ABC):
    """Makes sandboxes, and runs the trusted one-shot processes of the verifier."""

    name: str = "?"

    def __init__(self, settings: SandboxSettings, workroot: Path) -> None:
        self.settings = settings
        self.workroot = workroot

    @abstractmethod
    def create(self, label: str, task: Task | None = None) -> Sandbox:
        """A new sandbox; label names it in logs and on disk. ``task``: the task it is for, when the
        backend makes another kind for it (a whole-machine task's, :attr:`.Task.whole_machine`)."""

    @abstractmethod
    def run_isolated(self, request: IsolatedRequest) -> IsolatedRun:
        """Run the request's argv as the agent's user in a fresh sandbox whose home is a copy of its home.

        The secret reaches the process on a channel its children cannot read; the process
        answers on another private channel, returned as ``payload``. Environment variables
        TERMRL_SECRET_FD and TERMRL_RESULT_FD name the two file descriptors.
        """

    grader_joins_agent_network: bool = True
    """Whether a verifier's run can join the agent's network (:meth:`Sandbox.grading_network`) on this backend."""
    runs_task_images: bool = False
    """Whether it runs a task's own image as its engine builds it (docker), so a task the host cannot stand in for plays."""

    @classmethod
    def whole_machine_problem(cls) -> str | None:
        """Why this backend cannot make whole-machine sandboxes here (what is missing, how to get it); None when it can."""
        return f"the {cls.name} backend does not offer whole-machine sandboxes"

    def cleanup_stale(self) -> list[str]:
        """Remove what killed runs left behind; return what was removed."""
        return []

    def close(self) -> None:
        """Remove what the backend still holds and let go of its connections; it is not used after."""


BackendFactory = Callable[[SandboxSettings, Path], SandboxBackend]
BACKENDS: Registry[BackendFactory] = Registry("sandbox backend", {
    "bwrap": Entry("pytest_termrl.sandbox.bwrap.backend", "BwrapBackend"),  # the default: bubblewrap, no daemon
    "docker": Entry("pytest_termrl.sandbox.docker.backend", "DockerBackend", extra="docker"),  # a Docker engine, local or remote
})
"""Every backend by name, loaded when chosen; a plugin adds one with :func:`register_backend`."""


def register_backend(name: str, factory: BackendFactory) -> None:
    BACKENDS.register(name, factory)


def backend_names() -> list[str]:
    return BACKENDS.names()


def make_backend(name: str, settings: SandboxSettings, workroot: Path) -> SandboxBackend:
    return BACKENDS.get(name)(settings, workroot)


def task_image_refusal(name: str) -> str | None:
    """Why the backend named ``name`` cannot play a task whose image the host cannot stand in for; None when it can, or
    when the backend is not one of the table's classes."""
    factory = BACKENDS.get(name) if name in BACKENDS.names() else None
    if isinstance(factory, type) and issubclass(factory, SandboxBackend) and not factory.runs_task_images:
        return f"the {name} backend stands the host in for a task's image, and cannot for this one: run it with --termrl-sandbox=docker"
    return None


def whole_machine_refusal(name: str) -> str | None:
    """Why the backend named ``name`` cannot run a whole-machine task here, asked before any sandbox is made.

    None when it can, or when the backend is not one of the table's classes (a plugin's
    factory: its sandbox says so when it is made).
    """
    if name not in BACKENDS.names():
        return None
    factory = BACKENDS.get(name)
    if isinstance(factory, type) and issubclass(factory, SandboxBackend):
        return factory.whole_machine_problem()
    return None
