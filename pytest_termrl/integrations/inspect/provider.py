"""The ``termrl`` sandbox provider: each Inspect sample in its own whole-machine sandbox, every agent exec judged.

Inspect owns the loop; this provider lends it a :class:`..session.MachineSession` per
sample. The blocking session calls run in worker threads. Judging starts once Inspect's
own set-up of the sample is done (its ``files`` copied, its ``setup`` run, its root-access
probe recorded: Inspect records that decision on the provider object after set-up and
before the solver starts), so set-up is never taken for the agent's work; from then on
each ``exec`` and ``write_file`` is followed by the oracle's check naming the command.
:meth:`TermrlSandbox.finish` ends the agent's turn when the solver ends (:mod:`.solver_end`;
the termrl scorers call it too): the last judgement is made and later execs, the scorers'
own, are not judged.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import threading
from typing import Any, Literal, Union, overload

from anyio import to_thread
from inspect_ai.util import (
    ExecResult,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentLimits,
    SandboxUnavailableError,
    sandboxenv,
)
from pydantic import BaseModel

from ...errors import SandboxError
from ..session import Finding, MachineSession, shared_backend
from .config import TermrlConfig, resolve
from .files import read_bytes, write_bytes
from .outcomes import to_inspect

PROVIDER = "termrl"
_labels = itertools.count()
_SHELLS = {"bash", "sh", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/usr/bin/sh"}


@sandboxenv(name=PROVIDER)
class TermrlSandbox(SandboxEnvironment):
    """One sample's machine: a bwrap (or docker) whole-machine sandbox with its change record watched."""

    def __init__(self, session: MachineSession) -> None:
        super().__init__()
        self.session = session
        self._armed = False
        self._done = False
        self._closed = False
        self._lock = threading.Lock()

    # -- the watch ---------------------------------------------------------------------------
    @property  # type: ignore[override]
    def _root_access(self) -> Any:
        return self.__dict__.get("_root_access_decision")

    @_root_access.setter
    def _root_access(self, decision: Any) -> None:
        # Inspect records its root-access decision after the sample's files and setup, before the solver.
        self.__dict__["_root_access_decision"] = decision
        if decision is not None:
            self.arm()

    def arm(self) -> None:
        """From now on every exec and write is the agent's: the baseline is taken before the next one."""
        self._armed = True

    @property
    def judging(self) -> bool:
        return self._armed and not self._done

    async def finish(self) -> list[Finding]:
        """The agent's turn is over: the last judgement; later execs are not judged. Idempotent."""
        self._done = True
        return await to_thread.run_sync(self.session.finish)

    def report(self) -> dict[str, Any]:
        return self.session.report()

    # -- Inspect's lifecycle -----------------------------------------------------------------
    @classmethod
    def default_concurrency(cls) -> int | None:
        """One sandbox per core: a sample's commands, its baseline reads and its grader all take CPU here."""
        return max(1, os.cpu_count() or 2)

    @classmethod
    def config_files(cls) -> list[str]:
        return ["task.toml", "task.yaml", "Dockerfile"]

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return TermrlConfig(**config)

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        """Refuse early: a config that names nothing loadable, or a host where the backend cannot make a machine."""
        def check() -> None:
            resolved = resolve(config)
            resolved.load()
            problem = shared_backend(resolved.backend).whole_machine_problem()
            if problem is not None:
                raise SandboxUnavailableError(f"the {resolved.backend} backend cannot make a whole-machine sandbox here: {problem}")
        await to_thread.run_sync(check)

    @classmethod
    async def sample_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                          metadata: dict[str, str]) -> dict[str, SandboxEnvironment]:
        label = _label(task_name, metadata.get("__sample_id__"))

        def open_session() -> MachineSession:
            resolved = resolve(config)
            return MachineSession.open(resolved.load(), backend=resolved.backend, label=label, user=resolved.user)

        env = cls(await to_thread.run_sync(open_session))
        if "_root_access" not in vars(SandboxEnvironment):
            env.arm()  # an Inspect that records no decision: judge from the first exec after init
        return {"default": env}

    @classmethod
    async def sample_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                             environments: dict[str, SandboxEnvironment], interrupted: bool) -> None:
        for env in environments.values():
            if isinstance(env, TermrlSandbox):
                await to_thread.run_sync(env.close)

    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        """``inspect sandbox cleanup termrl``: remove sandboxes a killed run left (their owner process is gone)."""
        removed = await to_thread.run_sync(lambda: shared_backend("bwrap").cleanup_stale())
        for name in removed:
            print(f"removed {name}")

    def close(self) -> None:
        """Every process of the machine killed, its folders and mounts removed."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self.session.close()

    # -- exec and files ----------------------------------------------------------------------
    async def exec(self, cmd: list[str], input: str | bytes | None = None, cwd: str | None = None,
                   env: dict[str, str] | None = None, user: str | None = None, timeout: int | None = None,
                   timeout_retry: bool = True, concurrency: bool = True) -> ExecResult[str]:
        """Run ``cmd`` in the machine. A timeout is the command's own (the sandbox does not hang), so it is never retried."""
        data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
        def run() -> Any:
            return self.session.exec(cmd, user=user, cwd=cwd, env=env, stdin=data,
                                     timeout_s=float(timeout) if timeout is not None else None,
                                     output_cap_bytes=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE)
        done = await to_thread.run_sync(self._judged, run, command_text(cmd))
        if isinstance(done, SandboxError):
            where = f" as {user!r}" if user else ""
            return ExecResult(False, 126, "", f"cannot run {shlex.join(cmd)[:200]}{where}: {done}")
        return to_inspect(done, cmd, timeout)

    async def write_file(self, file: str, contents: str | bytes) -> None:
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        done = await to_thread.run_sync(self._judged, lambda: write_bytes(self.session, file, data, None), f"write_file {file}")
        if isinstance(done, SandboxError):
            raise OSError(f"{file}: {done}")

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> Union[str, bytes]:
        """The file's bytes, or its text decoded strictly as UTF-8 with its newlines as they are."""
        limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE
        data = await to_thread.run_sync(self._unavailable_guard, lambda: read_bytes(self.session, file, None, limit))
        return data.decode("utf-8") if text else data

    # -- helpers -----------------------------------------------------------------------------
    def _unavailable_guard(self, call: Any) -> Any:
        if self._closed:
            raise SandboxUnavailableError("the termrl sandbox of this sample is closed")
        return call()

    def _judged(self, call: Any, command: str) -> Any:
        """Run ``call``; while the agent's turn lasts, the baseline first (once) and the oracle's check after it.

        A request the machine cannot serve (a user it lacks, a folder that is not there) gives its SandboxError."""
        judging = self.judging
        if judging:
            self.session.start_watch()
        try:
            return self._unavailable_guard(call)
        except SandboxError as exc:
            if self._closed:
                raise SandboxUnavailableError(str(exc)) from exc
            return exc
        finally:
            if judging:
                self.session.check(command)


def command_text(cmd: list[str]) -> str:
    """How a finding names the command: the script of ``bash [--login] -c SCRIPT`` (the bash tool's shape), else the argv."""
    if len(cmd) >= 3 and cmd[0] in _SHELLS:
        flags = cmd[1:]
        if "-c" in flags:
            at = flags.index("-c")
            if all(f.startswith("-") for f in flags[:at]) and at + 1 < len(flags):
                return flags[at + 1]
    return shlex.join(cmd)


def _label(task_name: str, sample_id: Any) -> str:
    raw = f"inspect-{task_name}-{sample_id if sample_id is not None else ''}"
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", raw)[:60].strip("-") + f"-{next(_labels)}"
