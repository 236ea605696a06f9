"""The whole-machine sandbox on bwrap: the task's user (root too) on layered lowers, every change in one upper layer.

Before the shell starts, the task's files (its environment, in its workdir, owned by its
user) and its decoys are written into a layer of the sandbox's own, which lies under the
upper like the base layer and the host's folders. From then on the harness writes nothing
inside: the setup script and the agent change the machine only through the overlays, so
the upper folders are exactly what they created, changed or deleted (:mod:`..oracle.record`
reads them). The verifier's sandbox is the same lowers under a copy of those uppers.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator

from ...errors import SandboxError
from ...oracle.decoys import plant_decoys, plant_machine_decoys
from ...oracle.record import ChangeRecord, Slot
from ...tasks.model import Task
from ..base import (CommandResult, ControlFiles, ExecRequest, ExecResult, KeystrokeBatch, LayeredRoot, Sandbox,
                    SandboxSettings)
from ..control_files import HostControlFiles
from ..hostfs import chown_tree, copy_tree
from ..layout import AGENT_ENV, CTL_INSIDE, IO_INSIDE
from ..limits import ResourceLimits, task_settings
from ..reach import Anchored, ReachedHome
from ..shell import PersistentShell
from ..standin_shims import BIN_INSIDE, SHIMS_INSIDE, bwrap_args as standin_args
from ..storage import storage_size, tmpfs_note
from ..terminal_fifos import fifo_terminal
from ..build.accounts import ImageUser, resolve_user
from ..build.record import BuiltImage
from ..build.step_run import image_slots
from ..build.view import MergedView
from .entered import exec_entered, inside_pid, live_user
from .lowers import MachineLowers
from .process_channel import ProcessChannel, agent_pids, agents_network
from .storage import UpperStorage
from .overlay import ROOT_PATH, Account, LayerSlot, enter_as, launch_layered, make_slot_folders


HARNESS_MOUNTS = (CTL_INSIDE, IO_INSIDE, SHIMS_INSIDE)
"""The harness's own mount points inside: never part of the change record."""


def resolve_account(name: str, passwd: Path) -> Account:
    """The task's user as an account of the machine, as an engine's ``--user`` takes it: 'root', 'user', a name in its
    passwd, or a UID, each optionally with ':GROUP' (a GID, or a name in the ``group`` file beside ``passwd``)."""
    user, _, group = name.partition(":")
    if user.isdigit():
        uid, gid, home = int(user), int(user), "/root" if user == "0" else "/"
        shown = "root" if user == "0" else user
    else:
        entry = _named(passwd, 7, user, f"the task's user {user!r} is not an account of the machine (its /etc/passwd has no such name)")
        uid, gid, shown, home = int(entry[2]), int(entry[3]), user, entry[5]
    if group:
        missing = f"the task's user names the group {group!r}, which the machine lacks (its /etc/group has no such name)"
        gid = int(group) if group.isdigit() else int(_named(passwd.with_name("group"), 4, group, missing)[2])
    return Account(uid, gid, shown, home)


