"""The engine's /etc/hostname, /etc/hosts and /etc/resolv.conf in a whole-machine container: made the machine's own, and carried.

The engine binds these three files into every container from its own folder. Unmounted inside
(:func:`own_network_files`, from this machine as root in the container's mount namespace), the
image's files show, so the agent's edits land in the upper layer like any other and reach the
committed image. A fresh container's init layer and binds lie over the committed image's again,
so a snapshot carries them apart (:func:`save_network_files`), and the grader's container gets
them back (:func:`.machine_run.restore_network_files`).
"""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

from ...errors import SandboxError
from .machine_layer import root_output

NETWORK_FILES = ("/etc/hostname", "/etc/hosts", "/etc/resolv.conf")
"""Files the engine binds into every container from its own folder: unmounted inside (:func:`own_network_files`), so that
the agent's edits land in the upper layer like any other, and reach the committed image."""
NETWORK_FOLDER = "network-files"
"""The folder in a snapshot folder holding the machine's network files, one archive each (:mod:`.machine_run` puts them back)."""


# Unmounts paths inside a container's mount namespace, from this machine as root: enter the namespace,
# take the container's root as its own (opened before), unmount by the paths the container sees.
_UNMOUNT = r"""
import ctypes, os, sys
pid, paths = sys.argv[1], sys.argv[2:]
libc = ctypes.CDLL(None, use_errno=True)
ns, root = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY), os.open(f"/proc/{pid}/root", os.O_RDONLY)
if libc.setns(ns, 0x00020000) != 0:
    sys.exit(f"setns: {os.strerror(ctypes.get_errno())}")
os.fchdir(root)
os.chroot(".")
for path in paths:
    if libc.umount2(path.encode(), 0) != 0 and ctypes.get_errno() != 22:  # EINVAL: not a mount point (any more)
        sys.exit(f"umount {path}: {os.strerror(ctypes.get_errno())}")
"""


def own_network_files(container, keep_text: bool) -> bool:
    """Unmount the engine's /etc/hostname, /etc/hosts and /etc/resolv.conf inside the container (from this machine, as root
    in its mount namespace), so the image's files show; ``keep_text``: first give them the text the engine wrote (the hostname,
    localhost), as root inside, before the baseline. False if they could not be unmounted (they stay the engine's)."""
    container.reload()
    pid = container.attrs.get("State", {}).get("Pid")
    if not pid:
        return False
    texts = {}
    if keep_text:
        for path in NETWORK_FILES:
            try:
                texts[path] = root_output(container, 'cat -- "$1"', [path])
            except SandboxError:
                texts[path] = ""
    done = subprocess.run([sys.executable, "-I", "-c", _UNMOUNT, str(pid), *NETWORK_FILES], capture_output=True, text=True)
    if done.returncode != 0:
        return False
    for path, text in texts.items():
        root_output(container, 'printf %s "$2" > "$1"', [path, text])
    return True


def upper_files(upper: Path, folder: str, names: list[str]):
    """(name, tar header, bytes or None) of each of ``names`` in ``upper/folder`` that is a file or a link there,
    opened without following any link on the way (the agent may have put links anywhere)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        top = os.open(upper, flags | os.O_DIRECTORY)
    except OSError:
        return
    try:
        try:
            fd = os.open(folder, flags | os.O_DIRECTORY, dir_fd=top)
        except OSError:
            return
        try:
            for name in names:
                try:
                    st = os.lstat(name, dir_fd=fd)
                except OSError:
                    continue
                info = tarfile.TarInfo(name)
                info.mode, info.uid, info.gid, info.mtime = stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, int(st.st_mtime)
                if stat.S_ISLNK(st.st_mode):
                    info.type, info.linkname = tarfile.SYMTYPE, os.readlink(name, dir_fd=fd)
                    yield name, info, None
                elif stat.S_ISREG(st.st_mode):
                    handle = os.open(name, flags, dir_fd=fd)
                    with os.fdopen(handle, "rb") as stream:
                        data = stream.read(1 << 20)
                    info.size = len(data)
                    yield name, info, data
        finally:
            os.close(fd)
    finally:
        os.close(top)


def save_network_files(upper: Path, id_base: int, folder: Path) -> None:
    """The network files as the upper layer holds them, one archive each in ``folder``, owners as inside: a fresh
    container's init layer and the engine's binds lie over the committed image's (and the engine's archive API shows its binds)."""
    folder.mkdir()
    for name, info, data in upper_files(upper, "etc", [Path(p).name for p in NETWORK_FILES]):
        info.uid, info.gid = max(info.uid - id_base, 0), max(info.gid - id_base, 0)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
        (folder / name).write_bytes(buffer.getvalue())
