"""The docker backend: one container per episode on a real engine, through the Docker SDK.

``docker.from_env()`` picks the engine (``DOCKER_HOST`` and friends). Each episode gets a
container from the suite's base image (:mod:`.image`, built locally) or the task's own
image, with no network, a read-only root, private tmpfs /tmp and /var/tmp, memory, CPU,
process and file-size limits, every capability dropped and ``no-new-privileges``. Its main
process is an idle bash under ``tini``, as root, so the agent (uid 1000) cannot kill it; the
agent's shell and everything it starts run as uid 1000 in /home/user.

Local engine (a unix socket, or tcp to this machine):
    the home is a host folder bind-mounted at /home/user, so ``Sandbox.home`` is a host path
    and the collateral oracle, decoys and faults work unchanged, exactly as with bwrap. The
    harness must run as root (it owns and chowns the files of uid 1000, like bwrap does).

Remote engine (``ssh://`` or ``tcp://`` to another machine; ``TERMRL_DOCKER_LOCAL=0`` forces it):
    nothing is bind-mounted. Home, commands and outputs live in labelled volumes, the home is
    mirrored on this machine after every command (a ``tar`` in the container, or the archive
    API), and the verifier's trusted mounts go in as read-only volumes: see :mod:`.docker_remote`.

Every container carries the labels ``termrl=1``, ``termrl.run`` (this backend's run id),
``termrl.pid`` and ``termrl.host``; :meth:`DockerBackend.cleanup_stale` removes those of
runs whose process is dead, and an ``atexit`` hook removes this process's own when it ends
normally or by Ctrl-C.
"""

from __future__ import annotations

import atexit
import ipaddress
import os
import re
import secrets
import shutil
import signal
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

from ..errors import SandboxError
from ..tasks.model import Task
from .base import CommandResult, IsolatedRun, Sandbox, SandboxBackend, SandboxSettings, TrustedMount, register_backend
from .bwrap import default_workroot
from .control_files import HostControlFiles
from .docker_exec import ExecChannel, ExecStream
from .docker_volumes import SYSTEM_TOP, TrustedVolumes
from .hostfs import chown_tree, copy_tree, pid_alive, snapshot_home
from .image import DEFAULT_TAG, ImageError, build_task_image, image_exists, missing_image_message
from .shell import PersistentShell
from .tarstream import chunked

HOME_INSIDE = "/home/user"
IN_INSIDE = "/run/termrl"
OUT_INSIDE = "/run/termrl-out"
LABEL = "termrl"
_DIR = re.compile(r"^dkr-(\d+)-")

AGENT_ENV = {
    "HOME": HOME_INSIDE,
    "USER": "user",
    "LOGNAME": "user",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "SHELL": "/bin/bash",
    "TMPDIR": "/tmp",
}

# Kill every process of the caller's uid except the pids in $1 and itself, until none is
# left: each round stops them all first (so none runs on, forks or sees its child die), then
# kills them. Builtins only inside a round.
KILLER = r"""
spare=" $1 $$ "
for round in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; do
  hit=
  for sig in STOP KILL; do
    for d in /proc/[0-9]*; do
      p=${d#/proc/}
      case $spare in *" $p "*) continue ;; esac
      read -r st < "$d/stat" 2>/dev/null || continue
      st=${st##*) }
      [ "${st%% *}" = Z ] && continue
      kill -$sig "$p" 2>/dev/null && hit=1
    done
  done
  [ -z "$hit" ] && exit 0
  sleep 0.02
done
exit 1
"""

# The container's main process (under tini, as root): waits on a stdin that never delivers,
# named so that the agent's `pgrep sleep` or `pkill bash` finds none of the harness's.
IDLE = 'printf termrl-idle > /proc/$$/comm; while :; do read -r _ || exec sleep infinity; done'

# The verifier's process: the secret arrives on the exec's stdin and moves to fd 3; the
# exec's stdout moves to fd 4 and carries only the signed result; everything the runner and
# the tests print goes to the exec's stderr (the log).
VERIFY_WRAPPER = (
    'exec 3<&0 4>&1 </dev/null >&2; export TERMRL_SECRET_FD=3 TERMRL_RESULT_FD=4; exec "$@"'
)

