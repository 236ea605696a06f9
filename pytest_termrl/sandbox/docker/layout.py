"""The shape of a docker sandbox: its container's settings, and where trusted mounts go in it.

Each episode's container has no network, a read-only root, private tmpfs /tmp and
/var/tmp, memory, CPU, process and file-size limits, every capability dropped and
``no-new-privileges``. Its main process is an idle bash under ``tini``, as root, so the agent
(uid 1000) cannot kill it; the agent's shell and everything it starts run as uid 1000 in
/home/user. The paths inside are every backend's (:mod:`..layout`).

The verifier's trusted mounts (the hidden tests, the runner, the harness's Python) go in
over the image: a system prefix is narrowed to its Python parts, and a mount point outside
the image's system folders gets a root-owned stand-in for its top folder.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

from ..base import SandboxSettings, TrustedMount
from ..layout import AGENT_ENV, HOME_INSIDE

HOME_PARENT = str(Path(HOME_INSIDE).parent)

STORAGE_NOT_ENFORCED = "the container's writable files are the engine's storage driver's, given no size here"
"""Why a task's ``storage_mb`` is not enforced on docker (the file-size limit still applies)."""

LABEL = "termrl"
"""Everything a run creates on the engine is labelled ``termrl=1`` (and ``termrl.run``, ``.pid``, ``.host``...)."""

SYSTEM_TOP = {"usr", "opt", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "var", "srv", "home", "tmp", "run", "mnt", "media", "dev", "proc", "sys"}
"""Top-level folders of an image that a trusted mount may sit under without hiding anything."""

# The container's main process (under tini, as root): waits on a stdin that never delivers,
# named so that the agent's `pgrep sleep` or `pkill bash` finds none of the harness's.
IDLE = 'printf termrl-idle > /proc/$$/comm; while :; do read -r _ || exec sleep infinity; done'


def container_options(
    sdk,
    settings: SandboxSettings,
    image: str,
    name: str,
    labels: dict[str, str],
    mounts: list,
    cap_add: tuple[str, ...] = (),
    tmpfs_extra: dict[str, str] | None = None,
) -> dict:
    """The keyword arguments of ``containers.create`` for one sandbox-shaped container."""
    s = settings
    tmp_opts = f"rw,exec,nosuid,nodev,mode=1777,size={s.memory_bytes}"
    tmpfs = {"/tmp": tmp_opts, "/var/tmp": tmp_opts, **(tmpfs_extra or {})}
    return dict(
        image=image,
        command=["bash", "--noprofile", "--norc", "-c", IDLE],
        name=name,
        user="0:0",
        working_dir=HOME_INSIDE,
        hostname="sandbox",
        environment=AGENT_ENV,
        labels=labels,
        network_mode="none",
        mem_limit=s.memory_bytes,
        memswap_limit=s.memory_bytes,
        nano_cpus=int(s.cpus * 1e9),
        pids_limit=s.max_processes,
        ulimits=[sdk.types.Ulimit(name="fsize", soft=s.file_size_bytes, hard=s.file_size_bytes)],
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


def narrow_system_mounts(mounts: list[TrustedMount]) -> list[TrustedMount]:
    """Trusted mounts, with a system prefix (/usr, /usr/local) replaced by its Python parts.

    bwrap can bind the host's /usr whole (it has no image); here that would replace the
    image's tools by the host's, so only the interpreter and its library folders go in.
    """
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


def skeleton_binds(skeleton: Path, mounts: list[TrustedMount]) -> list[tuple[str, str, bool]]:
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
