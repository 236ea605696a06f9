"""The whole-machine sandbox's read-only lowers: the host's system folders standing in for a generic image.

Made once per backend. Each host system folder (/usr, /etc, /var, /opt, and /bin, /lib...
where they are folders rather than links) is an idmapped, read-only mount of that folder
alone, so its files show their owners inside (the host's root is the sandbox's root).
Above them lies the harness's base layer: the root's skeleton (/root, /home/user, /srv,
/data, /tmp...), the sandbox's own accounts (passwd, group, shadow, gshadow) and masks
over everything of the host's that is a secret: every object other users may not read
(a whiteout over a file, an empty opaque folder over a folder), the engine's data, the
host's logs, spools and backups. ``masked`` lists what was masked.

The base layer comes in two variants, both made once, side by side: the harness's own, with
its account ``user`` (1000), its group and ``/home/user``, for native tasks; and a bare one
without them (:meth:`MachineLowers.bare`), under an image built from a stock base (ubuntu,
debian, python...), which has no such account: a Dockerfile's ``useradd -m user`` must meet
none, and a ``USER user`` it never made must fail as the engine's does. A variant of the base
rather than masks in the image's layers: the cached layers stay what their steps wrote, and
the accounts files are replaced whole, as they are in the base already.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path

from ...errors import SandboxError
from ..hostfs import copy_tree
from ..storage import unmount
from .idmap import HeldNamespace, IdRange, idmapped_mount

SYSTEM_FOLDERS = ("usr", "etc", "var", "opt", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
"""Top-level host folders that stand in for the image (a link among them is a link in the skeleton)."""
EMPTIED = ("var/lib/docker", "var/lib/containerd", "opt/containerd", "var/log", "var/tmp", "var/backups",
           "var/mail", "var/spool", "var/cache/private", "var/lib/private", "etc/ssl/private")
"""Host folders shown empty whatever their modes: an engine's data, logs, spools, backups, private keys."""
REPLACED = ("etc/passwd", "etc/group", "etc/shadow", "etc/gshadow")
"""The sandbox's own accounts, in place of the host's."""
SKELETON = {"root": 0o700, "home": 0o755, "srv": 0o755, "mnt": 0o755, "media": 0o755, "data": 0o755, "tmp": 0o1777,
            "run": 0o755, "run/termrl": 0o755, "run/termrl-out": 0o755, "proc": 0o555, "sys": 0o555, "dev": 0o755,
            "var": 0o755, "opt": 0o755, "opt/termrl": 0o755, "opt/termrl/standins": 0o755, "opt/termrl/runner": 0o755}
"""Folders of the root's skeleton (the harness's mount points among them, so mounting makes no record)."""
OPAQUE_XATTR = "user.overlay.opaque"


def _whiteout(path: Path) -> None:
    os.mknod(path, stat.S_IFCHR | 0o000, os.makedev(0, 0))


def _opaque_dir(path: Path, mode: int, owner: tuple[int, int]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, mode)
    os.chown(path, *owner)
    os.setxattr(path, OPAQUE_XATTR, b"y")


def _system_accounts(harness_user: bool) -> dict[str, str]:
    """passwd, group, shadow, gshadow: the host's system accounts (ids below 1000, and nobody), root, and 'user' (1000) if asked."""
    users = ["root:x:0:0:root:/root:/bin/bash"]
    groups = ["root:x:0:"]
    for line in Path("/etc/passwd").read_text().splitlines():
        parts = line.split(":")
        if len(parts) == 7 and parts[0] not in ("root", "user") and parts[2].isdigit() and (0 < int(parts[2]) < 1000 or int(parts[2]) == 65534):
            users.append(line)
    for line in Path("/etc/group").read_text().splitlines():
        parts = line.split(":")
        if len(parts) == 4 and parts[0] not in ("root", "user") and parts[2].isdigit() and (0 < int(parts[2]) < 1000 or int(parts[2]) == 65534):
            groups.append(":".join(parts[:3]) + ":")
    if harness_user:
        users.append("user:x:1000:1000:user:/home/user:/bin/bash")
        groups.append("user:x:1000:")
    names = [u.split(":")[0] for u in users]
    group_names = [g.split(":")[0] for g in groups]
    return {
        "etc/passwd": "\n".join(users) + "\n",
        "etc/group": "\n".join(groups) + "\n",
        "etc/shadow": "".join(f"{n}:*:19000:0:99999:7:::\n" for n in names),
        "etc/gshadow": "".join(f"{n}:*::\n" for n in group_names),
    }