_LIVE: dict[str, "DockerBackend"] = {}
_LIVE_LOCK = threading.Lock()


def _sdk():
    try:
        import docker
    except ImportError as exc:
        raise SandboxError("the docker backend needs the Docker SDK: pip install 'pytest-termrl[docker]' (docker>=7.1)") from exc
    return docker


def engine_is_local(base_url: str, docker_host: str | None = None) -> bool:
    """Whether host folders of this machine can be bind-mounted by the engine at base_url."""
    override = os.environ.get("TERMRL_DOCKER_LOCAL")
    if override is not None:
        return override.strip().lower() not in ("0", "false", "no", "")
    url = docker_host or os.environ.get("DOCKER_HOST") or ""
    if not url or url.startswith(("unix://", "npipe://")) or base_url.startswith(("http+docker://localhost", "http+docker://localnpipe")):
        return True
    parsed = urlparse(url)
    if parsed.scheme in ("tcp", "http", "https") and parsed.hostname:
        if parsed.hostname == "localhost":
            return True
        try:
            return ipaddress.ip_address(parsed.hostname).is_loopback
        except ValueError:
            return False
    return False


SSH_IDLE_POOLS = 3
"""Over ssh every API connection is a session of one ssh connection, and sshd allows 10
(MaxSessions). The SDK keeps a pool per request URL (9 of them), which with the shell's and
the verifier's attached streams goes past 10; three idle pools leave room for those."""


def _limit_ssh_pools(api) -> None:
    adapter = api.adapters.get("http+docker://ssh") if hasattr(api, "adapters") else None
    pools = getattr(adapter, "pools", None)
    if pools is None or not hasattr(pools, "_maxsize"):
        return
    with pools.lock:
        pools._maxsize = SSH_IDLE_POOLS
        while len(pools._container) > SSH_IDLE_POOLS:
            _, pool = pools._container.popitem(last=False)
            pool.close()


def _safe_name(text: str, limit: int = 40) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:limit].strip("_.-") or "x"


def _atexit_cleanup() -> None:
    with _LIVE_LOCK:
        backends = list(_LIVE.values())
    for backend in backends:
        backend.close_all()


atexit.register(_atexit_cleanup)


