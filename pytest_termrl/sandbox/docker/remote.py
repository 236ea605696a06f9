"""The docker sandbox on a remote engine (``DOCKER_HOST=tcp://...`` or ``ssh://...``; ``TERMRL_DOCKER_LOCAL=0`` forces it).

The engine sees none of this machine's folders, so nothing is bind-mounted. The agent's
home lives in a labelled volume; the shell's command and output folders in two more. The
harness keeps a mirror of the home on this machine, and ``Sandbox.home`` is that mirror,
so the collateral oracle, faults and decoys work on it unchanged:

- after every command (and when the episode stops) the home comes back whole, with the
  command's output, in one ``tar`` run as root in the container (the archive API when no
  process can start there, and always over ssh, where each exec costs a new channel), and
  replaces the mirror, so the oracle judges what the engine holds;
- before a command, if the harness changed the mirror since (the task's files, a fault,
  the decoys), the container's home is emptied and the mirror goes in by ``put_archive``.

Emptying a home the agent may have locked (a 000 folder, a sticky one) needs root with
CAP_DAC_OVERRIDE and CAP_FOWNER, and giving a fresh volume its owner needs CAP_CHOWN (the
engine skips an archive's ``.`` entry), so the agent's container keeps those three in its
bounding set; only the harness's own root execs use them: the agent's shell runs as uid
1000 with no capabilities and ``no-new-privileges``. The verifier gets a fresh container,
with every capability dropped, whose volume at /home receives the snapshot as ``user/``
(so the engine applies its owner and mode) and whose trusted mounts are read-only volumes
(:mod:`.volumes`).
"""

from __future__ import annotations

import hashlib
import io
import os
import secrets
import shutil
import stat
import tarfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ...errors import SandboxError
from ..base import CommandResult, IsolatedRequest, KeystrokeBatch
from ..hostfs import walk_tree
from ..layout import CTL_INSIDE, HOME_INSIDE, IO_INSIDE
from ..output import REPLACED_OUTPUT
from ..standin_shims import SHIMS_INSIDE, shims_archive
from ..tarstream import TarStreamError, chunked, extract_tree, read_capped_handle, read_capped_member, tar_tree
from .engine import DockerEngine
from .exec import exec_stdout, root_exec
from .layout import HOME_PARENT, narrow_system_mounts
from .local import DockerSandbox

HARNESS_CAPS = ("CHOWN", "DAC_OVERRIDE", "FOWNER")
"""What the harness's root execs need to empty and own the agent's home; the agent never holds them."""

MAX_ARGUMENT_CHARS = 100_000
"""Commands up to this long travel as an exec argument (the kernel's limit is 128 KiB)."""

WRITE_SCRIPT = 'text=$1 dest=$2; shift 2; rm -rf -- "$@" && printf %s "$text" > "$dest"'


class RemoteControlFiles:
    """The shell's command and output folders as volumes on the engine.

    A command goes in by one root exec (``printf`` of an argument, removing the previous
    command's files on the way); its output comes back with the home in one archive
    (:meth:`RemoteDockerSandbox.fetch`). Both fall back to the archive API, which needs no
    process in the container (a full process table, an image without ``tar``, or ssh, where
    every exec costs a new channel). There the previous command file is overwritten by an
    empty one in the same upload as the next, and the output folder is cleared by the
    agent's own shell (an ``rm`` before the redirection): a second upload per command would
    cost a round trip.
    """

    def __init__(self, sandbox: "RemoteDockerSandbox") -> None:
        self._sandbox = sandbox
        self._previous_command: str | None = None
        self._stale_outputs: list[str] = []
        """Output files the harness clears itself, in the exec that writes the next command."""

    def discard(self, n: int) -> str:
        if n <= 1:
            return ""
        self._previous_command = f"cmd.{n - 1}"
        outputs = [f"out.{n - 1}", f"out.{n}"]
        if self._sandbox.execs_are_cheap:
            self._stale_outputs = outputs
            return ""
        self._stale_outputs = []
        return "rm -rf -- " + " ".join(f"{IO_INSIDE}/{name}" for name in outputs) + " 2>/dev/null; "

    def write(self, name: str, text: str) -> None:
        previous, self._previous_command = self._previous_command, None
        outputs, self._stale_outputs = self._stale_outputs, []
        container = self._sandbox.container or self._sandbox.ensure_container()
        if self._sandbox.execs_are_cheap and _fits_an_argument(text):
            stale = [f"{CTL_INSIDE}/{previous}"] * bool(previous) + [f"{IO_INSIDE}/{each}" for each in outputs]
            try:
                result = container.exec_run(["sh", "-c", WRITE_SCRIPT, "termrl-write", text, f"{CTL_INSIDE}/{name}", *stale], user="0:0")
                if result.exit_code == 0:
                    return
            except Exception:  # noqa: BLE001 - the archive API below needs no process in the container
                pass
        emptied = {previous: ""} if previous else {}
        _put(container, CTL_INSIDE, _files_archive({**emptied, name: text}, 0, 0))
        if outputs:  # the exec that was to clear them could not run: rare
            s = self._sandbox.settings
            _put(container, IO_INSIDE, _files_archive(dict.fromkeys(outputs, ""), s.agent_uid, s.agent_gid))

    def read_output(self, name: str, cap: int) -> tuple[str, bool]:
        return self._sandbox.fetch(name, cap)


