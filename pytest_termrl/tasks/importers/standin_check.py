"""Would the verifier's offline stand-ins serve this grader line? The importer's static view of the stand-ins' rules.

A grader script's network line (``pip install pytest``, ``uvx -w pytest pytest ...``,
``apt-get install -y gcc``, uv's ``curl ... install.sh | sh``) is no blocker when the
stand-ins in the verifier sandbox will meet it from what is already here: the same rules,
checked from the harness's own Python (the trusted toolchain the grader runs with): a pip
or uv package must be installed with its version satisfied (any ``pytest`` pin is met by
the trusted pytest, any ``pytest-json-ctrf`` pin by its own ``--ctrf``), an apt package's
command must be on the sandbox's PATH.
"""

from __future__ import annotations

import re
import shlex
import shutil
from importlib import metadata
from pathlib import Path

from ...standins.inside import tools
from .scripts import logical_lines, network_need, split_segments


_TABLES = tools  # the very tables the stand-ins apply, so the two never drift apart
SANDBOX_PATH = _TABLES.REAL_PATH
_TRUSTED = set(_TABLES.TRUSTED_TOOLS)
_APT_COMMANDS = dict(_TABLES.APT_COMMANDS)
_APT_ALWAYS = set(_TABLES.APT_ALWAYS) | set(_TABLES.SESSION_RECORDERS)  # recorders: left out, never refused
_UV_INSTALLER = re.compile(tools.UV_INSTALLER.pattern.strip("^$"))  # the stand-in's own rule, found inside a line
_TAKES_VALUE = {"-p", "--python", "-i", "--index-url", "--extra-index-url", "--from", "--cache-dir", "--directory", "--project"}


def package_missing(requirement: str) -> str | None:
    """Why a pip requirement is not met here (None when it is)."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(requirement)
    except InvalidRequirement:
        return f"{requirement!r} is not a requirement the stand-in can read"
    if _TABLES.trusted_plugin(req.name):
        return None
    try:
        version = metadata.version(req.name)
    except metadata.PackageNotFoundError:
        return f"the package {req.name!r} is not installed here"
    if req.name.lower() in _TRUSTED or req.specifier.contains(version, prereleases=True):
        return None
    return f"{req.name} {version} is installed here, which does not satisfy {req.specifier}"


def _packages(words: list[str]) -> list[str] | None:
    """The requirements named on an install command line; None when it reads a file or builds a project."""
    found, i = [], 0
    while i < len(words):
        word = words[i]
        if word in ("-r", "--requirement", "-e", "--editable") or (word.startswith("-r") and len(word) > 2):
            return None
        if word in _TAKES_VALUE:
            i += 2
            continue
        if word in ("--with", "-w"):
            found += [w for w in words[i + 1].split(",") if w] if i + 1 < len(words) else []
            i += 2
            continue
        if not word.startswith("-"):
            found.append(word)
        i += 1
    return found


_REDIRECT_ALONE = re.compile(r"^(?:\d*|&)(?:>>?|<)$")
_REDIRECT = re.compile(r"^(?:\d*|&)(?:>>?|<)&?\S+$")


def _without_redirections(words: list[str]) -> list[str]:
    """The words of a command without its redirections (``2>/dev/null``, ``> log``, ``2>&1``)."""
    kept, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif _REDIRECT_ALONE.match(word):
            skip = True
        elif not _REDIRECT.match(word):
            kept.append(word)
    return kept


def _segment_problem(segment: str) -> str | None:
    """Why the stand-ins would not serve one command (None when they would, or it fetches nothing)."""
    if _UV_INSTALLER.search(segment) and re.search(r"\|\s*(?:sh|bash)\b", segment):
        return None
    try:
        words = shlex.split(segment)
    except ValueError:
        return "a command the stand-ins cannot read"
    words = [w for w in _without_redirections(words) if w not in ("sudo", "env") and not re.match(r"^[A-Za-z_]\w*=(?!=)", w)]
    if not words:
        return None
    if words[0] in ("python", "python3") and words[1:3] == ["-m", "pip"]:
        words = ["pip", *words[3:]]  # the grader's python3 routes -m pip to the pip stand-in
    head = words[0]
    if head in ("pip", "pip3") and words[1:2] == ["install"]:
        packages = _packages(words[2:])
    elif head == "uv" and words[1:3] == ["pip", "install"]:
        packages = _packages(words[3:])
    elif head == "uv" and words[1:2] in (["add"], ["run"]):
        options = []
        for index, word in enumerate(words[2:], start=2):
            if not word.startswith("-") and (index == 2 or words[index - 1] not in _TAKES_VALUE | {"--with", "-w"}):
                break
            options.append(word)
        packages = _packages(words[2:]) if words[1] == "add" else _packages(options)
        if words[1] == "run":
            tool = words[2 + len(options)] if len(words) > 2 + len(options) else ""
            if tool and tool not in _TRUSTED | {"python", "python3"} and shutil.which(tool, path=SANDBOX_PATH) is None:
                return f"uv run {tool}: the tool is not installed here"
    elif head == "uv" and words[1:2] in (["venv"], ["init"], ["sync"]):
        return None
    elif head == "uvx":
        options, i = [], 1
        while i < len(words) and words[i].startswith("-"):
            options += words[i:i + 2] if words[i] in _TAKES_VALUE | {"--with", "-w"} else words[i:i + 1]
            i += 2 if words[i] in _TAKES_VALUE | {"--with", "-w"} else 1
        packages = _packages(options) or []
        tool = words[i] if i < len(words) else ""
        name = re.split(r"[<>=!~@\[]", tool)[0]
        if name in _TRUSTED:
            packages.append(tool.replace("@", "=="))
        elif name and shutil.which(name, path=SANDBOX_PATH) is None:
            return f"uvx {name}: the tool is not installed here"
    elif head in ("apt-get", "apt"):
        rest = [w for w in words[1:] if not w.startswith("-")]
        if rest[:1] in (["update"], ["upgrade"], ["clean"], ["autoremove"]):
            return None
        if rest[:1] != ["install"]:
            return f"{head} {' '.join(rest[:1])}"
        for package in rest[1:]:
            name = package.split("=")[0].split(":")[0]
            row, match = _TABLES._row("apt-get", name)
            if row is not None:  # python3.X and its companions: the substitutions' own check of the host
                ok, note = row.apply(row, match, name)
                if not ok:
                    return note
                continue
            command = _APT_COMMANDS.get(name, name)
            if name not in _APT_ALWAYS and shutil.which(command, path=SANDBOX_PATH) is None:
                return f"the apt package {name!r} is not installed here"
        return None
    else:
        return "the stand-ins do not fetch this"
    if packages is None:
        return "installs from a requirements file or a project"
    for requirement in packages:
        problem = package_missing(requirement)
        if problem:
            return problem
    return None


def standin_problem(line: str) -> str | None:
    """Why the stand-ins would not serve a grader line that needs the network (None when they would)."""
    for segment in split_segments(line):
        for part in re.split(r"\s*\|\|\s*", segment):
            if network_need(part) is None:
                continue
            problem = _segment_problem(part)
            if problem:
                return problem
    return None


def unserved_network(text: str) -> list[str]:
    """'line N: <text> (<why>)' for each line of a script that needs the network and that no stand-in serves."""
    found = []
    for lineno, line in logical_lines(text):
        if network_need(line) is None:
            continue
        problem = standin_problem(line)
        if problem:
            found.append(f"line {lineno}: {line[:160]} ({network_need(line)}; offline: {problem})")
    return found