def _secrets(host_root: str, rel: str) -> list[tuple[str, bool]]:
    """(path relative to /, is a folder) of everything under ``host_root/rel`` other users may not read, outermost only."""
    found: list[tuple[str, bool]] = []
    top = os.path.join(host_root, rel)
    for dirpath, dirnames, filenames in os.walk(top):
        if os.path.ismount(dirpath) and dirpath != top:
            dirnames[:] = []
            continue
        rel_dir = os.path.relpath(dirpath, host_root)
        keep = []
        for name in sorted(dirnames):
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode) and (st.st_mode & 0o005) != 0o005:
                found.append((f"{rel_dir}/{name}", True))
            else:
                keep.append(name)
        dirnames[:] = keep
        for name in filenames:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and not st.st_mode & 0o004:
                found.append((f"{rel_dir}/{name}", False))
    return found


@dataclass
class MachineLowers:
    """The host's idmapped system folders and the base layer over them, in ``folder``."""

    folder: Path
    ids: IdRange
    host_root: str = "/"
    slots: dict[str, list[Path]] = field(default_factory=dict)
    """Mount point inside -> its lowers, topmost first (the base layer's part, then the host's folder)."""
    links: dict[str, str] = field(default_factory=dict)
    """Top-level links of the skeleton (/bin -> usr/bin on a merged-/usr host)."""
    masked: list[str] = field(default_factory=list)
    """Every host path the sandbox does not see, as an absolute path inside."""
    base_name: str = "base"
    """The base layer's folder in ``folder``: 'base' (with the harness's account) or 'bare' (without)."""
    _mounted: list[Path] = field(default_factory=list)
    _bare: list["MachineLowers"] = field(default_factory=list)

    @property
    def base(self) -> Path:
        return self.folder / self.base_name

    @property
    def harness_user(self) -> bool:
        """Whether the base layer holds the harness's account 'user' (1000) and ``/home/user``."""
        return self.base_name == "base"

    def bare(self) -> "MachineLowers":
        """These lowers with the bare base layer: no account 'user', no group 'user', no ``/home/user`` (a stock image's).

        It shares the host's mounts (and their unmounting) with these lowers: close only the lowers :meth:`build` made.
        """
        if not self.harness_user:
            return self
        if not self._bare:
            bare = self.folder / "bare"
            slots = {mount: [bare / mount.lstrip("/"), *below[1:]] for mount, below in self.slots.items()}
            self._bare.append(replace(self, slots=slots, base_name="bare", _bare=[]))
        return self._bare[0]

    def build(self) -> "MachineLowers":
        root_ids = (self.ids.base, self.ids.base)
        host = self.folder / "host"
        host.mkdir(mode=0o711)
        base = self.base
        base.mkdir(mode=0o755)
        os.chown(base, *root_ids)
        for rel, mode in sorted(SKELETON.items()):
            path = base / rel
            path.mkdir(exist_ok=True)
            os.chmod(path, mode)
            os.chown(path, *root_ids)
        namespace = HeldNamespace(self.ids)
        try:
            for name in SYSTEM_FOLDERS:
                source = os.path.join(self.host_root, name)
                if os.path.islink(source):
                    self.links[f"/{name}"] = os.readlink(source)
                    os.symlink(os.readlink(source), base / name)
                    os.lchown(base / name, *root_ids)
                    continue
                if not os.path.isdir(source):
                    continue
                target = host / name
                target.mkdir()
                idmapped_mount(source, target, namespace.fd)
                self._mounted.append(target)
                (base / name).mkdir(exist_ok=True)
                os.chown(base / name, *root_ids)
                self.slots[f"/{name}"] = [base / name, target]
        finally:
            namespace.close()
        self._mask(root_ids)
        bare = self.folder / "bare"
        bare.mkdir(mode=0o755)
        copy_tree(base, bare)  # the skeleton, links and masks alike; the accounts differ
        shutil.copystat(base, bare)
        os.chown(bare, *root_ids)
        home = base / "home" / "user"
        home.mkdir()
        os.chown(home, self.ids.host(1000), self.ids.host(1000))
        for folder, harness_user in ((base, True), (bare, False)):
            for rel, text in _system_accounts(harness_user).items():
                path = folder / rel
                path.write_text(text)
                os.chmod(path, 0o640 if "shadow" in rel else 0o644)
                os.chown(path, *root_ids)
        return self

    def _mask(self, root_ids: tuple[int, int]) -> None:
        masks: dict[str, bool] = {rel: True for rel in EMPTIED if os.path.isdir(os.path.join(self.host_root, rel))}
        for name in ("etc", "var", "opt", "usr"):
            if f"/{name}" in self.slots:
                for rel, is_dir in _secrets(self.host_root, name):
                    if not any(rel == m or rel.startswith(m + "/") for m in masks):
                        masks[rel] = is_dir
        for rel in sorted(masks):
            if any(rel.startswith(m + "/") for m in masks if masks[m]):
                continue  # inside a folder already shown empty
            path = self.base / rel
            for parent in reversed(path.relative_to(self.base).parents[:-1]):
                folder = self.base / parent
                if not folder.exists():
                    st = os.stat(os.path.join(self.host_root, str(parent)))
                    folder.mkdir()
                    os.chmod(folder, stat.S_IMODE(st.st_mode))
                    os.chown(folder, *root_ids)
            if rel in REPLACED:
                continue  # written afterwards: the sandbox's own accounts
            if masks[rel]:
                st = os.lstat(os.path.join(self.host_root, rel))
                _opaque_dir(path, stat.S_IMODE(st.st_mode), root_ids)
            else:
                _whiteout(path)
            self.masked.append("/" + rel)

    def reach(self, folder: Path) -> Path:
        """``folder`` (the build cache's layers) seen read-only at a path the range's root can reach, bound once.

        The cache usually lies under the harness user's home, which other ids may not cross;
        a bind in this folder needs no permission on the cache's parents.
        """
        target = self.folder / f"store-{hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:12]}"
        if target not in self._mounted:
            target.mkdir(exist_ok=True)
            idmapped_mount(str(folder), target, None, nosuid=True)  # a setuid file a step made is no way up for a host user
            self._mounted.append(target)
        return target

    def close(self) -> None:
        for target in self._mounted:
            unmount(target)
        self._mounted.clear()


