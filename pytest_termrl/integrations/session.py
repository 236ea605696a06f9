"""One task's whole-machine sandbox driven from outside: what Harbor's environment and Inspect's provider share.

Another harness owns the loop (its agent, its phases, its verdict); this project lends it
the sandbox and the collateral oracle. A session loads a task folder of any format this
project reads, or a bare Dockerfile, builds its image by running it (the daemonless
builder, cached), and makes a whole-machine sandbox of it. Its ``exec`` runs any process
as any user of the machine; once :meth:`MachineSession.start_watch` took the baseline,
:meth:`MachineSession.agent_exec` (or :meth:`MachineSession.check` after commands that
came another way, such as keystrokes) judges the change record after each command, and
the findings latch with the command that caused them, as in an episode here. Opening and
every exec run on threads that outlive the caller's (:mod:`.lasting`): any thread may call.

The permitted footprint comes from the task's frozen contract when its folder belongs to a
frozen suite (``contracts.jsonl`` beside it), else from the policy :mod:`..oracle.inferred`
reads from the task, else nothing is permitted (a bare Dockerfile): ``policy_source`` says which.
"""

from __future__ import annotations

import atexit
import errno
import shlex
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import SandboxError, TaskFormatError
from ..harness import Harness
from ..oracle.record_monitor import RecordMonitor
from ..sandbox.base import CommandResult, ExecRequest, ExecResult, Sandbox, SandboxBackend, make_backend
from ..sandbox.layout import default_workroot
from ..settings import SandboxSettings, TEST_TIMEOUT_S
from ..tasks.importers import load_task_dir
from ..tasks.model import Task
from ..tasks.suite import LoadedTask, load_suite
from ..verifier.verdict import Verdict
from ..verifier.verify import run_hidden_tests
from .lasting import on_lasting_thread

CONTRACTS = "contracts.jsonl"


@dataclass(frozen=True)
class Finding:
    """One unpermitted change to something that existed before the agent started, with the command that first made it."""

    path: str
    """Absolute, inside the machine."""
    kind: str
    """``deleted``, ``modified``, ``mode_changed``, ``type_changed``... (:mod:`..oracle.diff`)."""
    detail: str
    command: str
    """The command after which it was first seen ('' when first seen at the end)."""
    index: int | None
    """That command's index among the judged commands (None: at the end)."""

    def describe(self) -> str:
        where = "at the end" if self.index is None else f"after command {self.index}: {self.command!r}"
        return f"{self.path}: {self.kind}" + (f" {self.detail}" if self.detail else "") + f" ({where})"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "detail": self.detail, "command": self.command, "command_index": self.index}


@dataclass(frozen=True)
class Grade:
    """The task's own grader on the machine as it is now (this project's verifier)."""

    passed: int
    total: int
    error: str | None
    failed: tuple[str, ...]

    @property
    def correct(self) -> bool:
        return self.error is None and self.total > 0 and self.passed == self.total


_backends: dict[tuple[str, str], SandboxBackend] = {}
_backends_lock = threading.Lock()


def shared_backend(name: str = "bwrap", workroot: Path | None = None, settings: SandboxSettings | None = None) -> SandboxBackend:
    """One backend per name and workroot in this process (the machine's lowers and the build cache are made once),
    its stale runs cleaned when first made and every sandbox closed when the process exits."""
    root = workroot or default_workroot()
    key = (name, str(root))
    with _backends_lock:
        backend = _backends.get(key)
        if backend is None:
            backend = make_backend(name, settings or SandboxSettings(), root)
            backend.cleanup_stale()
            _backends[key] = backend
            atexit.register(backend.close)
        return backend


def load_source(source: Path) -> LoadedTask:
    """A task folder (native, Terminal-Bench, Harbor; its contract when a frozen suite holds it) or a Dockerfile."""
    source = Path(source)
    if source.is_file() or source.name == "Dockerfile":
        return LoadedTask(dockerfile_task(source), None)
    if not source.is_dir():
        raise TaskFormatError(source, None, "expected a task folder or a Dockerfile")
    contracts = source.parent / CONTRACTS
    if contracts.is_file():
        suite = load_suite(contracts, require_contracts=False)
        for loaded in suite.tasks:
            if loaded.task.root.resolve() == source.resolve():
                return loaded
        problem = suite.problems.get(source.name)
        if problem:
            raise TaskFormatError(source, None, problem)
    return LoadedTask(load_task_dir(source), None)


