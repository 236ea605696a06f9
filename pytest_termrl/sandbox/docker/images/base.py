"""Images for the docker backend, built locally: no container registry is needed.

The suite's base image is a minimal Debian root filesystem made with ``debootstrap`` from
the Debian mirror this machine's apt already uses (read from /etc/apt/sources.list*, never
hard-coded), with the tools the tasks need and a user ``user`` (uid 1000, home
/home/user), then ``docker import``-ed. No Python test tooling is installed in it: the
verifier mounts the harness's own interpreter read-only, as the bwrap backend does.

    python -m pytest_termrl.sandbox.docker.images.base build [--tag termrl-base:1] [--force]
    python -m pytest_termrl.sandbox.docker.images.base ensure [--tag termrl-base:1]   # build if missing
    python -m pytest_termrl.sandbox.docker.images.base mirror                         # show the apt mirror
    python -m pytest_termrl.sandbox.docker.images.base build --with cpp,golang        # a toolchain variant
    python -m pytest_termrl.sandbox.docker.images.base ensure --with cpp              # build the variant if missing

A toolchain variant (:mod:`.toolchain_images` names them: ``cpp``, ``golang``, ``java``,
``rust``) is the base image plus those toolchains' Debian packages, installed by apt from
the same mirror in one container started from the base image with the host's network,
then committed as one layer on top of it (``termrl-base:1-cpp``): it shares the base's
layers, and apt's sources and lists are gone from it again.

A task's own Dockerfile is built by :mod:`.task_image` (``... image task DIR`` here).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ....errors import SandboxError
from .client import DEFAULT_TAG, ImageError, docker_client, image_exists
from .task import build_task_image, remove_task_images
from .toolchain import TOOLCHAINS_LABEL, toolchain_names, toolchain_packages, toolchain_tag

BASE_LABEL = "termrl.base"
RECIPE_LABEL = "termrl.recipe"
AGENT_UID = 1000
AGENT_GID = 1000

PACKAGES = (
    # what the brief and the core tasks need
    "bash", "coreutils", "python3", "git", "jq", "tar", "gzip", "findutils", "gawk", "sed", "procps",
    # what a terminal agent reaches for next; all small
    "grep", "diffutils", "xz-utils", "bzip2", "less", "file", "bc", "zip", "unzip", "util-linux", "psmisc",
)
IMAGE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
}


# -- the apt mirror --------------------------------------------------------------------
@dataclass(frozen=True)
class AptSource:
    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]
    keyring: str | None = None


def host_codename(os_release: Path = Path("/etc/os-release")) -> str | None:
    try:
        text = os_release.read_text()
    except OSError:
        return None
    match = re.search(r"^VERSION_CODENAME=\"?([A-Za-z0-9._-]+)\"?\s*$", text, re.M)
    return match.group(1) if match else None


def _parse_one_line(text: str) -> list[AptSource]:
    sources = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line.startswith("deb "):
            continue
        keyring = None
        options = re.match(r"deb\s+\[([^\]]*)\]\s+", line)
        if options:
            for option in options.group(1).split():
                if option.startswith("signed-by="):
                    keyring = option.split("=", 1)[1]
            line = "deb " + line[options.end():]
        fields = line.split()
        if len(fields) >= 3:
            sources.append(AptSource(fields[1], (fields[2],), tuple(fields[3:]), keyring))
    return sources


def _parse_deb822(text: str) -> list[AptSource]:
    sources = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = None
        for raw in stanza.splitlines():
            if raw.lstrip().startswith("#"):
                continue
            if raw[:1] in (" ", "\t") and key:
                fields[key] += " " + raw.strip()
                continue
            if ":" in raw:
                key, value = raw.split(":", 1)
                key = key.strip().lower()
                fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes").lower() == "no":
            continue
        for uri in fields.get("uris", "").split():
            sources.append(
                AptSource(uri, tuple(fields.get("suites", "").split()), tuple(fields.get("components", "").split()), fields.get("signed-by"))
            )
    return sources


def apt_sources(etc_apt: Path = Path("/etc/apt")) -> list[AptSource]:
    """Every ``deb`` source apt is configured with, in apt's reading order."""
    found: list[AptSource] = []
    main_list = etc_apt / "sources.list"
    if main_list.is_file():
        found += _parse_one_line(main_list.read_text(errors="replace"))
    folder = etc_apt / "sources.list.d"
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if path.suffix == ".list":
                found += _parse_one_line(path.read_text(errors="replace"))
            elif path.suffix == ".sources":
                found += _parse_deb822(path.read_text(errors="replace"))
    return found


