"""Start bubblewrap on a layered root: one overlay per slot, in a user namespace whose map the harness writes.

bubblewrap runs as the range's host root (never host id 0), makes the user namespace and
waits (``--userns-block-fd``) while the harness writes the map from outside; then it
mounts each slot's overlay (read-only lowers, one writable upper) and drops to the task's
user inside. The capabilities root keeps inside are a container engine's default set.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from typing import Callable
from pathlib import Path

from ...errors import SandboxError
from ..polling import readable
from .idmap import IdRange, write_maps

ROOT_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP",
                     "NET_BIND_SERVICE", "NET_RAW", "SYS_CHROOT", "MKNOD", "AUDIT_WRITE", "SETFCAP")
"""What root keeps inside: a container engine's default set (no SYS_ADMIN, SYS_PTRACE, SYS_MODULE, SYS_TIME, NET_ADMIN)."""
ROOT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""Root's PATH in an image (the sbin folders too)."""


@dataclass(frozen=True)
class LayerSlot:
    """One overlay: its mount point inside, its lowers (topmost first), its upper and work folders."""

    mount: str
    lowers: tuple[Path, ...]
    upper: Path
    work: Path


@dataclass(frozen=True)
class Account:
    """Who runs inside: ids inside the namespace, the home and the name the environment shows."""

    uid: int
    gid: int
    name: str
    home: str


def make_slot_folders(folder: Path, mounts: list[str], owner: int) -> dict[str, tuple[Path, Path]]:
    """An empty upper and work folder per mount point, owned by the range's root: (upper, work) by mount."""
    made = {}
    for mount in mounts:
        name = mount.strip("/").replace("/", "_") or "_root"
        upper, work = folder / "upper" / name, folder / "work" / name
        for path in (upper, work):
            path.mkdir(parents=True)
            os.chown(path, owner, owner)
        os.chown(folder / "upper", owner, owner)
        made[mount] = (upper, work)
    return made


def layered_args(bwrap: str, slots: list[LayerSlot], info_fd: int, block_fd: int) -> list[str]:
    """The bwrap options for a layered root, up to the caller's own mounts; the program starts as root inside
    (bubblewrap's own id in the map), so it is put after :func:`enter_as` for another account."""
    args = [bwrap, "--unshare-user", "--info-fd", str(info_fd), "--userns-block-fd", str(block_fd), "--uid", "0", "--gid", "0"]
    for slot in sorted(slots, key=lambda s: (s.mount != "/", s.mount)):  # the root first, then what lies on it
        for lower in reversed(slot.lowers):  # bubblewrap stacks them in order: the last one given is topmost
            args += ["--overlay-src", str(lower)]
        args += ["--overlay", str(slot.upper), str(slot.work), slot.mount]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    args += ["--hostname", "sandbox", "--die-with-parent", "--new-session", "--clearenv", "--cap-drop", "ALL"]
    for cap in ROOT_CAPABILITIES:
        args += ["--cap-add", f"CAP_{cap}"]
    return args


def enter_as(account: Account, groups: tuple[int, ...] = ()) -> list[str]:
    """The program's prefix inside: nothing for root; for another account, the switch to it with no capability left.

    ``groups``: the account's supplementary groups (an image's ``USER`` keeps those /etc/group gives it).
    """
    if account.uid == 0:
        return []
    joined = ["--groups=" + ",".join(str(g) for g in groups)] if groups else ["--clear-groups"]
    return ["setpriv", f"--reuid={account.uid}", f"--regid={account.gid}", *joined,
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def launch_layered(bwrap: str, ids: IdRange, slots: list[LayerSlot], *, env: dict[str, str], binds: list[str], cwd: str,
                   prefix: list[str], argv: list[str], wrap: Callable[[list[str]], list[str]], pass_fds: tuple[int, ...] = (),
                   network: str | None = None, stdin: int = subprocess.DEVNULL) -> subprocess.Popen:
    """Start ``argv`` over the layered root ``slots``: bwrap as the range's root, the map written, then ``prefix`` (the
    switch to the account) inside, in ``cwd``, with exactly ``env``; ``binds`` are bwrap's own mount options.

    ``network``: a network namespace to join instead of a new one (the agent's, for a grader that reaches its servers).
    The output is one pipe (stdout and stderr together); the caller closes its ends of ``pass_fds``.
    """
    info_r, info_w = os.pipe()
    block_r, block_w = os.pipe()
    try:
        args = layered_args(bwrap, slots, info_w, block_r)
        for key, value in env.items():
            args += ["--setenv", key, value]
        args += [*binds, "--chdir", cwd, "--", *prefix, *argv]
        command = run_as(ids) + args
        if network is not None:
            command = ["nsenter", f"--net={network}", "--", *command]
            command.remove("--unshare-net")
    except BaseException:
        for fd in (info_r, info_w, block_r, block_w):
            os.close(fd)
        raise
    try:
        return start_mapped(wrap(command), ids, info_r, block_w, stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, pass_fds=(info_w, block_r, *pass_fds), start_new_session=True)
    finally:
        os.close(info_w)
        os.close(block_r)


def start_mapped(command: list[str], ids: IdRange, info_r: int, block_w: int, **popen: object) -> subprocess.Popen:
    """Start ``command`` (bwrap, wrapped), write its namespace's map once it asks, let it go on.

    ``info_r`` and ``block_w`` are the harness's ends of the pipes whose other ends the
    command got as ``--info-fd`` and ``--userns-block-fd``; both are closed here.
    """
    try:
        process = subprocess.Popen(command, **popen)  # type: ignore[call-overload]
    except BaseException:
        os.close(info_r)
        os.close(block_w)
        raise
    try:
        info = _read_info(info_r, process)
        write_maps(int(info["child-pid"]), ids)
        os.write(block_w, b"1")
    except BaseException:
        process.kill()
        process.wait()
        raise
    finally:
        os.close(info_r)
        os.close(block_w)
    return process


def _read_info(fd: int, process: subprocess.Popen, timeout_s: float = 10.0) -> dict:
    buf = b""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return json.loads(buf)
        except ValueError:
            pass
        left = deadline - time.monotonic()
        if left <= 0:
            raise SandboxError("bubblewrap did not report its namespace within 10 s")
        if readable([fd], min(left, 0.5)):
            chunk = os.read(fd, 4096)
            if not chunk:
                out = process.stdout.read().decode(errors="replace") if process.stdout is not None and process.poll() is not None else ""
                raise SandboxError(f"bubblewrap failed to make the whole-machine sandbox: {out.strip()[-500:]}")
            buf += chunk


def run_as(ids: IdRange) -> list[str]:
    """The prefix that runs bwrap as the range's host root: no host rights, its own user namespace's owner."""
    return ["setpriv", f"--reuid={ids.base}", f"--regid={ids.base}", "--clear-groups", "--"]
