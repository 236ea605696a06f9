"""The docker sandbox on an engine of this machine (a unix socket, or tcp to loopback).

The home is a host folder bind-mounted at /home/user (and a second time at the task's
workdir when that is elsewhere, /app: :func:`..layout.workdir_alias`), and so are the shell's
command and output folders, so ``Sandbox.home`` is a host path and the collateral oracle, decoys and
faults work unchanged, exactly as with bwrap. The harness must run as root (it owns and
chowns the files of uid 1000, like bwrap does). The agent's processes are killed from the
host through the container's cgroup. The verifier's container gets the snapshot and the
trusted mounts bind-mounted too.

The image is the backend's (the base image), the task's own (its prebuilt image, or one
built from its Dockerfile), or, for an imported task whose Dockerfile only starts from a
generic Linux image that the harness's plan stands in for (environment files and setup,
as on bwrap), the base image or its toolchain variant for the compilers and runtimes the
task runs (:func:`task_image_for`, :mod:`..toolchain_images`).

:class:`DockerSandbox` is also the base of the remote engine's sandbox (:mod:`.remote`),
which replaces the bind mounts by volumes and a mirror.
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from ...errors import SandboxError
from ...tasks.importers.dockerfile import HARNESS_BASE_REPOSITORY, is_generic_base
from ...tasks.model import ImageSpec, Task
from ..base import CommandResult, ControlFiles, ExecRequest, ExecResult, IsolatedRequest, KeystrokeBatch, Sandbox
from ..control_files import HostControlFiles
from ..hostfs import chown_tree, copy_tree, snapshot_home
from .images.client import DEFAULT_TAG, ImageError, image_exists
from .images.task import build_task_image, missing_image_message
from ..layout import AGENT_ENV, CTL_INSIDE, HOME_INSIDE, IO_INSIDE, workdir_alias
from ..limits import task_settings
from ..shell import PersistentShell
from ..standin_shims import AGENT_PATH, SHIMS_INSIDE, shim_folder
from ..terminal import TerminalSession
from .images.toolchain import toolchain_image_for
from .engine import DockerEngine
from .exec import ExecChannel, ExecStream
from .kill import cgroup_procs, kill_inside, kill_through_cgroup
from .layout import STORAGE_NOT_ENFORCED, narrow_system_mounts, skeleton_binds
from .process_exec import exec_in_container
from .terminal_exec import TtyExecChannel, open_terminal_exec

if TYPE_CHECKING:
    from docker.models.containers import Container

AGENT_SHELL_ENV = {**AGENT_ENV, "PATH": AGENT_PATH}
"""The agent's shell's environment: the stand-ins first on PATH, as on bwrap."""


class DockerSandbox(Sandbox):
    backend_name = "docker"
    has_terminal = True

    def __init__(self, backend: DockerEngine, folder: Path, label: str) -> None:
        super().__init__(backend.settings)
        self._backend = backend
        self._folder = folder
        self._label = label
        self._home = folder / "home"
        s = self.settings
        self._home.mkdir()
        os.chmod(self._home, 0o755)
        os.chown(self._home, s.agent_uid, s.agent_gid)
        self.image = backend.image
        self.alias: str | None = None
        """Where the home shows a second time: the task's workdir when it is not under /home/user."""
        self.container: Container | None = None
        self.enforced_limits = dict(backend.enforced)
        self._shell = PersistentShell(
            open_channel=self._open_shell,
            files=self._control_files(),
            ctl_inside=CTL_INSIDE,
            io_inside=IO_INSIDE,
            workdir=HOME_INSIDE,
            output_cap_chars=s.output_cap_chars,
        )
        self._terminal = TerminalSession(self._shell.files, CTL_INSIDE, self._open_terminal, s.output_cap_chars,
                                         s.terminal_size, start_in=f"{IO_INSIDE}/state.cwd")
        """The terminal session: an exec on a pseudo-terminal, starting where the persistent shell last was."""
        self._procs_path: Path | None = None
        self._closed = False

    def _control_files(self) -> ControlFiles:
        """The shell's command folder (root's, read-only inside) and output folder (the agent's)."""
        s = self.settings
        self._in, self._out = self._folder / "ctl", self._folder / "out"
        for path, mode, owner in ((self._in, 0o755, 0), (self._out, 0o700, s.agent_uid)):
            path.mkdir()
            os.chmod(path, mode)
            os.chown(path, owner, s.agent_gid if owner else 0)
        return HostControlFiles(self._in, self._out)

    @property
    def home(self) -> Path:
        return self._home

    @property
    def shell(self) -> PersistentShell:
        return self._shell

    @property
    def control_files(self) -> ControlFiles:
        return self._shell.files

    # -- the container ---------------------------------------------------------------
    def ensure_container(self):
        """The running container, created or restarted as needed (the home is on the host)."""
        if self._closed:
            raise SandboxError("the sandbox is closed")
        if self.container is not None:
            self.container.reload()
            if self.container.status == "running":
                return self.container
            self.container.start()
            self._procs_path = None
            return self.container
        self._backend.require_image(self.image)
        self.container = self._new_container()
        return self.container

    def _new_container(self):
        binds = [
            (str(self._home), HOME_INSIDE, False),
            (str(self._in), CTL_INSIDE, True),
            (str(self._out), IO_INSIDE, False),
        ]
        if self.alias is not None:
            binds.append((str(self._home), self.alias, False))
        binds.append((str(shim_folder(self._backend.workroot)), SHIMS_INSIDE, True))  # the offline installer stand-ins
        self.installer_standins = True
        return self._backend.start_container("agent", self._label, self.image, binds, settings=self.settings)

    def _open_shell(self) -> ExecChannel:
        """The agent's bash in an attached exec, as uid 1000 in the home."""
        container = self.ensure_container()
        s = self.settings
        cmd = ["bash", "--noprofile", "--norc"]
        try:
            stream = ExecStream(self._backend.api, container.id, cmd, f"{s.agent_uid}:{s.agent_gid}", HOME_INSIDE, AGENT_SHELL_ENV)
        except self._backend.sdk.errors.APIError as exc:
            raise SandboxError(f"starting a shell in {container.name} failed: {exc.explanation or exc}") from exc
        return ExecChannel(stream, lambda: self.kill_agent(spare=set()))

    def _open_terminal(self, rcfile: str) -> TtyExecChannel:
        """The terminal session's bash on a pseudo-terminal, as the agent's user, with the shell's environment."""
        container = self.ensure_container()
        s = self.settings
        return open_terminal_exec(self._backend.api, container, rcfile, f"{s.agent_uid}:{s.agent_gid}", self._shell.workdir,
                                  AGENT_SHELL_ENV, self._backend.sdk.errors.APIError)

    # -- killing the agent's processes ------------------------------------------------------
    def kill_agent(self, spare: set[int]) -> None:
        """SIGKILL every process of the agent's uid in the container but ``spare`` (pids inside)."""
        if self.container is None:
            return
        if self._kill_from_host(spare):
            return
        self._kill_from_inside(spare)

    def _kill_from_host(self, spare: set[int]) -> bool:
        """Kill through the container's cgroup, as root on the host; False if it cannot be reached."""
        if self._procs_path is None:
            self._procs_path = cgroup_procs(self.container)
        if self._procs_path is None:
            return False
        kill_through_cgroup(self._procs_path, self.settings.agent_uid, spare)
        return True

    def _kill_from_inside(self, spare: set[int]) -> None:
        s = self.settings
        backend = self._backend
        if not kill_inside(backend.api, self.container, f"{s.agent_uid}:{s.agent_gid}", spare, backend.sdk.errors.APIError):
            self._procs_path = None  # the container restarted

    # -- the Sandbox API ---------------------------------------------------------------
    def prepare(self, task: Task) -> None:
        if self.container is None:  # the task's cpus and memory go into the container it is created with
            self.settings, notes = task_settings(self.settings, task.resources, STORAGE_NOT_ENFORCED, self._backend.machine)
            self.enforced_limits = {**self._backend.enforced_for(self.settings), **notes}
        s = self.settings
        image = task_image_for(task, self._backend) or self.image
        alias = workdir_alias(task.workdir)
        if (image, alias) != (self.image, self.alias):
            if self.container is not None:
                self._shell.stop()
                self._backend.remove_container(self.container.id)
                self.container = None
            self.image, self.alias = image, alias
            self._shell.workdir = alias or HOME_INSIDE
        if task.environment_dir is not None:
            copy_tree(task.environment_dir, self._home)
        chown_tree(self._home, s.agent_uid, s.agent_gid)
        self.ensure_container()
        if not self._shell.running:
            try:
                self._shell.start()
            except RuntimeError as exc:
                raise SandboxError(f"{exc} (with TERMRL_DOCKER_LOCAL=1 on an engine of another machine, it cannot see {self._folder})") from exc
        self.run_setup_script(task, self._shell.files, CTL_INSIDE)

    def run(self, command: str, timeout_s: float | None = None) -> CommandResult:
        return self._shell.run(command, timeout_s or self.settings.command_timeout_s)

    def send_keys(self, batch: KeystrokeBatch) -> CommandResult:
        return self._terminal.send_keys(batch)

    def grading_network(self) -> str | None:
        """The agent's container, while it runs: a verifier's container shares its network namespace."""
        return f"container:{self.container.id}" if self.container is not None else None

    def stop_processes(self) -> None:
        if self._shell.running:
            self._shell.stop()
        else:
            self.kill_agent(spare=set())
        self._terminal.stop()  # its bash was one of the agent's processes

    def snapshot(self, dest: Path) -> Path:
        target = snapshot_home(self._home, dest, (self.settings.agent_uid, self.settings.agent_gid))
        images = self._backend.snapshot_images
        for stale in [path for path in images if not os.path.exists(path)]:
            images.pop(stale, None)
        images[str(target)] = self.image
        return target

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._shell.abandon()  # removing the container kills what runs in it
            self._terminal.stop()
            if self.container is not None:
                self._backend.remove_container(self.container.id)
        finally:
            shutil.rmtree(self._folder, ignore_errors=True)