def apt_mirror(suite: str | None = None, etc_apt: Path = Path("/etc/apt")) -> tuple[str, str, str | None]:
    """(mirror URI, suite, keyring) of the first apt source serving ``suite``'s main component.

    ``suite`` defaults to the host's codename, so the image matches the host's C library
    (the verifier runs the harness's own interpreter inside it).
    """
    suite = suite or host_codename()
    if suite is None:
        raise ImageError("cannot tell this machine's distribution codename (/etc/os-release); pass --suite")
    sources = apt_sources(etc_apt)
    for source in sources:
        if suite in source.suites and "main" in source.components:
            return source.uri.rstrip("/"), suite, source.keyring
    listed = ", ".join(f"{s.uri} {'/'.join(s.suites)}" for s in sources) or "none"
    raise ImageError(
        f"no apt source in {etc_apt}/sources.list* serves '{suite} main' (found: {listed}); pass --mirror URI"
    )


# -- the base image --------------------------------------------------------------------
def recipe_hash(suite: str, packages: tuple[str, ...] = PACKAGES) -> str:
    text = json.dumps({"suite": suite, "packages": sorted(packages), "uid": AGENT_UID, "env": IMAGE_ENV, "v": 1}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _run(argv: list[str], log: Callable[[str], None], **kwargs) -> None:
    log("+ " + " ".join(argv))
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    if result.returncode != 0:
        raise ImageError(f"{argv[0]} failed (exit {result.returncode}):\n{result.stdout[-4000:]}")


def build_base_image(
    tag: str = DEFAULT_TAG,
    mirror: str | None = None,
    suite: str | None = None,
    packages: tuple[str, ...] = PACKAGES,
    client=None,
    scratch: Path | None = None,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> str:
    """debootstrap a minimal root filesystem and import it as ``tag``; returns the image id."""
    if os.geteuid() != 0:
        raise ImageError("building the base image needs root (debootstrap makes device nodes and chroots)")
    debootstrap = shutil.which("debootstrap") or next(
        (p for p in ("/usr/sbin/debootstrap", "/sbin/debootstrap") if os.access(p, os.X_OK)), None
    )
    if debootstrap is None:
        raise ImageError("debootstrap is not installed: apt-get install -y debootstrap")
    client = client or docker_client()
    found_mirror, suite, keyring = apt_mirror(suite)
    mirror = mirror or found_mirror
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="termrl-image-", dir=scratch or "/var/tmp"))
    rootfs = work / "rootfs"
    try:
        argv = [debootstrap, "--variant=minbase", "--components=main", f"--include={','.join(packages)}"]
        if keyring and Path(keyring).is_file():
            argv.append(f"--keyring={keyring}")
        _run(argv + [suite, str(rootfs), mirror], log)
        _run(["chroot", str(rootfs), "groupadd", "--gid", str(AGENT_GID), "user"], log)
        _run(
            ["chroot", str(rootfs), "useradd", "--uid", str(AGENT_UID), "--gid", str(AGENT_GID), "--create-home",
             "--home-dir", "/home/user", "--shell", "/bin/bash", "user"],
            log,
        )
        os.chmod(rootfs / "home" / "user", 0o755)
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists", "var/log"):
            for child in (rootfs / junk).glob("*"):
                if child.is_file() or child.is_symlink():
                    child.unlink()
        # The image names no host: apt inside it has nowhere to go (the network is off anyway).
        (rootfs / "etc" / "apt" / "sources.list").write_text("")
        tarball = work / "rootfs.tar"
        _run(["tar", "--numeric-owner", "--xattrs", "-C", str(rootfs), "-cf", str(tarball), "."], log)
        changes = [f"ENV {k}={v}" for k, v in IMAGE_ENV.items()]
        changes += ["WORKDIR /home/user", 'CMD ["/bin/bash"]',
                    f"LABEL {BASE_LABEL}=1 {RECIPE_LABEL}={recipe_hash(suite, packages)} termrl.suite={suite}"]
        repository, _, version = tag.rpartition(":") if ":" in tag.split("/")[-1] else (tag, "", "latest")
        log(f"+ docker import {tarball} {tag}")
        client.api.import_image_from_file(str(tarball), repository=repository, tag=version, changes=changes)
        image = client.images.get(tag)
        log(f"built {tag} ({image.short_id}, {image.attrs.get('Size', 0) / 1e6:.0f} MB) in {time.monotonic() - started:.0f} s")
        return image.id
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", str(work)], check=False)


