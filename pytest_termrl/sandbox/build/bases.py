"""Base images the host stands in for, and the host's identity that every cached layer over it carries.

A ``FROM`` the builder accepts starts from the host's own system folders (the whole-machine
sandbox's lowers): a generic Linux with a shell, Python and the packages the host has. The
substitution is recorded with the image named. Any other ``FROM`` is refused naming the image.

=====================================================  =========================================
image (any tag or digest)                              why the host stands in
=====================================================  =========================================
``debian``, ``ubuntu``                                 a Debian-family system: the host's
``buildpack-deps``                                     Debian plus compilers and -dev headers:
                                                       the host's where installed
``python``                                             Debian with CPython: the host's python3
``termrl-base``                                        the harness's own base (Debian)
``ghcr.io/laude-institute/t-bench/python-*``,          Terminal-Bench's generic bases (Debian
``.../ubuntu-*``                                       with Python, tmux, asciinema)
=====================================================  =========================================

A registry prefix (``docker.io/``, ``docker.io/library/``, ``library/``) is allowed.
Whatever a stood-in base lacks that a step installs is named by the step when it fails.

Only the harness's own base has its account ``user`` (1000) and ``/home/user``; every other
stands in without them (the bare base layer, :meth:`..bwrap.lowers.MachineLowers.bare`), as
those images are made.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
from pathlib import Path

from ...standins.inside import tools

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""The PATH a stood-in base's image sets (Docker's default for Linux images): what ``${PATH}`` means before any ENV."""

BUILDER_VERSION = "3"
"""Part of every layer's key: bump it when what a step writes changes."""

STAND_IN_BASES: tuple[tuple[str, str], ...] = (
    (r"(?:debian|ubuntu)", "a Debian-family system"),
    (r"buildpack-deps", "Debian with compilers and headers"),
    (r"python", "Debian with CPython"),
    (r"termrl-base", "the harness's own base image"),
    (r"ghcr\.io/laude-institute/t-bench/(?:python|ubuntu)[\w.-]*", "Terminal-Bench's generic base"),
)
"""(repository pattern, what it is) of every image the host stands in for."""

LIBRARY_PREFIX = (r"(?:(?:docker\.io|index\.docker\.io|registry-1\.docker\.io|mirror\.gcr\.io)/(?:library/)?"
                  r"|public\.ecr\.aws/docker/library/|library/)?")
"""Where the official images are pulled from besides Docker Hub's short names: its own hosts, Google's mirror, and the
copy of the library that AWS's public registry serves; each is the same image."""
_TAG = r"(?::[\w.-]+)?(?:@sha256:[0-9a-f]{64})?"


def _image(repository: str) -> re.Pattern[str]:
    """An image of ``repository`` (a pattern), from Docker Hub or a mirror of its library, any tag or digest."""
    return re.compile(f"^{LIBRARY_PREFIX}{repository}{_TAG}$", re.I)


_PATTERNS = [(_image(pattern), what) for pattern, what in STAND_IN_BASES]


HARNESS_ACCOUNT_BASES = (r"termrl-base",)
"""Repository patterns of the stood-in bases that have the harness's account 'user' (1000) and /home/user."""
_HARNESS_ACCOUNT = [_image(pattern) for pattern in HARNESS_ACCOUNT_BASES]


def has_harness_account(image: str) -> bool:
    """Whether the image ``FROM image`` names has the harness's account 'user' and /home/user (its own base alone)."""
    return any(pattern.match(image.strip()) for pattern in _HARNESS_ACCOUNT)


_TB_BASE = _image(r"ghcr\.io/laude-institute/t-bench/(?:python|ubuntu)[\w.-]*")


def base_workdir(image: str) -> str:
    """The folder a stood-in base's image config names as its WORKDIR: Terminal-Bench's bases set /app, the others none."""
    return "/app" if _TB_BASE.match(image.strip()) else "/"


_PYTHON_BASES = [_image(r"python"), _image(r"ghcr\.io/laude-institute/t-bench/python[\w.-]*")]


def base_links(image: str) -> dict[str, str]:
    """Commands a stood-in base's image has that the host may lack, as links to what stands in (link -> target):
    the python images' ``python``, where the host has only ``python3``."""
    if any(p.match(image.strip()) for p in _PYTHON_BASES) and not os.path.exists("/usr/bin/python"):
        return {"/usr/local/bin/python": "/usr/bin/python3"}
    return {}


def stand_in(image: str) -> str | None:
    """What the host stands in for when a Dockerfile says ``FROM image``; None when it cannot."""
    image = image.strip()
    for pattern, what in _PATTERNS:
        if pattern.match(image):
            return what
    return None


def _digest_file(h: "hashlib._Hash", path: str) -> None:
    h.update(path.encode() + b"\0")
    try:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:
        h.update(f"unreadable: {exc.errno}".encode())
    h.update(b"\0")


_PYTHON_SITES = ("usr/lib/python3/dist-packages/*.dist-info", "usr/local/lib/python3*/*-packages/*.dist-info")
_IDENTITY: dict[str, str] = {}


def host_identity(host_root: str = "/") -> str:
    """A digest of what the host's system folders hold, as far as a build can tell cheaply.

    The package database (dpkg's status), the release, the accounts, the Python packages
    installed outside dpkg (their metadata folders' names), the machine's architecture and
    the offline stand-ins' source: a layer cached over one host is never reused over a host
    that changed under it. Computed once per process.
    """
    if host_root in _IDENTITY:
        return _IDENTITY[host_root]
    h = hashlib.sha256(f"builder {BUILDER_VERSION}\0{platform.machine()}\0".encode())
    for rel in ("var/lib/dpkg/status", "etc/os-release", "etc/passwd", "etc/group"):
        _digest_file(h, os.path.join(host_root, rel))
    _digest_file(h, tools.__file__)
    for pattern in _PYTHON_SITES:
        for path in sorted(Path(host_root).glob(pattern)):
            h.update(path.name.encode() + b"\0")
    _IDENTITY[host_root] = h.hexdigest()
    return _IDENTITY[host_root]