class LocalDockerSandbox(DockerSandbox):
    """The docker sandbox on this machine's engine: one-shot execs too (on a remote one the home's mirror would miss them)."""

    can_exec = True

    def exec(self, request: ExecRequest) -> ExecResult:  # an exec of the engine's, beside the shell (:mod:`.process_exec`)
        s = self.settings
        return exec_in_container(self.ensure_container(), request, f"{s.agent_uid}:{s.agent_gid}", self._shell.workdir,
                                 s.command_timeout_s)


def planned_on_a_generic_base(image: ImageSpec) -> bool:
    """Whether the harness's plan of the task's Dockerfile stands in for its image: nothing needs
    the image itself, and it only starts from generic Linux images (``ubuntu:24.04``) other than
    the harness's own base (which the engine builds FROM)."""
    return not image.needs_docker and image.planned and bool(image.base_images) and all(
        is_generic_base(base) and base.split("@")[0].split(":")[0] != HARNESS_BASE_REPOSITORY for base in image.base_images
    )


def task_image_for(task: Task, engine: DockerEngine) -> str | None:
    """The image a task runs in: its prebuilt ``image.docker_image``, the image of its own Dockerfile,
    or (None: the backend's base image will do) the toolchain variant its toolchain commands need.

    A Dockerfile the plan stands in for (:func:`planned_on_a_generic_base`) is not built: its
    base would have to be pulled and its installs fetched, and the plan already copies its files
    and replays its setup, as on bwrap.
    """
    image = task.image or ImageSpec()
    named = image.docker_image
    if named:
        if not image_exists(engine.client, named):
            raise SandboxError(missing_image_message(named, task.root / "task.toml"))
        return str(named)
    context = image.build_context or task.root
    if (context / "Dockerfile").is_file() and not planned_on_a_generic_base(image):
        try:
            return build_task_image(context, client=engine.client)
        except ImageError as exc:
            raise SandboxError(str(exc)) from exc
    return toolchain_image_for(
        task.requires, engine.image, DEFAULT_TAG, lambda tag: image_exists(engine.client, tag), f"task {task.id} ({task.root})"
    )


class LocalMode:
    """How the backend uses an engine of this machine: everything bind-mounted from here."""

    local = True
    sandbox = LocalDockerSandbox

    @staticmethod
    @contextmanager
    def verifier_container(engine: DockerEngine, request: IsolatedRequest, alias: str | None = None) -> Iterator:
        """A started container with the snapshot as its home (and at ``alias``) and the trusted mounts, bind-mounted; removed after."""
        home = request.home
        binds = [(str(home), HOME_INSIDE, False)]
        if alias is not None:
            binds.append((str(home), alias, False))
        trusted = narrow_system_mounts(request.mounts)
        skeleton = engine.new_sandbox_dir("verify-skel")
        try:
            binds += skeleton_binds(skeleton, trusted)
            binds += [(str(m.host_path), m.sandbox_path, True) for m in trusted]
            binds.append(("/dev/null", "/etc/ld.so.preload", True))
            container = engine.start_container(
                "verify", home.parent.name, engine.snapshot_image(home), binds, settings=request.settings, network=request.network
            )
            try:
                yield container
            finally:
                engine.remove_container(container.id)
        finally:
            shutil.rmtree(skeleton, ignore_errors=True)