class RemoteDockerSandbox(DockerSandbox):
    """A docker sandbox whose home, commands and outputs live in volumes on the engine."""

    def __init__(self, backend: DockerEngine, folder: Path, label: str) -> None:
        self.volumes: dict[str, str] = {}
        self.execs_are_cheap = not backend.api.base_url.startswith("http+docker://ssh")
        """Over ssh every exec opens a new channel and runs ``docker system dial-stdio`` on the
        far side (a quarter second); archive calls reuse the pooled connections instead."""
        self._fetched = False
        self._synced: str | None = None
        """Signature of the mirror when it last matched the container's home."""
        super().__init__(backend, folder, label)

    @property
    def backend(self) -> DockerEngine:
        return self._backend

    def _control_files(self) -> RemoteControlFiles:
        return RemoteControlFiles(self)

    def _new_container(self):
        if self.alias is not None:
            raise SandboxError(no_alias_here(self.alias))
        backend = self._backend
        Mount = backend.sdk.types.Mount
        for role in ("home", "ctl", "out", "standins"):
            if role not in self.volumes:
                self.volumes[role] = backend.create_volume(role, self._label)
        mounts = [
            Mount(HOME_INSIDE, self.volumes["home"], type="volume", no_copy=True),
            Mount(CTL_INSIDE, self.volumes["ctl"], type="volume", no_copy=True),
            Mount(IO_INSIDE, self.volumes["out"], type="volume", no_copy=True),
            Mount(SHIMS_INSIDE, self.volumes["standins"], type="volume", no_copy=True),  # the rootfs may be read-only
        ]
        container = backend.create_container("agent", self._label, self.image, mounts, cap_add=HARNESS_CAPS, settings=self.settings)
        backend.start(container, self.image)
        s = self.settings
        try:
            root_exec(container, f"chown 0:0 {CTL_INSIDE} {SHIMS_INSIDE} && chmod 755 {CTL_INSIDE} {SHIMS_INSIDE} && "
                                 f"chown {s.agent_uid}:{s.agent_gid} {IO_INSIDE} && chmod 700 {IO_INSIDE}")
            _put(container, SHIMS_INSIDE, shims_archive())  # the offline installer stand-ins (the shell's PATH has them first)
        except BaseException:
            backend.remove_container(container.id)
            raise
        self._synced = None  # a new container: its home must be filled from the mirror
        self.installer_standins = True
        return container

    # -- the mirror ------------------------------------------------------------------------
    def push(self) -> None:
        """Make the container's home what the mirror holds."""
        container = self.container or self.ensure_container()
        root = os.lstat(self._home)
        root_exec(container, f"find {HOME_INSIDE} -mindepth 1 -delete && chown {root.st_uid}:{root.st_gid} {HOME_INSIDE} && chmod {stat.S_IMODE(root.st_mode):o} {HOME_INSIDE}")
        _put(container, HOME_INSIDE, tar_tree(self._home))
        self._synced = home_signature(self._home)

    def fetch(self, output: str | None = None, cap: int = 0) -> tuple[str, bool]:
        """Replace the mirror by the container's home; with ``output``, also read that output file.

        One ``tar`` run as root in the container carries both (it archives links and FIFOs as
        such, never following or opening them); if it cannot run, the archive API does it.
        """
        container = self.container
        captured: list[tuple[str, bool]] = []
        out_name = f"{IO_INSIDE}/{output}".lstrip("/") if output else None

        def aside(tar: tarfile.TarFile, member: tarfile.TarInfo) -> None:
            name = member.name.rstrip("/")
            if out_name and name.startswith(out_name + "/"):
                return  # the agent made its output file a folder: what is in it is not output
            if name != out_name or captured:
                raise TarStreamError(f"archive member {member.name!r} was not asked for")
            captured.append(read_capped_handle(tar.extractfile(member), member.size, cap) if member.isreg() else (REPLACED_OUTPUT, False))

        paths = [HOME_INSIDE.lstrip("/")] + ([out_name] if out_name else [])
        try:
            if not self.execs_are_cheap:
                raise SandboxError("archive API preferred")
            stream = exec_stdout(container, ["tar", "--numeric-owner", "--ignore-failed-read", "-C", "/", "-cf", "-", *paths])
            try:
                self._replace_mirror(stream, HOME_INSIDE.lstrip("/"), aside)
            finally:
                stream.close()  # on a refused archive too: ends the exec and frees its connection
        except (SandboxError, TarStreamError, tarfile.TarError):
            captured.clear()
            try:
                self._pull_by_archive()
            except (TarStreamError, tarfile.TarError) as exc:
                raise SandboxError(str(exc)) from exc
            if output:
                captured.append(self._output_by_archive(output, cap))
        return captured[0] if captured else ("", False)

    def _existing_container(self):
        """The container the home is read back from (the shell's commands created it)."""
        if self.container is None:
            raise SandboxError("the sandbox has no container to read back from")
        return self.container

    def _pull_by_archive(self) -> None:
        backend = self._backend
        container = self._existing_container()
        try:
            stream, _ = backend.api.get_archive(container.id, HOME_INSIDE)
        except backend.sdk.errors.APIError as exc:
            raise SandboxError(f"reading the home back from {container.name} failed: {exc.explanation or exc}") from exc
        self._replace_mirror(stream, Path(HOME_INSIDE).name)

    def _output_by_archive(self, name: str, cap: int) -> tuple[str, bool]:
        backend = self._backend
        try:
            stream, meta = backend.api.get_archive(self._existing_container().id, f"{IO_INSIDE}/{name}")
        except backend.sdk.errors.APIError:
            return "", False  # no such file: the agent removed it, or the shell never wrote it
        if meta.get("linkTarget"):
            return REPLACED_OUTPUT, False
        try:
            result = read_capped_member(stream, cap)
        except (tarfile.TarError, OSError):
            return "", False
        return result if result is not None else (REPLACED_OUTPUT, False)

    def _replace_mirror(self, stream, top: str, aside=None) -> None:
        landing = self._folder / f"pull-{secrets.token_hex(4)}"
        landing.mkdir(mode=0o700)
        old = self._folder / f"old-{secrets.token_hex(4)}"
        try:
            fresh = extract_tree(stream, landing, top, aside)
            os.rename(self._home, old)
            os.rename(fresh, self._home)
        except TarStreamError as exc:
            raise TarStreamError(f"the home read back from {self._existing_container().name} is not acceptable: {exc}") from exc
        finally:
            shutil.rmtree(landing, ignore_errors=True)
            shutil.rmtree(old, ignore_errors=True)
        self._synced = home_signature(self._home)
        self._fetched = True

    # -- the Sandbox API -----------------------------------------------------------------
    def run(self, command: str, timeout_s: float | None = None) -> CommandResult:
        if self.container is None:
            self.ensure_container()
        self.push_if_changed()
        self._fetched = False
        result = super().run(command, timeout_s)
        if not self._fetched:  # the shell read the output with the home; else fetch the home now
            self.fetch()
        return result

    def send_keys(self, batch: KeystrokeBatch) -> CommandResult:
        """Type into the terminal session; the home goes in first if the harness changed it, and comes back after."""
        if self.container is None:
            self.ensure_container()
        self.push_if_changed()
        try:
            return super().send_keys(batch)
        finally:
            self.fetch()

    def push_if_changed(self) -> None:
        """The harness changed the mirror since it last matched (files, a fault, decoys): send it."""
        if self._synced != home_signature(self._home):
            self.push()

    def _kill_from_host(self, spare: set[int]) -> bool:
        return False  # the engine's cgroups are on another machine: the killer runs inside

    def stop_processes(self) -> None:
        super().stop_processes()
        if self.container is not None:
            self.push_if_changed()
            self.fetch()

    def close(self) -> None:
        if self._closed:
            return
        try:
            super().close()
        finally:
            for name in self.volumes.values():
                try:
                    self._backend.remove_volume(name)
                except Exception:  # noqa: BLE001 - the backend's exit hook tries again
                    pass


