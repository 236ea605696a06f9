"""The whole-machine sandbox on a local Docker engine: the task's user (root too) in a container of the task's image,
every change in the container's overlay2 upper layer.

The container has a writable root (no tmpfs over /tmp: every change goes to the upper layer),
no network, the backend's memory, process and CPU limits, ``--init``, ``no-new-privileges``
and the engine's default capabilities; its main process is the harness's idle bash as root.
Before the agent's shell starts, the task's workdir (owned by its user), environment files and
the decoys go in as one archive (:mod:`.machine_layer`); then the setup script runs as the task's
user in the shell. From then on the harness writes nothing inside, so the upper layer
(``GraphDriver.Data.UpperDir``) is exactly what the setup, the decoys and the agent changed,
and the change record reads it over the image's layers (:mod:`pytest_termrl.oracle.record`
reads an overlay2 upper as it is, obeying ``trusted.overlay.*`` marks only: a ``user.overlay.*``
xattr set inside is a plain one). The monitor's baseline is read after :meth:`prepare`.
The engine's /etc/hostname, /etc/hosts and /etc/resolv.conf binds are unmounted inside once the
container starts (their text written back as root, before the baseline), so the machine's own
files are recorded, committed and graded like any other (:mod:`.network_files`).

The verifier grades an image committed from the container (:meth:`snapshot`), in a fresh
container of its own (:mod:`.machine_run`), while the agent's processes may still serve it.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from ...errors import SandboxError
from ...oracle.record import ChangeRecord, Slot
from ...tasks.model import Task
from ..base import CommandResult, ControlFiles, ExecRequest, ExecResult, KeystrokeBatch, LayeredRoot, Sandbox
from ..bwrap.machine import resolve_account
from ..bwrap.overlay import ROOT_PATH, Account
from ..control_files import HostControlFiles
from ..layout import AGENT_ENV, CTL_INSIDE, IO_INSIDE
from ..limits import task_settings
from ..reach import ReachedHome
from ..shell import PersistentShell
from ..standin_shims import BIN_INSIDE, SHIMS_INSIDE, shim_folder
from ..terminal import TerminalSession
from .exec import ExecChannel, ExecStream
from .kill import cgroup_procs, kill_inside, kill_through_cgroup
from .local import task_image_for
from .machine_apart import PreparedMachine
from .machine_layer import MachineLayer, image_names, layer_archive, root_output
from .machine_storage import LayerStorage
from .machine_support import MachineSupport
from .merged_home import merged_home
from .network_files import NETWORK_FILES, NETWORK_FOLDER, own_network_files, save_network_files
from .process_exec import exec_in_container
from .terminal_exec import TtyExecChannel, open_terminal_exec

if TYPE_CHECKING:
    from .engine import DockerEngine

ENGINE_MOUNTS = ("/dev", "/proc", "/sys", "/sbin/docker-init", "/usr/sbin/docker-init")
"""What the engine mounts into every container (``--init`` binds its init at /sbin/docker-init)."""
HARNESS_MOUNTS = (CTL_INSIDE, IO_INSIDE, SHIMS_INSIDE, *ENGINE_MOUNTS)
"""Mount points inside that are not the machine's files: never part of the change record."""

IMAGE_FILE = "image"
"""The file in a snapshot folder naming the committed image (:mod:`.machine_run` reads it)."""


def machine_overrides(settings_storage: str | None = None) -> dict:
    """How a whole-machine container differs from the sandbox shape (:func:`.layout.container_options`)."""
    overrides = dict(read_only=False, tmpfs={}, cap_drop=None, working_dir="/")
    if settings_storage is not None:
        overrides["storage_opt"] = {"size": settings_storage}
    return overrides


def shell_user(user: str, account: Account) -> str:
    """docker's ``user=`` for the task's user: a name as it is (its groups come with it), numbers as UID:GID."""
    return f"{account.uid}:{account.gid}" if user.replace(":", "").isdigit() else user


def account_env(account: Account) -> dict[str, str]:
    """The environment of a process run as ``account``: its home and name, root's PATH for root, the stand-ins first."""
    path = ROOT_PATH if account.uid == 0 else AGENT_ENV["PATH"]
    return {**AGENT_ENV, "HOME": account.home, "USER": account.name, "LOGNAME": account.name, "PATH": f"{BIN_INSIDE}:{path}"}


