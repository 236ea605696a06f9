"""DockerBackend: sandboxes and the verifier's runs on a Docker engine, local or remote as chosen once.

One container per episode, through the Docker SDK (:mod:`.layout`), from the suite's base
image (built locally, :mod:`..image`) or the task's own image. How the engine is used is
chosen once, when the backend is made, from where the engine runs
(:func:`.engine.engine_is_local`, or ``local=``):

- on this machine (:mod:`.local`): the home, the shell's folders and the verifier's trusted
  mounts are bind-mounted from here;
- on another one (:mod:`.remote`): nothing is bind-mounted; they live in labelled volumes
  and the home is mirrored on this machine after every command.

A whole-machine task (:attr:`.Task.whole_machine`: it names its user) gets a container of
its own shape (:mod:`.machine`) whose overlay2 upper layer is its change record, graded in a
container of the image committed from it (:mod:`.machine_run`); that needs an engine of this
machine with the overlay2 driver (:mod:`.machine_support`), and is refused by name elsewhere.

Cleanup of what a run leaves on the engine (at close, at exit, after a killed run) is the
engine's (:mod:`.engine`, :mod:`.cleanup`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import ContextManager, Protocol

from ...errors import SandboxError
from ...tasks.model import Task
from ..base import IsolatedRequest, IsolatedRun, SandboxSettings
from ..layout import default_workroot, workdir_alias
from .engine import DockerEngine, engine_is_local
from .exec import exec_verifier
from .local import DockerSandbox, LocalMode
from .machine import DockerMachineSandbox
from .machine_run import run_on_snapshot
from .machine_support import MachineSupport
from .remote import RemoteMode


class EngineMode(Protocol):
    """Local or remote: the sandbox class, and the container the verifier runs in."""

    @property
    def local(self) -> bool:
        """Whether the engine can bind-mount this machine's folders."""

    @property
    def sandbox(self) -> type[DockerSandbox]:
        """The sandbox class of the mode."""

    def verifier_container(self, engine: DockerEngine, request: IsolatedRequest, alias: str | None = None) -> ContextManager:
        """A started container with a copy of the request's home at /home/user (and at ``alias``), its trusted
        mounts, limits and network; removed on exit."""


class DockerBackend(DockerEngine):
    """Sandboxes and the verifier's runs on one engine, in the mode (local or remote) chosen here once."""

    runs_task_images = True

    def __init__(
        self,
        settings: SandboxSettings,
        workroot: Path | None = None,
        *,
        image: str | None = None,
        client=None,
        local: bool | None = None,
    ) -> None:
        super().__init__(settings, workroot or default_workroot(), image=image, client=client)
        is_local = engine_is_local(self.api.base_url) if local is None else local
        self.mode: EngineMode = LocalMode() if is_local else RemoteMode()

    @property
    def local(self) -> bool:
        """Whether the engine can bind-mount this machine's folders (the mode chosen at construction)."""
        return self.mode.local

    @classmethod
    def whole_machine_problem(cls) -> str | None:
        """Asked of the engine the environment names (``DOCKER_HOST``), at collection: so a suite on an engine that cannot
        make whole-machine sandboxes (another machine's, another storage driver) names it once, before any episode.
        None when the engine does not answer: ``create`` then says why no sandbox of any kind can be made."""
        try:
            import docker  # the SDK is imported where the backend is used

            client = docker.from_env(timeout=10)
            try:
                support = MachineSupport.of(client.info(), engine_is_local(client.api.base_url))
            finally:
                client.close()
        except Exception:  # noqa: BLE001 - no engine or no SDK: the sandbox's creation names it
            return None
        problem = support.problem()
        return None if problem is None else f"{problem}; run it on such an engine, or with --termrl-sandbox=bwrap (as root)"

    def machine_support(self) -> MachineSupport:
        """What this engine offers whole-machine sandboxes, asked once."""
        support = getattr(self, "_machine_support", None)
        if support is None:
            support = self._machine_support = MachineSupport.of(self.client.info(), self.local)
        return support

    def create(self, label: str, task: Task | None = None) -> DockerSandbox | DockerMachineSandbox:
        if os.geteuid() != 0:
            raise SandboxError("the docker backend runs as root (it owns the agent's files as uid 1000 on the host); use sudo, or --termrl-sandbox=bwrap")
        if task is not None and task.whole_machine:
            support = self.machine_support()
            problem = support.problem()
            if problem is not None:
                raise SandboxError(f"task {task.id} runs as {task.user!r} over the whole machine: {problem}; "
                                   "run it on such an engine, or with --termrl-sandbox=bwrap (as root)")
            return DockerMachineSandbox(self, self.new_sandbox_dir(label), label, support)
        return self.mode.sandbox(self, self.new_sandbox_dir(label), label)

    def run_isolated(self, request: IsolatedRequest) -> IsolatedRun:
        if request.root is not None:  # a whole-machine snapshot: a container of the image committed from the agent's
            return run_on_snapshot(self, request)
        with self.mode.verifier_container(self, request, workdir_alias(request.cwd)) as container:
            s = self.settings
            user = f"{s.agent_uid}:{s.agent_gid}"
            return exec_verifier(self.api, container.id, user, request.argv, request.secret, request.timeout_s, request.cwd)
