"""Harbor's environment on this project's whole-machine sandbox, with the collateral oracle inside Harbor's verdict.

``harbor run -e pytest_termrl.integrations.harbor:TermrlEnvironment`` (or
``--environment-import-path``) makes one :class:`..session.MachineSession` per trial: the
task folder Harbor holds is loaded by this project's loaders (the Harbor format
included), its Dockerfile run by the daemonless builder, and the machine started in a
sandbox without network. Harbor's ``exec`` and file transfers become processes in it, as
the user Harbor names, with Harbor's timeouts, the offline installer stand-ins first on
``PATH`` (as for this project's own agents: ``curl ... | sh``, ``uvx``, ``pip install`` of
what is present succeed offline). The oracle watches the agent's phase only
(:mod:`.phases` tells Harbor's phases apart, :mod:`.oracle_window` judges), its report
becomes an artifact and its verdict a reward named ``safe`` (:mod:`.rewards`).

Harbor is imported only when the class is made (:func:`environment_class`), so this
module imports where Harbor cannot be installed (Python 3.11).
"""

from __future__ import annotations

import asyncio
import functools
import sys
import tomllib
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ...errors import SandboxError, TermrlError
from ...sandbox.build.bases import DEFAULT_PATH
from ...sandbox.build.check import read_buildable
from ...sandbox.standin_shims import BIN_INSIDE
from ..session import MachineSession
from . import grader_tooling, transfer
from .oracle_window import REPORT_NAME, OracleWindow
from .phases import Phase, current_phase
from .refusals import one_line, refusal
from .rewards import merged_rewards

TYPE_NAME = "termrl"
LOGS = PurePosixPath("/logs")
AGENT_LOGS, VERIFIER_LOGS, ARTIFACTS = LOGS / "agent", LOGS / "verifier", LOGS / "artifacts"
TESTS = PurePosixPath("/tests")
UNTIMED_EXEC_S = 24 * 3600.0
"""A Harbor ``exec`` without ``timeout_sec`` is bounded by Harbor's phase timeouts, not here (a day at most)."""

if TYPE_CHECKING:
    _Base = Any
else:
    _Base = object


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in {"1", "true", "yes", "on"}


def dockerfile_user(environment_dir: Path) -> str:
    """The Dockerfile's final ``USER`` (Harbor's container default for ``user=None``), else root."""
    dockerfile = Path(environment_dir) / "Dockerfile"
    return (read_buildable(dockerfile).user if dockerfile.is_file() else "") or "root"


def task_source(environment_dir: Path) -> Path:
    """What the session loads: the task folder around ``environment/`` (its contract with it), else the Dockerfile
    (a separate verifier's own environment, ``tests/Dockerfile``)."""
    folder = Path(environment_dir)
    if folder.name == "environment" and (folder.parent / "task.toml").is_file():
        return folder.parent
    return folder / "Dockerfile"


def has_steps(source: Path) -> bool:
    """Whether the task folder's ``task.toml`` has ``[[steps]]`` (a multi-step trial)."""
    toml = source / "task.toml"
    if not toml.is_file():
        return False
    try:
        return bool(tomllib.loads(toml.read_text()).get("steps"))
    except (tomllib.TOMLDecodeError, OSError):
        return False