class RemoteMode:
    """How the backend uses an engine of another machine: volumes only, nothing bind-mounted."""

    local = False
    sandbox = RemoteDockerSandbox

    @staticmethod
    @contextmanager
    def verifier_container(engine: DockerEngine, request: IsolatedRequest, alias: str | None = None) -> Iterator:
        """A started container whose home and trusted mounts are volumes filled from here; removed after.

        The home's volume holds /home and the home in it, which a volume cannot show a second
        time at a task's workdir elsewhere (``alias``, /app): refused by name (:func:`no_alias_here`).
        """
        if alias is not None:
            raise SandboxError(no_alias_here(alias))
        home = request.home
        Mount = engine.sdk.types.Mount
        image = engine.snapshot_image(home)
        engine.require_image(image)
        # A system prefix (/usr) is narrowed to its Python parts first, as on a local engine: a
        # volume over the image's whole /usr would hide its shell and tools.
        trusted = engine.trusted_volumes.volumes_for(narrow_system_mounts(request.mounts))
        home_volume = engine.create_volume("verify-home", home.parent.name)
        try:
            volume_mounts = [Mount(HOME_PARENT, home_volume, type="volume", no_copy=True)]
            volume_mounts += [Mount(at, name, type="volume", read_only=True, no_copy=True) for at, name in trusted]
            container = engine.create_container(
                "verify", home.parent.name, image, volume_mounts, settings=request.settings, network=request.network
            )
            try:
                _put(container, HOME_PARENT, tar_tree(home, Path(HOME_INSIDE).name))
                engine.start(container, image)
                yield container
            finally:
                engine.remove_container(container.id)
        finally:
            engine.remove_volume(home_volume)