def ensure_base_image(tag: str = DEFAULT_TAG, client=None, **kwargs) -> str:
    """The image id of ``tag``, building it first when it is missing (the cache is the engine)."""
    client = client or docker_client()
    if image_exists(client, tag):
        return client.images.get(tag).id
    return build_base_image(tag, client=client, **kwargs)


# -- toolchain variants -------------------------------------------------------------------
APT_INSIDE = "/mnt/termrl-apt"
"""Where the variant's build container sees its apt sources and keyring (bind-mounted, read-only)."""


def _apt_script(packages: tuple[str, ...]) -> str:
    options = f"-o Dir::Etc::SourceList={APT_INSIDE}/sources.list -o Dir::Etc::SourceParts=/nonexistent -o Acquire::Retries=3"
    return "\n".join([
        "set -e",
        "export DEBIAN_FRONTEND=noninteractive",
        f"apt-get {options} update -qq",
        f"apt-get {options} install -y -qq --no-install-recommends {' '.join(packages)}",
        "apt-get clean",
        "rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log /var/log/alternatives.log",
    ])


def build_toolchain_image(
    names,
    base_tag: str = DEFAULT_TAG,
    mirror: str | None = None,
    client=None,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> str:
    """The base image plus the named toolchains' Debian packages, committed as one layer; returns its tag.

    The base image is built first when missing. apt runs as root in a container of the base
    image on the host's network (the only build step that needs one), reading a sources
    list and keyring bind-mounted from here (the base's own mirror suite), so nothing of them
    stays in the image.
    """
    names = toolchain_names(names)
    packages = toolchain_packages(names)
    client = client or docker_client()
    ensure_base_image(base_tag, client=client, mirror=mirror, log=log)
    base = client.images.get(base_tag)
    labels = (base.attrs.get("Config") or {}).get("Labels") or {}
    found_mirror, suite, keyring = apt_mirror(labels.get("termrl.suite"))
    mirror = (mirror or found_mirror).rstrip("/")
    tag = toolchain_tag(base_tag, names)
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="termrl-toolchain-", dir="/var/tmp"))
    container = None
    try:
        signed = ""
        if keyring and Path(keyring).is_file():
            shutil.copyfile(keyring, work / "keyring.gpg")
            signed = f"[signed-by={APT_INSIDE}/keyring.gpg] "
        (work / "sources.list").write_text(f"deb {signed}{mirror} {suite} main\n")
        os.chmod(work, 0o755)
        log(f"+ apt-get install {' '.join(packages)} in a container of {base_tag} ({mirror} {suite})")
        container = client.containers.create(
            base_tag, ["bash", "-c", _apt_script(packages)], user="0:0", network_mode="host",
            volumes={str(work): {"bind": APT_INSIDE, "mode": "ro"}}, labels={"termrl.role": "toolchain-build"},
        )
        container.start()
        status = container.wait().get("StatusCode")
        if status != 0:
            output = container.logs().decode(errors="replace")
            raise ImageError(f"installing {' '.join(packages)} into {base_tag} failed (exit {status}):\n{output[-4000:]}")
        repository, _, version = tag.rpartition(":")
        changes = ['CMD ["/bin/bash"]', "WORKDIR /home/user", "USER 0:0",
                   f"LABEL {TOOLCHAINS_LABEL}={','.join(names)} termrl.toolchain-packages={','.join(packages)}"]
        container.commit(repository=repository, tag=version, changes="\n".join(changes))
        image = client.images.get(tag)
        added = image.attrs.get("Size", 0) - base.attrs.get("Size", 0)
        log(f"built {tag} ({image.short_id}, {image.attrs.get('Size', 0) / 1e6:.0f} MB, {added / 1e6:.0f} MB over {base_tag}) "
            f"in {time.monotonic() - started:.0f} s")
        return tag
    finally:
        if container is not None:
            container.remove(force=True)
        shutil.rmtree(work, ignore_errors=True)