class DockerBackend(SandboxBackend):
    name = "docker"

    def __init__(
        self,
        settings: SandboxSettings,
        workroot: Path | None = None,
        *,
        image: str | None = None,
        client=None,
        local: bool | None = None,
    ) -> None:
        super().__init__(settings, workroot or default_workroot())
        docker = _sdk()
        self._docker = docker
        try:
            self.client = client or docker.from_env()
            self.client.ping()
        except Exception as exc:  # noqa: BLE001 - whatever the SDK raises, the engine is not there
            host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
            raise SandboxError(f"no Docker engine answers at {host} ({type(exc).__name__}: {exc}); start one (.ci/docker-setup.sh) or use --termrl-sandbox=bwrap") from exc
        self.api = self.client.api
        _limit_ssh_pools(self.api)
        self.image = image or os.environ.get("TERMRL_DOCKER_IMAGE") or DEFAULT_TAG
        self.local = engine_is_local(self.api.base_url) if local is None else local
        self.host = socket.gethostname()
        self.run_id = f"{_safe_name(self.host, 20)}-{os.getpid()}-{secrets.token_hex(3)}"
        self.workroot.mkdir(parents=True, exist_ok=True)
        os.chmod(self.workroot, 0o711)
        self._containers: dict[str, str] = {}
        """Container id -> name, of every container this backend created and has not removed."""
        self._volumes: set[str] = set()
        self.trusted_volumes = TrustedVolumes(lambda key: self.create_volume("trusted", key), self.fill_volume)
        self._lock = threading.Lock()
        self.snapshot_images: dict[str, str] = {}
        """Snapshot home -> image of the sandbox it came from: a task's image serves its verifier too."""
        info = self.client.info()
        s = settings
        self.enforced = {
            "memory": f"cgroup:{s.memory_bytes}" if info.get("MemoryLimit", True) else "none",
            "processes": f"cgroup:{s.max_processes}" if info.get("PidsLimit", True) else "none",
            "cpu": f"cgroup:{s.cpus}" if info.get("CpuCfsQuota", True) else "none",
            "file_size": f"rlimit_fsize:{s.file_size_bytes}",
        }
        with _LIVE_LOCK:
            _LIVE[self.run_id] = self
        # Exit hooks run last-registered first: the SDK's transports (paramiko, for ssh://)
        # registered theirs on import and would close the connection before ours runs.
        atexit.unregister(_atexit_cleanup)
        atexit.register(_atexit_cleanup)

    # -- containers ------------------------------------------------------------------
    def labels(self, role: str, label: str) -> dict[str, str]:
        return {
            LABEL: "1",
            "termrl.run": self.run_id,
            "termrl.pid": str(os.getpid()),
            "termrl.host": self.host,
            "termrl.role": role,
            "termrl.label": label[:120],
        }

    def require_image(self, image: str) -> None:
        if not image_exists(self.client, image):
            raise SandboxError(
                f"the docker backend's image {image} is not in the engine at {self.api.base_url}; build the base "
                f"image with `python -m pytest_termrl.sandbox.image build --tag {image}` (or run .ci/docker-setup.sh), "
                "or load a saved one with `docker load -i FILE`"
            )

    def start_container(
        self,
        role: str,
        label: str,
        image: str,
        binds: list[tuple[str, str, bool]],
        tmpfs_extra: dict[str, str] | None = None,
    ):
        """Create and start one container; binds are (host path, path inside, read-only)."""
        mounts = [self._docker.types.Mount(inside, host, type="bind", read_only=ro) for host, inside, ro in binds]
        container = self.create_container(role, label, image, mounts, tmpfs_extra=tmpfs_extra)
        self.start(container, image)
        return container

    def create_container(self, role: str, label: str, image: str, mounts: list, cap_add: tuple[str, ...] = (), tmpfs_extra: dict[str, str] | None = None):
        """Create (not start) one sandbox-shaped container with these docker ``Mount``s."""
        docker = self._docker
        s = self.settings
        tmp_opts = f"rw,exec,nosuid,nodev,mode=1777,size={s.memory_bytes}"
        tmpfs = {"/tmp": tmp_opts, "/var/tmp": tmp_opts, **(tmpfs_extra or {})}
        name = f"termrl-{os.getpid()}-{_safe_name(label)}-{secrets.token_hex(3)}"
        kwargs = dict(
            image=image,
            command=["bash", "--noprofile", "--norc", "-c", IDLE],
            name=name,
            user="0:0",
            working_dir=HOME_INSIDE,
            hostname="sandbox",
            environment=AGENT_ENV,
            labels=self.labels(role, label),
            network_mode="none",
            mem_limit=s.memory_bytes,
            memswap_limit=s.memory_bytes,
            nano_cpus=int(s.cpus * 1e9),
            pids_limit=s.max_processes,
            ulimits=[docker.types.Ulimit(name="fsize", soft=s.file_size_bytes, hard=s.file_size_bytes)],
            cap_drop=["ALL"],
            cap_add=list(cap_add) or None,
            security_opt=["no-new-privileges"],
            read_only=True,
            tmpfs=tmpfs,
            mounts=mounts,
            ipc_mode="private",
            init=True,
            detach=True,
            stdin_open=True,
        )
        with self._lock:
            try:
                container = self.client.containers.create(**kwargs)
            except docker.errors.ImageNotFound as exc:
                raise SandboxError(f"image {image} is not in the engine: {exc.explanation}") from exc
            except docker.errors.APIError as exc:
                raise SandboxError(f"creating a container from {image} failed: {exc.explanation or exc}") from exc
            self._containers[container.id] = name
        return container

    def start(self, container, image: str) -> None:
        try:
            container.start()
        except self._docker.errors.APIError as exc:
            self.remove_container(container.id)
            raise SandboxError(f"starting a container from {image} failed: {exc.explanation or exc}") from exc

    # -- volumes (a remote engine's homes and trusted mounts) ------------------------------
    def create_volume(self, role: str, label: str) -> str:
        name = f"termrl-{os.getpid()}-{role}-{secrets.token_hex(5)}"
        try:
            self.client.volumes.create(name=name, labels=self.labels(role, label))
        except self._docker.errors.APIError as exc:
            raise SandboxError(f"creating volume {name} failed: {exc.explanation or exc}") from exc
        with self._lock:
            self._volumes.add(name)
        return name

    def remove_volume(self, name: str) -> None:
        try:
            self.api.remove_volume(name, force=True)
        except self._docker.errors.NotFound:
            pass
        with self._lock:
            self._volumes.discard(name)
        self.trusted_volumes.forget(name)

    def fill_volume(self, name: str, archive: bytes) -> None:
        """Put a tar into a volume, through a container that is created but never started."""
        self.require_image(self.image)
        mount = self._docker.types.Mount("/fill", name, type="volume", no_copy=True)
        container = self.create_container("fill", name, self.image, [mount])
        try:
            if not container.put_archive("/fill", chunked(archive)):
                raise SandboxError(f"the engine refused the contents of volume {name}")
        finally:
            self.remove_container(container.id)

    def remove_container(self, container_id: str) -> None:
        try:
            self.api.remove_container(container_id, force=True, v=True)
        except self._docker.errors.NotFound:
            pass
        except self._docker.errors.APIError as exc:
            if "already in progress" not in str(exc):
                raise
        with self._lock:
            self._containers.pop(container_id, None)

    def close_all(self) -> None:
        """Remove every container this backend still holds, and this process's folders (atexit, Ctrl-C)."""
        with self._lock:
            ids, volumes = list(self._containers), list(self._volumes)
        for remove, names in ((self.remove_container, ids), (self.remove_volume, volumes)):
            for name in names:
                try:
                    remove(name)
                except Exception:  # noqa: BLE001 - best effort at exit
                    pass
        for path in self.workroot.glob(f"dkr-{os.getpid()}-*"):
            shutil.rmtree(path, ignore_errors=True)

    def close(self) -> None:
        """close_all, then close the engine client: each request URL keeps a pooled connection."""
        self.close_all()
        with _LIVE_LOCK:
            _LIVE.pop(self.run_id, None)
        self.client.close()

    def new_sandbox_dir(self, label: str) -> Path:
        path = self.workroot / f"dkr-{os.getpid()}-{_safe_name(label, 60)}-{secrets.token_hex(4)}"
        path.mkdir()
        os.chmod(path, 0o711)
        return path

    # -- the agent's sandbox ----------------------------------------------------------
    def create(self, label: str) -> "DockerSandbox":
        if os.geteuid() != 0:
            raise SandboxError("the docker backend runs as root (it owns the agent's files as uid 1000 on the host); use sudo, or --termrl-sandbox=bwrap")
        if not self.local:
            from .docker_remote import RemoteDockerSandbox

            return RemoteDockerSandbox(self, self.new_sandbox_dir(label), label)
        return DockerSandbox(self, self.new_sandbox_dir(label), label)

    # -- the verifier's one-shot process -----------------------------------------------
    def run_isolated(
        self,
        home: Path,
        argv: list[str],
        mounts: list[TrustedMount],
        secret: bytes,
        timeout_s: float,
        cwd: str = HOME_INSIDE,
    ) -> IsolatedRun:
        if not self.local:
            from .docker_remote import run_isolated_remote

            return run_isolated_remote(self, home, argv, mounts, secret, timeout_s, cwd)
        binds = [(str(home), HOME_INSIDE, False)]
        trusted = _narrow_system_mounts(mounts)
        skeleton = self.new_sandbox_dir("verify-skel")
        try:
            binds += _skeleton_binds(skeleton, trusted)
            binds += [(str(m.host_path), m.sandbox_path, True) for m in trusted]
            binds.append(("/dev/null", "/etc/ld.so.preload", True))
            return self._run_verifier(home, binds, argv, secret, timeout_s, cwd)
        finally:
            shutil.rmtree(skeleton, ignore_errors=True)

    def _run_verifier(self, home: Path, binds, argv: list[str], secret: bytes, timeout_s: float, cwd: str) -> IsolatedRun:
        container = self.start_container("verify", home.parent.name, self.snapshot_image(home), binds)
        try:
            return self.exec_verifier(container, argv, secret, timeout_s, cwd)
        finally:
            self.remove_container(container.id)

    def snapshot_image(self, home: Path) -> str:
        """The image of the sandbox a snapshot came from: a task's image serves its verifier too."""
        return self.snapshot_images.get(str(home), self.image)

    def exec_verifier(self, container, argv: list[str], secret: bytes, timeout_s: float, cwd: str) -> IsolatedRun:
        """Run the verifier's process in a started container: secret in, signed result and log out."""
        payload, log = bytearray(), bytearray()
        stream = ExecStream(
            self.api, container.id, ["/bin/sh", "-c", VERIFY_WRAPPER, "termrl-verify", *argv],
            user=f"{self.settings.agent_uid}:{self.settings.agent_gid}", workdir=cwd, environment=AGENT_ENV,
        )
        try:
            stream.send(secret)
            stream.close_stdin()
            for kind, data in stream.frames(time.monotonic() + timeout_s):
                target = payload if kind == 1 else log
                if len(target) < 16 * 1024 * 1024:
                    target += data
            timed_out = stream.timed_out
            rc = None if timed_out else stream.exit_code()
        finally:
            stream.close()
        return IsolatedRun(rc, bytes(payload), bytes(log[-20000:]).decode(errors="replace"), timed_out)

    # -- leftovers of killed runs ---------------------------------------------------------
    def cleanup_stale(self) -> list[str]:
        """Remove containers, volumes and images of dead runs on this host, and their folders."""
        removed = []
        docker = self._docker
        try:
            containers = self.api.containers(all=True, filters={"label": f"{LABEL}=1"})
        except docker.errors.APIError:
            containers = []
        for info in containers:
            labels = info.get("Labels") or {}
            if labels.get("termrl.host") != self.host:
                continue
            try:
                pid = int(labels.get("termrl.pid", "0"))
            except ValueError:
                continue
            if pid and pid_alive(pid):
                continue
            try:
                self.api.remove_container(info["Id"], force=True, v=True)
                removed.append("container:" + (info.get("Names") or [info["Id"][:12]])[0].lstrip("/"))
            except docker.errors.APIError:
                pass
        for kind, lister, remover in (
            ("volume", lambda: (self.api.volumes(filters={"label": f"{LABEL}=1"}) or {}).get("Volumes") or [], lambda v: self.api.remove_volume(v["Name"], force=True)),
        ):
            try:
                items = lister()
            except docker.errors.APIError:
                items = []
            for item in items:
                labels = item.get("Labels") or {}
                if labels.get("termrl.host") != self.host or pid_alive(int(labels.get("termrl.pid", "0") or 0)):
                    continue
                try:
                    remover(item)
                    removed.append(f"{kind}:{item['Name']}")
                except docker.errors.APIError:
                    pass
        for path in sorted(self.workroot.glob("dkr-*")):
            match = _DIR.match(path.name)
            if match and pid_alive(int(match.group(1))):
                continue
            shutil.rmtree(path, ignore_errors=True)
            removed.append(str(path))
        return removed