def no_alias_here(alias: str) -> str:
    """Why a task whose workdir is not under the home (``alias``) cannot run on an engine of another machine."""
    return (
        f"the task's workdir {alias} is not under {HOME_INSIDE}: on an engine of another machine the home is a volume "
        f"that cannot be shown there too (the verifier's holds {HOME_PARENT}); run it on an engine of this machine or on bwrap"
    )


def home_signature(root: Path) -> str:
    """A digest of every path's lstat under root: any change by anyone alters it (ctime included)."""
    digest = hashlib.sha256()
    for rel, path in [(".", os.fspath(root)), *walk_tree(root)]:
        try:
            st = os.lstat(path)
        except OSError:
            continue
        digest.update(
            f"{rel}\0{st.st_mode}\0{st.st_uid}\0{st.st_gid}\0{st.st_size}\0"
            f"{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}\n".encode(errors="surrogateescape")
        )
    return digest.hexdigest()


def _put(container, inside: str, archive: bytes) -> None:
    try:
        accepted = container.put_archive(inside, chunked(archive))
    except Exception as exc:  # noqa: BLE001 - any SDK error: the engine did not take it
        raise SandboxError(f"copying into {inside} of {container.name} failed: {exc}") from exc
    if not accepted:
        raise SandboxError(f"the engine refused a copy into {inside} of {container.name}")


def _fits_an_argument(text: str) -> bool:
    """Whether text survives as an exec argument: JSON over the API carries only valid UTF-8
    (bytes that are not arrive here as surrogates), and the kernel takes no NUL."""
    if len(text) > MAX_ARGUMENT_CHARS or "\0" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _files_archive(files: dict[str, str], uid: int, gid: int) -> bytes:
    """A tar of regular files (mode 0644) with these names, texts and owner."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, text in files.items():
            data = text.encode(errors="surrogateescape")
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.uid, info.gid = len(data), 0o644, uid, gid
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