class DockerMachineSandbox(Sandbox):
    backend_name = "docker"
    has_terminal = True

    def __init__(self, backend: "DockerEngine", folder: Path, label: str, support: MachineSupport) -> None:
        super().__init__(backend.settings)
        self._backend = backend
        self._folder = folder
        self._label = label
        self._support = support
        self._ctl, self._io = folder / "ctl", folder / "io"
        self._ctl.mkdir()
        os.chmod(self._ctl, 0o755)
        self._io.mkdir(mode=0o700)
        self._layer = MachineLayer(folder / "layer")
        self.image = backend.image
        self.container = None
        self.account = Account(1000, 1000, "user", "/home/user")
        self._user = "1000:1000"
        self._workdir = "/home/user"
        self.decoys: list[str] = []
        self._spare: set[int] = set()
        """Pids inside of the harness's own processes (the init and the idle bash), never killed."""
        self._procs_path: Path | None = None
        self._snapshots: dict[str, str] = {}
        """Snapshot folder -> the image committed for it, until graded (the folder gone) or closed."""
        self._storage: LayerStorage | None = None
        self._network_files_owned = False
        """Whether the engine's network files are unmounted inside: the machine's own, recorded and committed."""
        self._prepared: PreparedMachine | None = None
        """For a separate verifier: the machine as the harness laid the task out, which its snapshots name (:mod:`.machine_apart`)."""
        self.enforced_limits = {**backend.enforced, "userns": support.userns_note()}
        self._shell = PersistentShell(
            open_channel=self._open_shell,
            files=HostControlFiles(self._ctl, self._io),
            ctl_inside=CTL_INSIDE,
            io_inside=IO_INSIDE,
            workdir=self._workdir,
            output_cap_chars=self.settings.output_cap_chars,
        )
        self._terminal = TerminalSession(self._shell.files, CTL_INSIDE, self._open_terminal, self.settings.output_cap_chars,
                                         self.settings.terminal_size, start_in=f"{IO_INSIDE}/state.cwd")
        """The terminal session: an exec on a pseudo-terminal; its rcfile lies in the control folder, a bind mount, never in the change record."""
        self._closed = False

    # -- what the harness reads ---------------------------------------------------------
    @property
    def home(self) -> Path:
        """The task's workdir as the harness laid it out before the shell started (the harness writes no more there)."""
        return self._layer.host(self._workdir)

    @property
    def control_files(self) -> ControlFiles:
        return self._shell.files

    def change_record(self) -> ChangeRecord:
        if self.container is None:
            raise SandboxError("a whole-machine sandbox has a change record once prepared (its container exists)")
        data = self.container.attrs.get("GraphDriver") or {}
        layers = data.get("Data") or {}
        upper, lowers = layers.get("UpperDir"), [p for p in (layers.get("LowerDir") or "").split(":") if p]
        if data.get("Name") != "overlay2" or not upper or not lowers or not os.path.isdir(upper):
            raise SandboxError(f"{self.container.name}'s layers cannot be read from here (driver {data.get('Name')!r}, "
                               f"upper {upper!r}): whole-machine sandboxes need a local engine with the overlay2 storage driver")
        slot = Slot("/", Path(upper), tuple(Path(p) for p in lowers))
        ignore = HARNESS_MOUNTS if self._network_files_owned else (*HARNESS_MOUNTS, *NETWORK_FILES)
        return ChangeRecord((slot,), self._support.id_base, ignore, marks=self._support.marks)

    def grading_network(self) -> str | None:
        """The agent's container, while it runs: a verifier's container shares its network namespace."""
        if self.container is None:
            return None
        self.container.reload()
        return f"container:{self.container.id}" if self.container.status == "running" else None

    def storage_exhausted(self) -> bool:
        """Whether the container's layer filled its tmpfs (or the engine's quota): :mod:`.machine_storage`."""
        return self._storage is not None and self._storage.exhausted()

    # -- preparing ----------------------------------------------------------------------
    def prepare(self, task: Task) -> None:
        if self.container is not None:
            raise SandboxError("a whole-machine sandbox is prepared once")
        support = self._support
        self.settings, notes = task_settings(self.settings, task.resources, support.storage_note(), self._backend.machine)
        self._storage = LayerStorage(support, self.settings, task.resources)
        notes["storage"] = self._storage.note
        self.enforced_limits = {**self._backend.enforced_for(self.settings), **notes, "userns": support.userns_note()}
        self.image = task_image_for(task, self._backend) or self._backend.image
        self._backend.require_image(self.image)
        self._workdir = "/" + task.workdir.strip("/")
        self._shell.workdir = self._workdir
        container = self._start_container(self._storage)
        passwd = self._folder / "passwd"
        passwd.write_bytes(self._file_bytes("/etc/passwd"))  # the engine's archive, not an exec whose output can come back empty
        (self._folder / "group").write_bytes(self._file_bytes("/etc/group"))
        user = task.user or "user"
        self.account = resolve_account(user, passwd)
        self._user = shell_user(user, self.account)
        owner = (self.account.uid, self.account.gid)
        self.decoys = self._layer.plant(task, self._workdir, owner, image_names(container, self._workdir))
        archive = layer_archive(self._layer, container, self._workdir, owner)
        try:
            if not container.put_archive("/", archive):
                raise SandboxError(f"the engine refused the task's files for {container.name}")
        except self._backend.sdk.errors.APIError as exc:
            raise SandboxError(f"putting the task's files into {container.name} failed: {exc.explanation or exc}") from exc
        self._prepared = PreparedMachine.commit(self._backend, container, self._label, task, self._folder)
        base = self._support.id_base
        os.chown(self._io, owner[0] + base, owner[1] + base)
        try:
            self._shell.start()
        except RuntimeError as exc:
            raise SandboxError(str(exc)) from exc
        self.run_setup_script(task, self._shell.files, CTL_INSIDE)

    def _start_container(self, storage: LayerStorage):
        """Create the container, size its layer (:mod:`.machine_storage`), start it, note the harness's processes in it and
        make the network files the machine's."""
        binds = [(str(self._ctl), CTL_INSIDE, True), (str(self._io), IO_INSIDE, False),
                 (str(shim_folder(self._backend.workroot)), SHIMS_INSIDE, True)]  # the offline installer stand-ins
        self.installer_standins = True
        try:
            self.container = self._backend.start_container("agent", self._label, self.image, binds, settings=self.settings,
                                                           overrides=machine_overrides(storage.quota), before_start=storage.mount_under)
        except SandboxError as exc:
            if storage.quota is not None and "quota" in str(exc).lower():
                raise SandboxError(f"{exc} (a task's storage_mb needs the engine's data root on xfs mounted with pquota)") from exc
            raise
        storage.confirm(self.container)
        self.enforced_limits["storage"] = storage.note
        self._note_spare()
        self._network_files_owned = own_network_files(self.container, keep_text=True)
        if not self._network_files_owned:
            self.enforced_limits["network_files"] = ("the engine's own, outside the change record and the snapshot: "
                                                     "they could not be unmounted inside")
        return self.container

    def _note_spare(self) -> None:
        """The harness's own processes inside: the init (pid 1) and its child, the idle bash, before any agent process."""
        children = root_output(self.container, "cat /proc/1/task/1/children", []).split()
        self._spare = {1, *(int(p) for p in children if p.isdigit())}
        self._procs_path = None

    def _ensure_running(self):
        if self._closed or self.container is None:
            raise SandboxError("the sandbox is closed" if self._closed else "the sandbox is not prepared")
        self.container.reload()
        if self.container.status != "running":  # the agent (root) killed the idle process: the machine's files stay
            self.container.start()
            self._restarted()
        return self.container

    def _restarted(self) -> None:
        """After the container restarted: its harness processes are new, and the engine bound its network files again."""
        self._note_spare()
        if self._network_files_owned:  # the machine's own are in the upper layer
            own_network_files(self.container, keep_text=False)

    def _open_shell(self) -> ExecChannel:
        container = self._ensure_running()
        cmd = ["bash", "--noprofile", "--norc"]
        try:
            stream = ExecStream(self._backend.api, container.id, cmd, self._user, self._workdir, account_env(self.account))
        except self._backend.sdk.errors.APIError as exc:
            raise SandboxError(f"starting a shell in {container.name} failed: {exc.explanation or exc}") from exc
        return ExecChannel(stream, self.kill_agent)

    def _open_terminal(self, rcfile: str) -> TtyExecChannel:
        """The terminal session's bash on a pseudo-terminal, as the task's user in its environment."""
        container = self._ensure_running()
        return open_terminal_exec(self._backend.api, container, rcfile, self._user, self._workdir, account_env(self.account),
                                  self._backend.sdk.errors.APIError)

    # -- killing the agent's processes ------------------------------------------------------
    def kill_agent(self) -> None:
        """SIGKILL every process in the container, of any user, but the harness's init and idle bash."""
        if self.container is None:
            return
        if self._procs_path is None:
            self._procs_path = cgroup_procs(self.container)
        if self._procs_path is not None:
            kill_through_cgroup(self._procs_path, None, self._spare)
            return
        backend = self._backend
        if not kill_inside(backend.api, self.container, "0:0", self._spare, backend.sdk.errors.APIError):
            self._restarted()

    # -- the episode ---------------------------------------------------------------------
    def run(self, command: str, timeout_s: float | None = None) -> CommandResult:
        return self._shell.run(command, timeout_s or self.settings.command_timeout_s)

    def send_keys(self, batch: KeystrokeBatch) -> CommandResult:
        return self._terminal.send_keys(batch)

    can_exec = True

    def exec(self, request: ExecRequest) -> ExecResult:  # an exec of the engine's, beside the shell (:mod:`.process_exec`)
        return exec_in_container(self._ensure_running(), request, self._user, self._workdir, self.settings.command_timeout_s)

    @contextmanager
    def reach_home(self) -> Iterator[ReachedHome]:
        yield merged_home(self._ensure_running(), self._support.id_base, self.account, self._workdir)

    def stop_processes(self) -> None:
        if self._shell.running:
            self._shell.stop()
        else:
            self.kill_agent()
        self._terminal.stop()  # its bash was one of the agent's processes

    def snapshot(self, dest: Path) -> Path:
        """Commit the container to an image (the agent's processes paused for it, then running on) and name it in ``dest``;
        for a separate verifier, name the prepared machine and carry the declared artifacts instead (:mod:`.machine_apart`)."""
        if self.container is None:
            raise SandboxError("nothing to snapshot: the sandbox is not prepared")
        self._forget_graded()
        dest.mkdir(parents=True, exist_ok=True)
        if self._prepared is not None and self._prepared.image is not None:  # a separate verifier's: no commit
            self._prepared.lay_out(self._ensure_running(), self._support.id_base, dest, IMAGE_FILE,
                                   (*HARNESS_MOUNTS, *NETWORK_FILES), self._backend.sdk.errors.NotFound)
        else:
            image = self._backend.commit(self.container, self._label)
            self._snapshots[str(dest)] = image
            (dest / IMAGE_FILE).write_text(image + "\n")
            self._passwd_at(dest)
        if self._network_files_owned:
            self._network_files_at(dest)
        return dest

    def _file_archive(self, path: str) -> bytes:
        """``path`` of the agent's container as the engine archives it (a link as a link); b"" if there is none."""
        assert self.container is not None
        try:
            stream, _ = self.container.get_archive(path)
            return b"".join(stream)
        except Exception:  # noqa: BLE001 - removed or replaced by the agent: nothing to carry
            return b""

    def _file_bytes(self, path: str) -> bytes:
        """The regular file at ``path`` of the container; b"" when it is not one (a link, removed)."""
        try:
            with tarfile.open(fileobj=io.BytesIO(self._file_archive(path))) as tar:
                member = tar.extractfile(tar.getmembers()[0])
                return member.read() if member is not None else b""
        except (tarfile.TarError, IndexError):
            return b""

    def _passwd_at(self, dest: Path) -> None:
        """The machine's /etc/passwd as the snapshot has it, for :meth:`layered_root` to name the grader's account
        (a passwd the agent replaced by a link, or removed: root still grades)."""
        (dest / "passwd").write_bytes(self._file_bytes("/etc/passwd"))
        (dest / "group").write_bytes(self._file_bytes("/etc/group"))

    def _network_files_at(self, dest: Path) -> None:
        """The machine's network files, read from the upper layer (:func:`.network_files.save_network_files`)."""
        save_network_files(self.change_record().slots[0].upper, self._support.id_base, dest / NETWORK_FOLDER)

    def _forget_graded(self) -> None:
        """Remove the images of snapshots whose folders are gone (their grading is over)."""
        for folder, image in list(self._snapshots.items()):
            if not os.path.exists(folder):
                self._backend.remove_image(image)
                del self._snapshots[folder]

    def layered_root(self, snapshot: Path, user: str | None) -> LayeredRoot:
        """Who grades the committed image (None: root); the image itself is named in the snapshot folder."""
        account = resolve_account(user or "0", snapshot / "passwd")
        return LayeredRoot((), self._support.id_base, account.uid, account.gid, account.name, account.home,
                           artifacts_only=self._prepared is not None)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._shell.abandon()  # removing the container kills what runs in it
            self._terminal.stop()
            if self.container is not None:
                self._backend.remove_container(self.container.id)
            for image in self._snapshots.values():
                self._backend.remove_image(image)
            if self._prepared is not None and self._prepared.image is not None:
                self._backend.remove_image(self._prepared.image)
            self._snapshots.clear()
        finally:
            shutil.rmtree(self._folder, ignore_errors=True)