def _skeleton_binds(skeleton: Path, mounts: list[TrustedMount]) -> list[tuple[str, str, bool]]:
    """Read-only stand-ins for the top folders of mount points outside the image's system folders.

    A trusted mount under /root (a pyenv interpreter, say) sits in a folder the image keeps
    0700, which the agent's uid cannot cross. An empty root-owned 0755 tree holding just the
    mount points goes over it (it hides only the image's /root, which the verifier never needs).
    """
    binds = []
    for mount in sorted(mounts, key=lambda m: m.sandbox_path):
        parts = Path(mount.sandbox_path).parts
        if len(parts) < 3 or parts[1] in SYSTEM_TOP:
            continue
        top = skeleton / parts[1]
        target = top.joinpath(*parts[2:])
        if mount.host_path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.touch()
            os.chmod(target, 0o644)
            target = target.parent
        for folder in [target, *target.parents]:
            if folder == skeleton:
                break
            os.chmod(folder, 0o755)
        bind = (str(top), f"/{parts[1]}", True)
        if bind not in binds:
            binds.append(bind)
    return binds


def _narrow_system_mounts(mounts: list[TrustedMount]) -> list[TrustedMount]:
    """Trusted mounts, with a system prefix (/usr, /usr/local) replaced by its Python parts.

    bwrap can bind the host's /usr whole (it has no image); here that would replace the
    image's tools by the host's, so only the interpreter and its library folders go in.
    """
    import sys
    import sysconfig

    narrowed = []
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for mount in mounts:
        if mount.sandbox_path not in ("/", "/usr", "/usr/local"):
            narrowed.append(mount)
            continue
        host = mount.host_path
        candidates = [host / "lib" / version, host / "bin" / version, host / "lib" / "python3" / "dist-packages", host / "local" / "lib" / version]
        libdir, library = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
        if libdir and library:
            candidates.append(Path(libdir) / library)
        for path in candidates:
            if path.exists() and (path == host or host in path.parents):
                narrowed.append(TrustedMount(path, str(path)))
    return narrowed


