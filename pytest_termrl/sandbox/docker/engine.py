"""One run's Docker engine: the SDK and client, whether the engine is on this machine, what the run holds there.

``docker.from_env()`` picks the engine (``DOCKER_HOST`` and friends). Every container and
volume the run creates carries the labels ``termrl=1``, ``termrl.run`` (the run's id),
``termrl.pid`` and ``termrl.host``. The engine object keeps those it has not removed yet;
an ``atexit`` hook removes those of every engine still open when the process ends normally
or by Ctrl-C, and :meth:`DockerEngine.cleanup_stale` those of runs whose process is dead
(:mod:`.cleanup`).
"""

from __future__ import annotations

import atexit
import ipaddress
import os
import re
import secrets
import socket
import threading
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlparse

from ...errors import SandboxError
from ..base import SandboxBackend, SandboxSettings
from .images.client import DEFAULT_TAG, image_exists, sdk
from ..layout import SandboxFolders
from ..tarstream import chunked
from .cleanup import remove_dead_images, remove_dead_runs
from .layout import LABEL, container_options
from .volumes import TrustedVolumes

SSH_IDLE_POOLS = 3
"""Over ssh every API connection is a session of one ssh connection, and sshd allows 10
(MaxSessions). The SDK keeps a pool per request URL (9 of them), which with the shell's and
the verifier's attached streams goes past 10; three idle pools leave room for those."""


def engine_is_local(base_url: str, docker_host: str | None = None) -> bool:
    """Whether host folders of this machine can be bind-mounted by the engine at base_url."""
    override = os.environ.get("TERMRL_DOCKER_LOCAL")
    if override is not None:
        value = override.strip().lower()
        if value not in ("1", "true", "yes", "0", "false", "no", ""):
            raise SandboxError(f"TERMRL_DOCKER_LOCAL={override!r}: expected 1/true/yes (bind mounts from this machine) or 0/false/no (volumes only)")
        return value in ("1", "true", "yes")
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


def limit_ssh_pools(api) -> None:
    """Keep at most :data:`SSH_IDLE_POOLS` idle connection pools on an ssh:// client."""
    adapter = api.adapters.get("http+docker://ssh") if hasattr(api, "adapters") else None
    pools = getattr(adapter, "pools", None)
    if pools is None or not hasattr(pools, "_maxsize"):
        return
    with pools.lock:
        pools._maxsize = SSH_IDLE_POOLS
        while len(pools._container) > SSH_IDLE_POOLS:
            _, pool = pools._container.popitem(last=False)
            pool.close()


def safe_name(text: str, limit: int = 40) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:limit].strip("_.-") or "x"


# -- the exit hook: every engine still open removes what it holds --------------------------
_OPEN: dict[str, "DockerEngine"] = {}
_OPEN_LOCK = threading.Lock()


def _close_open_engines() -> None:
    with _OPEN_LOCK:
        engines = list(_OPEN.values())
    for engine in engines:
        engine.close_all()


atexit.register(_close_open_engines)