def ensure_toolchain_image(names, base_tag: str = DEFAULT_TAG, client=None, **kwargs) -> str:
    """The variant's tag, building it first when the engine lacks it."""
    client = client or docker_client()
    tag = toolchain_tag(base_tag, names)
    if image_exists(client, tag):
        return tag
    return build_toolchain_image(names, base_tag, client=client, **kwargs)


# -- command line --------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_termrl.sandbox.docker.images.base", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("build", "build the base image (again, with --force)"), ("ensure", "build the base image if it is missing")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--tag", default=DEFAULT_TAG, help="the base image's tag (with --with: the variant's base)")
        p.add_argument("--with", dest="toolchains", default=None, metavar="NAMES",
                       help="a toolchain variant of the base image with these, comma-separated: cpp, golang, java, rust")
        p.add_argument("--mirror", default=None, help="Debian mirror URI (default: the one apt uses)")
        p.add_argument("--suite", default=None, help="distribution codename (default: the host's)")
        p.add_argument("--scratch", default=None, help="folder for the temporary root filesystem (default /var/tmp)")
        if name == "build":
            p.add_argument("--force", action="store_true", help="rebuild even if the tag exists")
    sub.add_parser("mirror", help="print the mirror and suite the build would use")
    task = sub.add_parser("task", help="build a task's Dockerfile")
    task.add_argument("dockerfile_dir")
    prune = sub.add_parser("prune-tasks", help="remove the task images that `task` or the docker backend built")
    prune.add_argument("--task", default=None, help="only this task's (the NAME of termrl-task-NAME)")
    args = parser.parse_args(argv)
    try:
        if args.command == "mirror":
            uri, suite, keyring = apt_mirror()
            print(f"{uri} {suite}{' ' + keyring if keyring else ''}")
            return 0
        if args.command == "task":
            print(build_task_image(Path(args.dockerfile_dir)))
            return 0
        if args.command == "prune-tasks":
            removed = remove_task_images(args.task)
            print("\n".join(f"removed {tag}" for tag in removed) or "no task images")
            return 0
        client = docker_client()
        if args.toolchains is not None:
            names = toolchain_names(args.toolchains)
            tag = toolchain_tag(args.tag, names)
            if (args.command == "ensure" or not args.force) and image_exists(client, tag):
                print(f"{tag} present ({client.images.get(tag).short_id}); nothing to do")
                return 0
            print(build_toolchain_image(names, args.tag, mirror=args.mirror, client=client))
            return 0
        kwargs = {"mirror": args.mirror, "suite": args.suite, "scratch": Path(args.scratch) if args.scratch else None}
        if args.command == "ensure" or not args.force:
            if image_exists(client, args.tag):
                print(f"{args.tag} present ({client.images.get(args.tag).short_id}); nothing to do")
                return 0
        build_base_image(args.tag, client=client, **kwargs)
        return 0
    except SandboxError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