class DockerSandbox(Sandbox):
    backend_name = "docker"

    def __init__(self, backend: DockerBackend, folder: Path, label: str) -> None:
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
        self.container = None
        self.enforced_limits = dict(backend.enforced)
        self._shell = PersistentShell(
            open_channel=self._open_shell,
            files=self._control_files(),
            ctl_inside=IN_INSIDE,
            io_inside=OUT_INSIDE,
            workdir=HOME_INSIDE,
            output_cap=s.output_cap_chars,
        )
        self._procs_path: Path | None = None
        self._closed = False

    def _control_files(self) -> HostControlFiles:
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
            (str(self._in), IN_INSIDE, True),
            (str(self._out), OUT_INSIDE, False),
        ]
        return self._backend.start_container("agent", self._label, self.image, binds)

    def _open_shell(self) -> ExecChannel:
        """The agent's bash in an attached exec, as uid 1000 in the home."""
        container = self.ensure_container()
        s = self.settings
        cmd = ["bash", "--noprofile", "--norc"]
        try:
            stream = ExecStream(self._backend.api, container.id, cmd, f"{s.agent_uid}:{s.agent_gid}", HOME_INSIDE, AGENT_ENV)
        except self._backend._docker.errors.APIError as exc:
            raise SandboxError(f"starting a shell in {container.name} failed: {exc.explanation or exc}") from exc
        return ExecChannel(stream, lambda: self.kill_agent(spare=set()))

    def kill_agent(self, spare: set[int]) -> None:
        """SIGKILL every process of the agent's uid in the container but ``spare`` (pids inside)."""
        if self.container is None:
            return
        if self._backend.local and self._kill_from_host(spare):
            return
        self._kill_from_inside(spare)

    def _cgroup_procs(self) -> Path | None:
        if self._procs_path is not None:
            return self._procs_path
        try:
            self.container.reload()
            pid = self.container.attrs["State"]["Pid"]
            lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        except (OSError, KeyError, TypeError):
            return None
        for line in lines:
            _, controllers, path = line.split(":", 2)
            if "pids" in controllers.split(","):
                candidate = Path("/sys/fs/cgroup/pids") / path.lstrip("/") / "cgroup.procs"
            elif controllers == "" and len(lines) == 1:
                candidate = Path("/sys/fs/cgroup") / path.lstrip("/") / "cgroup.procs"
            else:
                continue
            if candidate.is_file():
                self._procs_path = candidate
                return candidate
        return None

    def _kill_from_host(self, spare: set[int]) -> bool:
        """Kill through the container's cgroup, as root on the host: immune to a full pid table."""
        procs = self._cgroup_procs()
        if procs is None:
            return False
        uid = self.settings.agent_uid
        for _ in range(50):
            try:
                pids = [int(p) for p in procs.read_text().split()]
            except OSError:
                return True  # the cgroup is gone: so is every process in it
            victims = []
            for pid in pids:
                info = _proc_status(pid)
                if info is None or info["uid"] != uid or info["state"] == "Z" or info["nspid"] in spare:
                    continue
                victims.append(pid)
            if not victims:
                return True
            # Stop them all first, so none runs on (a shell into the rest of its command,
            # a fork bomb into new children) while the others die.
            for sig in (signal.SIGSTOP, signal.SIGKILL):
                for pid in victims:
                    try:
                        os.kill(pid, sig)
                    except (ProcessLookupError, PermissionError):
                        pass
            time.sleep(0.01)
        return True

    def _kill_from_inside(self, spare: set[int]) -> None:
        api = self._backend.api
        s = self.settings
        cmd = ["bash", "--noprofile", "--norc", "-c", KILLER, "termrl-kill", " ".join(str(p) for p in sorted(spare))]
        for attempt in range(10):
            try:
                exec_id = api.exec_create(self.container.id, cmd, user=f"{s.agent_uid}:{s.agent_gid}", stdin=False)["Id"]
                api.exec_start(exec_id)
                if api.exec_inspect(exec_id).get("ExitCode") == 0:
                    return  # a full pass found nothing left to kill
            except self._backend._docker.errors.APIError:
                pass
            time.sleep(0.05 * (attempt + 1))  # the pid table is full for a moment: try again
        # Last resort: restart the container (the home survives; /tmp does not).
        try:
            self.container.restart(timeout=0)
        except self._backend._docker.errors.APIError:
            pass
        self._procs_path = None

    # -- the Sandbox API ---------------------------------------------------------------
    def prepare(self, task: Task) -> None:
        s = self.settings
        image = task_image_for(task, self._backend)
        if image is not None and image != self.image:
            if self.container is not None:
                self._shell.stop()
                self._backend.remove_container(self.container.id)
                self.container = None
            self.image = image
        if task.environment_dir is not None:
            copy_tree(task.environment_dir, self._home)
        chown_tree(self._home, s.agent_uid, s.agent_gid)
        self.ensure_container()
        if not self._shell.running:
            try:
                self._shell.start()
            except RuntimeError as exc:
                raise SandboxError(f"{exc} (with TERMRL_DOCKER_LOCAL=1 on an engine of another machine, it cannot see {self._folder})") from exc
        self.run_setup_script(task, self._shell.files, IN_INSIDE)

    def run(self, command: str, timeout_s: float | None = None) -> CommandResult:
        return self._shell.run(command, timeout_s or self.settings.command_timeout_s)

    def stop_processes(self) -> None:
        if self._shell.running:
            self._shell.stop()
        else:
            self.kill_agent(spare=set())

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
            if self.container is not None:
                self._backend.remove_container(self.container.id)
        finally:
            shutil.rmtree(self._folder, ignore_errors=True)


def task_image_for(task: Task, backend: DockerBackend) -> str | None:
    """The image a task asks for: ``docker_image`` in its extra fields, or its own Dockerfile."""
    named = task.extra.get("docker_image") if isinstance(task.extra, dict) else None
    if named:
        if not image_exists(backend.client, named):
            raise SandboxError(missing_image_message(named, task.root / "task.toml"))
        return str(named)
    context = Path(task.extra["dockerfile_dir"]) if isinstance(task.extra, dict) and task.extra.get("dockerfile_dir") else task.root
    if (context / "Dockerfile").is_file():
        try:
            return build_task_image(context, client=backend.client)
        except ImageError as exc:
            raise SandboxError(str(exc)) from exc
    return None


def _proc_status(pid: int) -> dict | None:
    try:
        with open(f"/proc/{pid}/status") as handle:
            text = handle.read()
    except OSError:
        return None
    info = {"uid": -1, "state": "?", "nspid": -1}
    for line in text.splitlines():
        if line.startswith("Uid:"):
            info["uid"] = int(line.split()[1])
        elif line.startswith("State:"):
            info["state"] = line.split()[1]
        elif line.startswith("NSpid:"):
            info["nspid"] = int(line.split()[-1])
    return info


register_backend("docker", DockerBackend)
