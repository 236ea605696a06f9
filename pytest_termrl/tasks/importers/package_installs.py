"""Package installs in a Dockerfile's RUN lines, and whether the sandbox already has what they would fetch.

A bwrap sandbox stands on the host's system folders, so an ``apt-get install`` of a package
whose command the host has, or a ``pip install`` of a module the host's python3 imports,
needs nothing; the rest would be fetched over the network, which the planner names.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess

from .toolchains import SANDBOX_PATH

REQUIREMENTS = "<requirements file>"
"""What a ``pip install -r FILE`` installs, as far as a plan can tell: never satisfied by looking."""

HARNESS_ONLY_PACKAGES = {"tmux", "asciinema"}
"""Installed by Terminal-Bench images for its own tmux-driven harness, not for the task."""
GRADER_TOOLING = re.compile(r"^(?:pytest(?:-[\w.-]+)?|pluggy|iniconfig)$", re.I)
"""pip packages the trusted toolchain stands in for."""
GRADER_TOOLING_APT = re.compile(r"^python3-(?:pytest(?:-[\w.-]+)?|pluggy|iniconfig)$", re.I)
"""The same, as Debian packages (an exported task's image installs python3-pytest for its grader)."""
APT_COMMAND = {
    "python3-pip": "pip3", "coreutils": "ls", "procps": "ps", "findutils": "find", "build-essential": "gcc",
    "git-core": "git", "xz-utils": "xz", "bsdmainutils": "column", "util-linux": "lsblk", "iproute2": "ip",
    "dnsutils": "dig", "netcat-openbsd": "nc", "netcat": "nc", "openssh-client": "ssh", "vim-tiny": "vi",
    "gawk": "awk", "sqlite3": "sqlite3", "python-is-python3": "python", "bash": "bash", "grep": "grep",
    "sed": "sed", "tar": "tar", "gzip": "gzip", "bzip2": "bzip2", "zip": "zip", "unzip": "unzip",
}
APT_ALWAYS = {"ca-certificates", "locales", "tzdata", "apt-utils", "lsb-release", "gnupg"}
PIP_MODULE = {"pyyaml": "yaml", "scikit-learn": "sklearn", "pillow": "PIL", "beautifulsoup4": "bs4", "python-dateutil": "dateutil"}


def needs_nothing(manager: str, package: str) -> bool:
    """A package whose install needs no fetch: the harness's own, one always present, or grader tooling the trusted pytest serves."""
    if manager == "apt":
        return package in HARNESS_ONLY_PACKAGES or package in APT_ALWAYS or bool(GRADER_TOOLING_APT.match(package))
    return bool(GRADER_TOOLING.match(package))


def sandbox_satisfies(manager: str, package: str) -> bool:
    """Whether the sandbox already has what installing ``package`` gives: its command (apt), its module (pip)."""
    if manager == "apt":
        return _host_command(APT_COMMAND.get(package, package))
    return package != REQUIREMENTS and _sandbox_python_has(PIP_MODULE.get(package.lower(), package.replace("-", "_")))


def _host_command(name: str) -> bool:
    return shutil.which(name, path=SANDBOX_PATH) is not None


_SANDBOX_PYTHON_MODULES: dict[str, bool] = {}


def _sandbox_python_has(module: str) -> bool:
    """Whether the python3 a bwrap sandbox sees (the host's /usr) imports ``module``."""
    if module not in _SANDBOX_PYTHON_MODULES:
        python = shutil.which("python3", path=SANDBOX_PATH)
        ok = False
        if python:
            probe = "import importlib.util,sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)"
            try:
                ok = subprocess.run([python, "-I", "-c", probe, module], capture_output=True, timeout=20).returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                ok = False
        _SANDBOX_PYTHON_MODULES[module] = ok
    return _SANDBOX_PYTHON_MODULES[module]


def install_packages(segment: str) -> tuple[str, list[str]] | None:
    """('apt'|'pip', packages) when the segment installs packages, else None."""
    try:
        words = shlex.split(segment)
    except ValueError:
        return None
    words = [w for w in words if w not in ("sudo", "env", "DEBIAN_FRONTEND=noninteractive")]
    if not words:
        return None
    if words[0] in ("apt-get", "apt") and "install" in words:
        rest = words[words.index("install") + 1:]
        return "apt", [w.split("=")[0] for w in rest if not w.startswith("-")]
    pip = None
    if words[0] in ("pip", "pip3") and len(words) > 1 and words[1] == "install":
        pip = words[2:]
    elif len(words) > 3 and re.match(r"python3?$", words[0]) and words[1:4] == ["-m", "pip", "install"]:
        pip = words[4:]
    elif words[:3] == ["uv", "pip", "install"]:
        pip = words[3:]
    if pip is not None:
        if any(w in ("-r", "--requirement", "-e", "--editable") or w.startswith("-r") for w in pip):
            return "pip", [REQUIREMENTS]
        return "pip", [re.split(r"[<>=!~\[;]", w)[0] for w in pip if not w.startswith("-")]
    return None