class DockerEngine(SandboxBackend):
    """The engine side of the docker backend: its client, and the labelled things the run made there.

    The sandboxes and the verifier's runs on top of it are :class:`.backend.DockerBackend`'s.
    """

    name = "docker"

    def __init__(self, settings: SandboxSettings, workroot: Path, *, image: str | None = None, client=None) -> None:
        super().__init__(settings, workroot)
        docker = sdk()
        self.sdk = docker
        """The Docker SDK module (its ``errors`` and ``types``)."""
        try:
            self.client = client or docker.from_env()
            self.client.ping()
        except Exception as exc:  # noqa: BLE001 - whatever the SDK raises, the engine is not there
            host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
            raise SandboxError(f"no Docker engine answers at {host} ({type(exc).__name__}: {exc}); start one (.ci/docker-setup.sh) or use --termrl-sandbox=bwrap") from exc
        self.api = self.client.api
        limit_ssh_pools(self.api)
        self.image = image or os.environ.get("TERMRL_DOCKER_IMAGE") or DEFAULT_TAG
        self.host = socket.gethostname()
        self.run_id = f"{safe_name(self.host, 20)}-{os.getpid()}-{secrets.token_hex(3)}"
        self.folders = SandboxFolders(self.workroot, "dkr")
        self.folders.create_root()
        self._containers: dict[str, str] = {}
        """Container id -> name, of every container this engine created and has not removed."""
        self._volumes: set[str] = set()
        self._images: set[str] = set()
        """Ids of the images this engine committed (whole-machine snapshots) and has not removed."""
        self.trusted_volumes = TrustedVolumes(lambda key: self.create_volume("trusted", key), self.fill_volume)
        self._lock = threading.Lock()
        self.snapshot_images: dict[str, str] = {}
        """Snapshot home -> image of the sandbox it came from: a task's image serves its verifier too."""
        info = self.client.info()
        self._supports = {key: bool(info.get(key, True)) for key in ("MemoryLimit", "PidsLimit", "CpuCfsQuota")}
        self.machine: tuple[int | None, int | None] = (info.get("NCPU") or None, info.get("MemTotal") or None)
        """The engine's machine: its CPUs and memory in bytes (what a task's ``cpus`` and ``memory_mb`` are capped at)."""
        self.enforced = self.enforced_for(settings)
        with _OPEN_LOCK:
            _OPEN[self.run_id] = self
        # Exit hooks run last-registered first: the SDK's transports (paramiko, for ssh://)
        # registered theirs on import and would close the connection before ours runs.
        atexit.unregister(_close_open_engines)
        atexit.register(_close_open_engines)

    def enforced_for(self, settings: SandboxSettings) -> dict[str, str]:
        """What a container with these settings gets enforced, as the engine reports its cgroup support."""
        s, supports = settings, self._supports
        return {
            "memory": f"cgroup:{s.memory_bytes}" if supports["MemoryLimit"] else "none",
            "processes": f"cgroup:{s.max_processes}" if supports["PidsLimit"] else "none",
            "cpu": f"cgroup:{s.cpus}" if supports["CpuCfsQuota"] else "none",
            "file_size": f"rlimit_fsize:{s.file_size_bytes}",
        }

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
                f"image with `python -m pytest_termrl.sandbox.docker.images.base build --tag {image}` (or run .ci/docker-setup.sh), "
                "or load a saved one with `docker load -i FILE`"
            )

    def start_container(
        self,
        role: str,
        label: str,
        image: str,
        binds: list[tuple[str, str, bool]],
        tmpfs_extra: dict[str, str] | None = None,
        settings: SandboxSettings | None = None,
        network: str | None = None,
        overrides: dict | None = None,
        before_start: Callable[[Any], None] | None = None,
    ):
        """Create and start one container; binds are (host path, path inside, read-only); ``network`` a docker network mode;
        ``before_start(container)`` runs between the two (the container is removed if it raises)."""
        mounts = [self.sdk.types.Mount(inside, host, type="bind", read_only=ro) for host, inside, ro in binds]
        container = self.create_container(role, label, image, mounts, tmpfs_extra=tmpfs_extra, settings=settings, network=network,
                                          overrides=overrides)
        if before_start is not None:
            try:
                before_start(container)
            except BaseException:
                self.remove_container(container.id)
                raise
        self.start(container, image)
        return container

    def create_container(
        self,
        role: str,
        label: str,
        image: str,
        mounts: list,
        cap_add: tuple[str, ...] = (),
        tmpfs_extra: dict[str, str] | None = None,
        settings: SandboxSettings | None = None,
        network: str | None = None,
        overrides: dict | None = None,
    ):
        """Create (not start) one sandbox-shaped container with these docker ``Mount``s and limits (the backend's by default).

        ``network``: ``container:<id>`` to share another sandbox's network (a verifier beside the
        agent's servers); else none at all. ``overrides``: keyword arguments of ``containers.create``
        that replace the sandbox shape's (a whole-machine container's writable root, :mod:`.machine`).
        """
        docker = self.sdk
        name = f"termrl-{os.getpid()}-{safe_name(label)}-{secrets.token_hex(3)}"
        kwargs = container_options(docker, settings or self.settings, image, name, self.labels(role, label), mounts, cap_add, tmpfs_extra)
        if network is not None:
            kwargs.update(network_mode=network, hostname=None)  # a shared network namespace brings its own hostname
        kwargs.update(overrides or {})
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
        except self.sdk.errors.APIError as exc:
            self.remove_container(container.id)
            raise SandboxError(f"starting a container from {image} failed: {exc.explanation or exc}") from exc

    def remove_container(self, container_id: str) -> None:
        try:
            self.api.remove_container(container_id, force=True, v=True)
        except self.sdk.errors.NotFound:
            pass
        except self.sdk.errors.APIError as exc:
            if "already in progress" not in str(exc):
                raise
        with self._lock:
            self._containers.pop(container_id, None)

    # -- images this run commits (a whole-machine sandbox's snapshots) ---------------------
    def commit(self, container, label: str) -> str:
        """Commit a container's filesystem to a new image labelled like the run's containers; return its id."""
        labels = self.labels("snapshot", label)
        try:
            image = container.commit(repository="termrl-snapshot", tag=f"{os.getpid()}-{secrets.token_hex(4)}",
                                     conf={"Labels": labels}, pause=True)
        except self.sdk.errors.APIError as exc:
            raise SandboxError(f"committing {container.name} to an image failed: {exc.explanation or exc}") from exc
        with self._lock:
            self._images.add(image.id)
        return image.id

    def remove_image(self, image_id: str) -> None:
        """Remove a committed image; one still in use stays held (close_all, or cleanup_stale after a killed run, takes it)."""
        try:
            self.api.remove_image(image_id, force=True)
        except self.sdk.errors.NotFound:
            pass
        except self.sdk.errors.APIError:
            return
        with self._lock:
            self._images.discard(image_id)

    # -- volumes (a remote engine's homes and trusted mounts) ------------------------------
    def create_volume(self, role: str, label: str) -> str:
        name = f"termrl-{os.getpid()}-{role}-{secrets.token_hex(5)}"
        try:
            self.client.volumes.create(name=name, labels=self.labels(role, label))
        except self.sdk.errors.APIError as exc:
            raise SandboxError(f"creating volume {name} failed: {exc.explanation or exc}") from exc
        with self._lock:
            self._volumes.add(name)
        return name

    def remove_volume(self, name: str) -> None:
        try:
            self.api.remove_volume(name, force=True)
        except self.sdk.errors.NotFound:
            pass
        with self._lock:
            self._volumes.discard(name)
        self.trusted_volumes.forget(name)

    def fill_volume(self, name: str, archive: bytes) -> None:
        """Put a tar into a volume, through a container that is created but never started."""
        self.require_image(self.image)
        mount = self.sdk.types.Mount("/fill", name, type="volume", no_copy=True)
        container = self.create_container("fill", name, self.image, [mount])
        try:
            if not container.put_archive("/fill", chunked(archive)):
                raise SandboxError(f"the engine refused the contents of volume {name}")
        finally:
            self.remove_container(container.id)

    # -- the end of the run ------------------------------------------------------------
    def new_sandbox_dir(self, label: str) -> Path:
        return self.folders.new(safe_name(label, 60))

    def snapshot_image(self, home: Path) -> str:
        """The image of the sandbox a snapshot came from: a task's image serves its verifier too."""
        return self.snapshot_images.get(str(home), self.image)

    def close_all(self) -> None:
        """Remove every container, volume and committed image this engine still holds, and this process's folders (atexit, Ctrl-C)."""
        with self._lock:
            ids, volumes, images = list(self._containers), list(self._volumes), list(self._images)
        for remove, names in ((self.remove_container, ids), (self.remove_volume, volumes), (self.remove_image, images)):
            for name in names:
                try:
                    remove(name)
                except Exception:  # noqa: BLE001 - best effort at exit
                    pass
        self.folders.remove_own()

    def close(self) -> None:
        """close_all, then close the engine client: each request URL keeps a pooled connection."""
        self.close_all()
        with _OPEN_LOCK:
            _OPEN.pop(self.run_id, None)
        self.client.close()

    def cleanup_stale(self) -> list[str]:
        """Remove containers, volumes and committed images of dead runs on this host, and their folders."""
        errors = self.sdk.errors.APIError
        return remove_dead_runs(self.api, errors, self.host) + remove_dead_images(self.api, errors, self.host) + self.folders.remove_stale()