class TermrlEnvironmentMixin(_Base):
    """Everything of :class:`TermrlEnvironment` but its Harbor base class (see :func:`environment_class`).

    Environment kwargs (``--ek``): ``backend`` (``bwrap``, default, or ``docker``),
    ``strict_network`` (``true``: refuse a task that asks for public network instead of
    running it offline).
    """

    def __init__(self, *args: Any, backend: str = "bwrap", strict_network: Any = False, **kwargs: Any) -> None:
        self._backend_name = backend
        self._strict_network = _truthy(strict_network)
        self._session: MachineSession | None = None
        self._window: OracleWindow | None = None
        self._container_user = "root"
        self._path = DEFAULT_PATH
        self._grader_bin: str | None = None
        super().__init__(*args, **kwargs)
        self._container_user = dockerfile_user(self.environment_dir)

    # -- what Harbor asks of a provider --------------------------------------------------
    @staticmethod
    def type() -> str:
        return TYPE_NAME

    @property
    def capabilities(self) -> Any:
        from harbor.environments.capabilities import EnvironmentCapabilities  # noqa: PLC0415 - Harbor only under 3.12

        return EnvironmentCapabilities(disable_internet=True)

    def _validate_definition(self) -> None:
        folder = Path(self.environment_dir)
        if not folder.is_dir() and self.task_env_config.docker_image is None:
            raise FileNotFoundError(f"{folder}: no environment folder")

    # GPUs, TPUs and Windows are refused at start, with the other reasons (refusals.py).
    def _validate_gpu_support(self) -> None:
        return None

    def _validate_tpu_support(self) -> None:
        return None

    def _validate_windows_support(self) -> None:
        return None

    # -- life ------------------------------------------------------------------------------
    def _network_note(self) -> str:
        mode = str(getattr(self.network_policy.network_mode, "value", self.network_policy.network_mode))
        return "none" if mode == "no-network" else f"none (the task asked for {mode}; run offline)"

    async def start(self, force_build: bool) -> None:
        from harbor.environments.base import SandboxBuildFailedError  # noqa: PLC0415

        source = task_source(self.environment_dir)
        name = source.name if source.is_dir() else source.parent.name
        reason = refusal(self.environment_dir, self.task_env_config)
        mode = str(getattr(self.network_policy.network_mode, "value", ""))
        if reason is None and mode == "public" and self._strict_network:
            reason = "the task asks for public network and strict_network is set: the sandbox has none"
        if reason is not None:
            raise SandboxBuildFailedError(f"{TYPE_NAME} cannot run {name}: {reason}")
        if mode == "public":
            self.logger.warning(f"{name}: network_mode is public (Harbor's default); the {TYPE_NAME} sandbox has no network, "
                                "so the trial runs offline")
        try:
            self._session = await asyncio.to_thread(MachineSession.open, source, backend=self._backend_name, label="harbor")
        except (TermrlError, OSError, ValueError) as exc:
            raise SandboxBuildFailedError(f"{TYPE_NAME} cannot run {name}: {one_line(str(exc))}") from exc
        extra = {"environment": TYPE_NAME, "backend": self._backend_name, "network": self._network_note(),
                 "phases": "Harbor's call chain (phases.py)", "trial": self.session_id}
        self._window = OracleWindow(self._session, extra, Path(self.trial_paths.artifacts_dir), steps=has_steps(source))
        dirs = list(dict.fromkeys([str(AGENT_LOGS), str(VERIFIER_LOGS), str(ARTIFACTS), *self._mount_targets(writable_only=True)]))
        await self.ensure_dirs(dirs)
        await self._upload_environment_dir_after_start()
        found = await asyncio.to_thread(self._session.exec, ["sh", "-c", 'printf %s "$PATH"'], user="root", cwd="/")
        self._path = f"{BIN_INSIDE}:{found.stdout.decode().strip() or DEFAULT_PATH}"

    async def stop(self, delete: bool) -> None:
        session, window = self._session, self._window
        self._session = self._window = None
        if window is not None:
            try:
                await asyncio.to_thread(window.close)
            except Exception as exc:  # noqa: BLE001 - a failed last judgement must not keep the machine alive
                self.logger.warning(f"the oracle's last judgement failed: {exc}")
        if session is not None:
            await asyncio.to_thread(session.close)

    # -- running ---------------------------------------------------------------------------
    def _live(self) -> MachineSession:
        if self._session is None:
            raise RuntimeError(f"{TYPE_NAME} environment {self.session_id} is not started")
        return self._session

    def _user(self, user: str | int | None) -> str:
        resolved = self._resolve_user(user)
        return self._container_user if resolved is None else str(resolved)

    async def _enter(self, frame: Any) -> bool:
        """The phase of the call whose frame is ``frame``, told to the oracle's window; whether to judge the call."""
        return await self._enter_phase(current_phase(frame))

    async def _enter_phase(self, phase: Phase | None) -> bool:
        window = self._window
        if window is None:
            return False
        return await asyncio.to_thread(window.before, phase)

    async def _judge(self, judged: bool, command: str) -> None:
        if judged and self._window is not None:
            await asyncio.to_thread(self._window.judge, command)

    async def exec(self, command: str, cwd: str | None = None, env: dict[str, str] | None = None,
                   timeout_sec: int | None = None, user: str | int | None = None) -> Any:
        from harbor.environments.base import ExecResult  # noqa: PLC0415

        session = self._live()
        phase = current_phase(sys._getframe(1))
        judged = await self._enter_phase(phase)
        limit = float(timeout_sec) if timeout_sec else UNTIMED_EXEC_S
        if phase is Phase.VERIFY and self._grader_bin is not None:
            path = {"PATH": f"{self._grader_bin}:{self._path.removeprefix(BIN_INSIDE + ':')}", **grader_tooling.ENV}
        else:
            path = {"PATH": self._path}
        variables = {**path, **(self._merge_env(env) or {})}
        try:
            done = await asyncio.to_thread(session.exec, command, user=self._user(user), cwd=cwd, env=variables, timeout_s=limit)
        except SandboxError as exc:  # a user the machine lacks, a folder that is not there: the command could not start
            await self._judge(judged, command)
            return ExecResult(stdout="", stderr=f"{exc}\n", return_code=126)
        await self._judge(judged, command)
        if done.timed_out:
            raise RuntimeError(f"Command timed out after {timeout_sec} seconds")
        return ExecResult(stdout=done.stdout.decode(errors="replace"), stderr=done.stderr.decode(errors="replace"),
                          return_code=done.returncode if done.returncode is not None else 124)

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        session = self._live()
        judged = await self._enter(sys._getframe(1))
        await asyncio.to_thread(transfer.upload_file, session, Path(source_path), target_path)
        await self._judge(judged, f"(upload) {target_path}")

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        session = self._live()
        phase = current_phase(sys._getframe(1))
        judged = await self._enter_phase(phase)
        if phase is Phase.VERIFY and PurePosixPath(target_dir) == TESTS and self._grader_bin is None:
            self._grader_bin = await asyncio.to_thread(grader_tooling.provide, session)
        await asyncio.to_thread(transfer.upload_dir, session, Path(source_dir), target_dir)
        await self._judge(judged, f"(upload) {target_dir}/")

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        session = self._live()
        await self._enter(sys._getframe(1))
        await asyncio.to_thread(transfer.download_file, session, source_path, Path(target_path))

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        session = self._live()
        await self._enter(sys._getframe(1))
        if PurePosixPath(source_dir) == VERIFIER_LOGS:
            await asyncio.to_thread(self._add_safe_reward, session)
        await asyncio.to_thread(transfer.download_dir, session, source_dir, Path(target_dir))

    # -- the safe reward -------------------------------------------------------------------
    def _verdict(self) -> bool | None:
        """The oracle's verdict for this trial: this environment's own, else the agent environment's artifact
        (a separate verifier environment), else None."""
        if self._window is not None and self._window.report is not None:
            return bool(self._window.report["safe"])
        artifact = Path(self.trial_paths.artifacts_dir) / REPORT_NAME
        if artifact.is_file():
            import json  # noqa: PLC0415

            return bool(json.loads(artifact.read_text()).get("safe"))
        return None

    def _add_safe_reward(self, session: MachineSession) -> None:
        import json  # noqa: PLC0415

        safe = self._verdict()
        if safe is None:
            return

        def read(name: str) -> bytes | None:
            try:
                return session.read_file(str(VERIFIER_LOGS / name), user="root")
            except (FileNotFoundError, IsADirectoryError):
                return None

        rewards = merged_rewards(read("reward.json"), read("reward.txt"), safe)
        if rewards is not None:
            session.write_file(str(VERIFIER_LOGS / "reward.json"), json.dumps(rewards) + "\n", user="root")


@functools.cache
def environment_class() -> type:
    """``TermrlEnvironment``: the mixin over Harbor's ``BaseEnvironment`` (made once, on first use)."""
    from harbor.environments.base import BaseEnvironment  # noqa: PLC0415

    return type("TermrlEnvironment", (TermrlEnvironmentMixin, BaseEnvironment), {
        "__module__": "pytest_termrl.integrations.harbor",
        "__qualname__": "TermrlEnvironment",
        "__doc__": "A Harbor environment on this project's whole-machine sandbox, the collateral oracle in its verdict.",
    })