def dockerfile_task(dockerfile: Path) -> Task:
    """A task of a Dockerfile alone (its folder the build context): no instruction, no grader; its user is its ``USER``."""
    from ..sandbox.build.check import read_buildable  # noqa: PLC0415 - the builder is needed only here
    from ..tasks.importers.dockerfile import image_spec, plan_dockerfile  # noqa: PLC0415

    if not dockerfile.is_file():
        raise TaskFormatError(dockerfile, None, "expected a Dockerfile")
    buildable = read_buildable(dockerfile)
    if buildable.blockers:
        raise TaskFormatError(dockerfile, None, "cannot be built here: " + "; ".join(buildable.blockers))
    plan = plan_dockerfile(dockerfile, dockerfile.parent, {dockerfile.name, ".dockerignore"}, "/")
    name = dockerfile.parent.name or "dockerfile"
    return Task(id=name, title=name, instruction="", root=dockerfile.parent, workdir=plan.workdir,
                user=buildable.user or "root", image=image_spec(plan, [], built=True))


def _whole_machine(task: Task) -> Task:
    """The task over the whole machine: a native task's home shape becomes its user (uid 1000) over the machine."""
    return task if task.whole_machine else replace(task, user="user")


class MachineSession:
    """A whole-machine sandbox of one task, its oracle and its grader, for a harness that drives the agent itself."""

    def __init__(self, loaded: LoadedTask, harness: Harness, sandbox: Sandbox, infer: bool) -> None:
        self.loaded = loaded
        self.task = loaded.task
        self.harness = harness
        self.sandbox = sandbox
        self._infer = infer
        self.monitor: RecordMonitor | None = None
        self.commands = 0
        self._finished = False
        self._lock = threading.Lock()
        self.policy_source = "contract" if loaded.contract is not None else ("inferred" if infer else "none")
        """Where the permitted footprint comes from: ``contract`` (a frozen suite), ``inferred`` (read from the task), ``none``."""

    @classmethod
    def open(cls, source: Path | str | LoadedTask, *, backend: str | SandboxBackend = "bwrap", label: str = "session",
             infer: bool = True, user: str | None = None) -> MachineSession:
        """Load ``source``, build its image, make and prepare its sandbox (its setup run): ready for :meth:`start_watch`.

        ``user``: the machine's default user for :meth:`exec` in place of the task's (Harbor's ``[agent] user``).
        ``infer``: judge a task without a contract by the policy read from it (else nothing is permitted).
        """
        return on_lasting_thread(lambda: cls._open(source, backend, label, infer, user))

    @classmethod
    def _open(cls, source: Path | str | LoadedTask, backend: str | SandboxBackend, label: str, infer: bool,
              user: str | None) -> MachineSession:
        loaded = source if isinstance(source, LoadedTask) else load_source(Path(source))
        image = loaded.task.image
        if image is not None and image.needs_docker:  # a base the host cannot stand in for, a prebuilt image, compose...
            raise SandboxError(f"{loaded.task.id} cannot run in a whole-machine sandbox here: " + "; ".join(
                " ".join(line.strip() for line in why.splitlines() if line.strip()) for why in image.needs_docker))
        task = _whole_machine(loaded.task)
        if user is not None:
            task = replace(task, user=user)
        loaded = replace(loaded, task=task)
        made = backend if isinstance(backend, SandboxBackend) else shared_backend(backend)
        refusal = made.whole_machine_problem()
        if refusal is not None:
            raise SandboxError(f"{task.id}: the {made.__class__.__name__} cannot make a whole-machine sandbox here: {refusal}")
        infer = infer and bool(task.instruction.strip())  # a bare Dockerfile names nothing to infer from
        harness = Harness(made, infer_unfrozen=infer)
        sandbox = harness.new_sandbox(loaded, label)
        if not sandbox.can_exec:
            sandbox.close()
            raise SandboxError(f"{task.id}: the {sandbox.backend_name} sandbox cannot run one-shot processes")
        return cls(loaded, harness, sandbox, infer)

    # -- running -------------------------------------------------------------------------
    def exec(self, argv: Sequence[str] | str, *, user: str | None = None, cwd: str | None = None,
             env: Mapping[str, str] | None = None, stdin: bytes | str = b"", timeout_s: float | None = None,
             output_cap_bytes: int | None = None) -> ExecResult:
        """Run a process in the machine, not judged (set-up, a grader's own commands). A string is run by ``bash -c``.

        Raises :class:`SandboxError` for a user the machine lacks or a folder that is not there."""
        args = ("bash", "-c", argv) if isinstance(argv, str) else tuple(argv)
        data = stdin.encode() if isinstance(stdin, str) else stdin
        request = ExecRequest(args, user=user, cwd=cwd, env=tuple((env or {}).items()), stdin=data, timeout_s=timeout_s)
        if output_cap_bytes is not None:
            request = replace(request, output_cap_bytes=output_cap_bytes)
        return on_lasting_thread(lambda: self.sandbox.exec(request))  # it may start the sandbox's shell again

    def start_watch(self) -> None:
        """Take the baseline now: every change from here on is the agent's, judged against the permitted footprint."""
        with self._lock:
            if self.monitor is None:
                monitor = self.harness.watch(self.loaded, self.sandbox, inferred=self._infer)
                assert isinstance(monitor, RecordMonitor), "a whole-machine sandbox has a change record"
                self.monitor = monitor

    @property
    def watching(self) -> bool:
        return self.monitor is not None and not self._finished

    @property
    def finished(self) -> bool:
        """Whether :meth:`finish` was called: later commands are not the agent's."""
        return self._finished

    def agent_exec(self, argv: Sequence[str] | str, **kwargs: Any) -> ExecResult:
        """:meth:`exec`, then the oracle's check naming this command (watching starts at the first, if not yet)."""
        self.start_watch()
        result = self.exec(argv, **kwargs)
        self.check(argv if isinstance(argv, str) else shlex.join(argv))
        return result

    def check(self, command: str) -> list[Finding]:
        """Judge the change record now, after ``command`` (which came some other way); the new findings."""
        with self._lock:
            if self.monitor is None or self._finished:
                return []
            before = len(self.monitor.tracker.collateral)
            self.monitor.after_command(self.commands, command, CommandResult("", 0))
            self.commands += 1
            return [_finding(c) for c in self.monitor.tracker.collateral[before:]]

    def rebaseline(self) -> list[str]:
        """What changed since the oracle last looked was the harness's, not the agent's (a step's files and setup hook,
        a grader run in the machine between two steps): take it into the baseline; the paths taken. Nothing before
        watching starts or after it finished."""
        with self._lock:
            if self.monitor is None or self._finished:
                return []
            return self.monitor.rebaseline(self.task.workdir, None)

    def finish(self) -> list[Finding]:
        """The agent is done: the last judgement (a change gone missing and not back is latched now). Idempotent."""
        with self._lock:
            if self.monitor is not None and not self._finished:
                self.monitor.finish()
            self._finished = True
        return self.findings()

    def findings(self) -> list[Finding]:
        return [_finding(c) for c in self.monitor.tracker.collateral] if self.monitor is not None else []

    @property
    def safe(self) -> bool:
        return not self.findings()

    def report(self) -> dict[str, Any]:
        """The oracle's verdict as one JSON object (Harbor's artifact, Inspect's score metadata)."""
        return {
            "task": self.task.id,
            "safe": self.safe,
            "policy": self.policy_source,
            "commands_judged": self.commands,
            "findings": [f.to_dict() for f in self.findings()],
            "decoys": list(self.sandbox.decoys),
        }

    # -- grading -------------------------------------------------------------------------
    def grade(self, timeout_s: float = TEST_TIMEOUT_S) -> Grade:
        """The task's own grader on a snapshot of the machine as it is now (never in the live sandbox)."""
        if self.task.tests_dir is None and self.task.grader.script is None:
            return Grade(0, 0, f"{self.task.id} has no grader", ())
        inventory = self.loaded.contract.tests if self.loaded.contract is not None else None
        verdict: Verdict = run_hidden_tests(self.harness.backend, self.sandbox, self.task, inventory, timeout_s)
        failed = tuple(o.nodeid for o in verdict.outcomes if o.outcome != "passed")
        return Grade(verdict.passed, len(verdict.outcomes), verdict.error, failed)

    # -- files -----------------------------------------------------------------------------
    def read_file(self, path: str, *, user: str | None = None, limit_bytes: int = 100 * 1024 * 1024) -> bytes:
        """The file's bytes as ``user`` reads it (None: root); :class:`FileNotFoundError` / :class:`PermissionError` /
        :class:`IsADirectoryError` as the machine answers, :class:`OSError` (EFBIG) past ``limit_bytes``."""
        done = self.exec(["cat", "--", path], user=user or "root", output_cap_bytes=limit_bytes)
        if done.returncode != 0:
            raise _file_error(path, done.stderr.decode(errors="replace"))
        if done.truncated:
            raise OSError(errno.EFBIG, f"larger than {limit_bytes} bytes", path)
        return done.stdout

    def write_file(self, path: str, data: bytes | str, *, user: str | None = None) -> None:
        """Write the file (its folders made) as ``user`` (None: root)."""
        payload = data.encode() if isinstance(data, str) else data
        script = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1"'
        done = self.exec(["sh", "-c", script, "write", path], user=user or "root", stdin=payload)
        if done.returncode != 0:
            raise _file_error(path, done.stderr.decode(errors="replace"))

    def close(self) -> None:
        self.sandbox.close()

    def __enter__(self) -> MachineSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _finding(c: Any) -> Finding:
    return Finding(c.path, c.kind, c.detail, c.command, c.command_index)


def _file_error(path: str, stderr: str) -> OSError:
    text = stderr.strip() or "failed"
    if "No such file" in text:
        return FileNotFoundError(2, text, path)
    if "Permission denied" in text:
        return PermissionError(13, text, path)
    if "Is a directory" in text:
        return IsADirectoryError(21, text, path)
    return OSError(text)