def _named(table: Path, fields: int, name: str, missing: str) -> list[str]:
    """The line of ``table`` (a passwd or group file, lines of ``fields`` fields) for ``name``, split at its colons."""
    try:
        lines = table.read_text(errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        parts = line.split(":")
        if len(parts) == fields and parts[0] == name:
            return parts
    raise SandboxError(f"{missing}; name root, user, a system account, or a numeric UID[:GID]")


class MachineSandbox(Sandbox):
    backend_name = "bwrap"
    names_agent_processes = True
    has_terminal = True

    def __init__(self, settings: SandboxSettings, bwrap: str, workroot: Path, folder: Path, lowers: MachineLowers,
                 image: BuiltImage | None = None, image_layers: tuple[Path, ...] = ()) -> None:
        super().__init__(settings)
        self.image = image
        """The task's image as the builder made it (None: the host's folders alone, a native task)."""
        self._image_layers = image_layers
        """Its layers as this sandbox's lowers see them, topmost first."""
        self._bwrap = bwrap
        self._workroot = workroot
        self._lowers = lowers
        self._ids = lowers.ids
        self._folder = folder
        self._layer = folder / "layer"
        self._ctl = folder / "ctl"
        self._io = folder / "io"
        self._layer.mkdir()
        os.chown(self._layer, self._ids.base, self._ids.base)
        self._ctl.mkdir()
        os.chmod(self._ctl, 0o755)
        self._io.mkdir(mode=0o700)
        self._storage = UpperStorage(folder / "rw", self.settings.storage_bytes)
        self._uppers = make_slot_folders(self._storage.path, ["/", *lowers.slots], self._ids.base)
        self._limits = ResourceLimits(self.settings, folder.name)
        self._limits.setup()
        self.enforced_limits = dict(self._limits.enforced)
        self.account = Account(1000, 1000, "user", "/home/user")
        self._groups: tuple[int, ...] = ()
        self.decoys: list[str] = []
        self._workdir = "/home/user"
        self._process: subprocess.Popen | None = None
        self._prepared: Task | None = None
        self._shell = PersistentShell(
            open_channel=self._open_shell,
            files=HostControlFiles(self._ctl, self._io),
            ctl_inside=CTL_INSIDE,
            io_inside=IO_INSIDE,
            workdir=self._workdir,
            output_cap_chars=self.settings.output_cap_chars,
        )
        self._terminal = fifo_terminal(self._shell, self._io, CTL_INSIDE, IO_INSIDE, self.settings.output_cap_chars,
                                       self.settings.terminal_size)
        """The terminal session: its FIFOs lie in the output folder, a bind mount, never in the change record."""
        self._closed = False

    # -- what the harness reads ---------------------------------------------------------
    @property
    def home(self) -> Path:
        """The task's workdir in the sandbox's own layer, as it was before the shell started (the harness writes no more there)."""
        return self._layer / self._workdir.lstrip("/")

    @property
    def control_files(self) -> ControlFiles:
        return self._shell.files

    def slots(self) -> list[LayerSlot]:
        """Every overlay of this sandbox: its own layer topmost among the lowers, then the image's layers, then the machine's."""
        lowers = dict(image_slots(self._lowers, [self._layer, *self._image_layers]))
        return [LayerSlot(mount, lowers[mount], upper, work) for mount, (upper, work) in self._uppers.items()]

    def _view(self) -> MergedView:
        """The image (or the machine) as it lies under this sandbox's own layer."""
        return MergedView(list(self._image_layers), self._lowers.base, {m: lows[-1] for m, lows in self._lowers.slots.items()})

    def change_record(self) -> ChangeRecord:
        return ChangeRecord(tuple(Slot(s.mount, s.upper, s.lowers) for s in self.slots()), self._ids.base, HARNESS_MOUNTS)

    def agent_pids(self) -> list[int]:
        return agent_pids(self._limits, self._process)

    def grading_network(self) -> str | None:
        return agents_network(self.agent_pids())

    # -- preparing ----------------------------------------------------------------------
    def prepare(self, task: Task) -> None:
        if self._prepared is not None:  # a spare, prepared ahead for this task (:mod:`.machine_spares`)
            if self._prepared != task:
                raise SandboxError(f"this sandbox was prepared for task {self._prepared.id}, not {task.id}")
            return
        self._prepare(task)
        self._prepared = task

    def spare_alive(self) -> bool:
        """Whether the shell a spare was prepared with still runs (one killed from outside is not handed out)."""
        return self._process is not None and self._process.poll() is None and self._shell.running

    def _prepare(self, task: Task) -> None:
        settings, notes = task_settings(self.settings, task.resources)
        if settings != self.settings:
            self.settings = settings
            self._limits.release()
            self._limits = ResourceLimits(settings, self._folder.name)
            self._limits.setup()
        size, from_task = storage_size(self.settings, task.resources)
        if from_task:
            self._storage.resize(size)
        notes["storage"] = tmpfs_note("upper layers", self._storage.size_bytes, from_task)
        self.enforced_limits = {**self._limits.enforced, **notes}
        if self.image is not None:
            self.enforced_limits["image"] = f"built from {self.image.dockerfile}: {len(self.image.layers)} layers over {self.image.stand_in}"
        if self.image is not None:
            self._prepare_image(task)
        else:
            self.account = resolve_account(task.user or "user", self._lowers.base / "etc" / "passwd")
        self._workdir = task.workdir.rstrip("/") or "/"
        self._shell.workdir = self._workdir
        owner = (self._ids.host(self.account.uid), self._ids.host(self.account.gid))
        workdir = self.home
        if workdir != self._layer:
            self._make_parents(workdir)
            mode = self._shown_mode(workdir)
            workdir.mkdir()
            os.chmod(workdir, mode)  # mkdir's mode passes through the umask: 0777 would become 0755
            if self.image is not None:  # the image's own folder, as the image made it: owner and mode shown through
                shown = self._view().resolve(self._workdir)[1]
                if shown is not None:
                    os.chown(workdir, shown.st_uid, shown.st_gid)
                else:  # a workdir the image lacks is made as the engine makes it: root's
                    os.chown(workdir, self._ids.base, self._ids.base)
        if self.image is None:  # a built image holds the task's files and setup already: its Dockerfile made them
            if task.environment_dir is not None:
                copy_tree(task.environment_dir, workdir)
            chown_tree(workdir, *owner)
        home_decoys = [f"{self._workdir}/{rel}" for rel in plant_decoys(workdir, task.id, task.inputs, *owner)]
        root = (self._ids.base, self._ids.base)
        avoid = [*home_decoys, *(f"{self._workdir}/{i}" for i in task.inputs), self._workdir]
        self.decoys = home_decoys + plant_machine_decoys(self._layer, task.id, root, self._make_parents, avoid=avoid)
        os.chown(self._io, *owner)
        self._shell.start()
        # A built image ran its Dockerfile's steps already: no setup script stands for them; its healthcheck still runs.
        self.run_setup_script(replace(task, setup_script=None) if self.image is not None else task, self._shell.files, CTL_INSIDE)

    def _prepare_image(self, task: Task) -> None:
        """The account and the environment the image gives: its ``USER`` (unless the task names one) and its ``ENV``."""
        assert self.image is not None
        view = self._view()
        spec = task.user or self.image.user or "root"
        try:
            found = resolve_user(spec, view.read_text("/etc/passwd") or "", view.read_text("/etc/group") or "")
        except ValueError as exc:
            lines = [] if task.user else [f" ({s.where}: {s.step})" for s in self.image.steps if s.step.startswith("USER ")]
            where = lines[-1] if lines else ""  # the image's user: the last USER line built names it
            raise SandboxError(f"task {task.id}: its user {spec!r}{where}: {exc}") from None
        self.account = Account(found.uid, found.gid, found.name, found.home)
        self._groups = found.groups

    def _shown_mode(self, path: Path) -> int:
        """The mode a folder of the layer takes: the one the machine shows there already (image, base layer, host), else 0755."""
        rel = path.relative_to(self._layer)
        if self.image is not None:
            shown = self._view().resolve("/" + str(rel))[1]
            if shown is not None and stat.S_ISDIR(shown.st_mode):
                return stat.S_IMODE(shown.st_mode)
        for candidate in (self._lowers.base / rel, Path("/") / rel):
            try:
                st = os.stat(candidate)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                return stat.S_IMODE(st.st_mode)
        return 0o755

    def _make_parents(self, path: Path) -> None:
        """The layer's folders above ``path``, each with the mode the machine shows, owned by root: a layer hides nothing of a lower's folder."""
        for parent in reversed(path.relative_to(self._layer).parents[:-1]):
            folder = self._layer / parent
            if not folder.is_dir():
                folder.mkdir()
                os.chmod(folder, self._shown_mode(folder))
                os.chown(folder, self._ids.base, self._ids.base)

    def _machine_env(self, account: Account) -> dict[str, str]:
        """What a process of ``account`` starts with: the agent's variables, root's PATH for root, the image's ``ENV``."""
        env = {**AGENT_ENV, "HOME": account.home, "USER": account.name, "LOGNAME": account.name}
        if account.uid == 0:
            env["PATH"] = ROOT_PATH
        if self.image is not None:  # the image's ENV, as an engine's exec gives it
            env.update({key: value for key, value in self.image.env if key not in ("HOME", "USER", "LOGNAME")})
        return env

    def _open_shell(self) -> ProcessChannel:
        self.installer_standins = True
        account = self.account
        env = self._machine_env(account)
        binds = ["--ro-bind", str(self._ctl), CTL_INSIDE, "--bind", str(self._io), IO_INSIDE, *_standins(self._workroot, account, env["PATH"])]
        process = launch_layered(self._bwrap, self._ids, self.slots(), env=env, binds=binds, cwd=self._workdir,
                                 prefix=enter_as(account, self._groups), argv=["bash", "--noprofile", "--norc"],
                                 wrap=self._limits.wrap, stdin=subprocess.PIPE)
        self._process = process
        return ProcessChannel(process)

    # -- the episode ---------------------------------------------------------------------
    def run(self, command: str, timeout_s: float | None = None) -> CommandResult:
        return self._shell.run(command, timeout_s or self.settings.command_timeout_s)

    def send_keys(self, batch: KeystrokeBatch) -> CommandResult:
        return self._terminal.send_keys(batch)

    can_exec = True

    def exec(self, request: ExecRequest) -> ExecResult:
        """Enter the namespaces of the agent's shell (started again if it was stopped) as ``request.user``."""
        if not self._shell.running:
            self._shell.start()
        pid = inside_pid(self.agent_pids())
        if pid is None:
            raise SandboxError("exec: no process of the sandbox is alive to enter")
        user = live_user(pid, request.user) if request.user is not None else \
            ImageUser(self.account.uid, self.account.gid, self.account.name, self.account.home, self._groups)
        env = self._machine_env(Account(user.uid, user.gid, user.name, user.home))
        return exec_entered(pid, request, user, env, self._workdir, self._limits,
                            request.timeout_s or self.settings.command_timeout_s)

    def stop_processes(self) -> None:
        self._shell.stop()
        self._terminal.stop()

    @contextmanager
    def reach_home(self) -> Iterator[ReachedHome]:
        """The workdir through the root of a process inside (the shell, started again for the while if it was stopped):
        the overlays are mounted in the sandbox's own mount namespace alone."""
        stopped = not self._shell.running
        if stopped:
            self._shell.start()
        try:
            pid = inside_pid(self.agent_pids())
            if pid is None:
                raise SandboxError("no process of the sandbox is alive to reach its workdir through")
            account = self.account
            yield ReachedHome(Anchored.at(f"/proc/{pid}/root", self._workdir), self._ids.host(account.uid),
                              self._ids.host(account.gid), self._workdir, root=account.uid == 0)
        finally:
            if stopped:
                self._shell.stop()

    def image_layers(self) -> list[Path]:
        return list(self._image_layers)

    def stood_in(self) -> list[str]:
        """The stand-ins' lines of the agent's sandbox, after what its image's build stood in for (``build:`` lines)."""
        built: list[str] = []
        if self.image is not None:
            built = [f"build: FROM {self.image.stand_in} (the host stands in)"]
            built += [f"build: {line}" for line in self.image.substitutions]
        return built + super().stood_in()

    def storage_exhausted(self) -> bool:
        return self._storage.exhausted()

    def snapshot(self, dest: Path) -> Path:
        """Copy the uppers (whiteouts, opaque marks and owners kept): cost follows the change.

        The copy lies in this sandbox's folder (removed with it), where the range's root, which
        mounts it as a lower, can reach it; ``dest`` names it.
        """
        dest.mkdir(parents=True, exist_ok=True)
        target = self._graded(dest)
        target.mkdir(parents=True)
        copy_tree(self._storage.path / "upper", target)
        return dest

    def _graded(self, snapshot: Path) -> Path:
        return self._folder / "graded" / snapshot.name

    def layered_root(self, snapshot: Path, user: str | None) -> LayeredRoot:
        """What the verifier's sandbox is: the snapshot's uppers over this sandbox's lowers, as ``user`` (None: root)."""
        slots = []
        for slot in self.slots():
            copied = self._graded(snapshot) / slot.upper.name
            slots.append((slot.mount, (copied, *slot.lowers)))
        spec = user or "root"
        if self.image is None:
            account = resolve_account(spec, self._lowers.base / "etc" / "passwd")
        else:  # an account the Dockerfile made (useradd) may be the grader's: the image's own passwd, as built
            view = self._view()
            try:
                found = resolve_user(spec, view.read_text("/etc/passwd") or "", view.read_text("/etc/group") or "")
            except ValueError as exc:
                raise SandboxError(f"the grader's user {spec!r}: {exc}") from None
            account = Account(found.uid, found.gid, found.name, found.home)
        return LayeredRoot(tuple(slots), self._ids.base, account.uid, account.gid, account.name, account.home)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._shell.stop()
        self._terminal.stop()
        self._limits.release()
        self._storage.release()
        shutil.rmtree(self._folder, ignore_errors=True)


def _standins(workroot: Path, account: Account, path: str) -> list[str]:
    """The offline installer stand-ins first on PATH (mount point from the base layer's skeleton)."""
    args = standin_args(workroot)
    args = args[args.index("--ro-bind"):]
    at = args.index("PATH") + 1
    args[at] = f"{BIN_INSIDE}:{path}"
    return args