def unmount_stale(workroot: Path, owner_alive) -> list[str]:
    """Detach the idmapped mounts a killed run left in its lowers' folder, so its removal never reaches a host folder."""
    removed: list[str] = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return removed
    prefix = str(workroot) + "/"
    for line in lines:
        target = line.split(" ")[4].replace("\\040", " ")
        if target.startswith(prefix):
            name = target[len(prefix):].split("/", 1)[0]
            if not owner_alive(name):
                unmount(Path(target))
                removed.append(target)
    return removed


def machine_support_problem() -> str | None:
    """What this machine lacks for whole-machine sandboxes on bwrap, and how to get it; None when nothing."""
    if os.geteuid() != 0:
        return ("whole-machine sandboxes (tasks that name a user) need the harness to run as root on bwrap: it writes each "
                "sandbox's id map and makes idmapped mounts of the system folders; run pytest as root")
    if "overlay" not in Path("/proc/filesystems").read_text():
        return "whole-machine sandboxes need the kernel's overlay filesystem: modprobe overlay"
    if Path("/proc/sys/user/max_user_namespaces").exists() and Path("/proc/sys/user/max_user_namespaces").read_text().strip() == "0":
        return "whole-machine sandboxes need user namespaces: sysctl -w user.max_user_namespaces=15000"
    return None


def require_machine_support() -> None:
    """Refuse, naming what is missing, a machine that cannot run whole-machine sandboxes."""
    problem = machine_support_problem()
    if problem is not None:
        raise SandboxError(problem)
