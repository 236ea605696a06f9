"""Offline stand-ins for pip, pip3, uv, uvx, apt-get, apt, curl, wget and add-apt-repository inside sandboxes.

Executed as ``python -I tools.py TOOL ARGS...`` by the shims the script runner puts
first on the grader's PATH (the harness's own Python, standard library and ``packaging``
only). There is no network, so each install a grader script asks for is checked against
what is already here: it succeeds, printing one line, when every package asked for is
present with its version satisfied, and fails with a one-line reason naming the missing
package otherwise. The harness's pytest stands in for any ``pytest`` pin (it is the
grader's trusted pytest). Tools are run when asked: ``uvx pytest ...`` and ``uv run pytest
...`` run the trusted pytest, ``uv run python`` the trusted Python. ``uv venv DIR`` makes a
folder whose ``bin/activate`` keeps the stand-ins on PATH. Every stand-in appends what it
did to ``STANDIN_LOG`` so the runner can sign the list with the verdict.

The agent's sandbox runs the same stand-ins (``--sandbox=agent``, from the shims of
pytest_termrl/sandbox/standin_shims.py) with the sandbox's own python3, which may lack
``packaging``: a small standard-library reading of the common specifiers (==, !=, <=, >=,
<, >, ~=, ===, ``==1.2.*``) on dotted versions takes its place. There "present" is what
that python3 can import the metadata of, and for apt what the sandbox has (a command on
PATH, ``/usr/share/doc/PKG``, or dpkg's status); there is no trusted pytest, so ``uvx
pytest`` runs the sandbox's pytest or fails naming it. A Dockerfile's RUN steps, built
without a daemon over the host's system folders, meet the same shims.

Toolchain installers (:data:`SUBSTITUTIONS`, one table: uv's and pip's installer scripts, the
Go tarball, rustup, nvm, NodeSource, the deadsnakes PPA and the ``python3.X`` packages) are
met from the host's system folders as the sandbox sees them: ``curl`` and ``wget`` of a known
URL give a stand-in script or tarball instead of fetching (any other URL goes to the real
tool), ``add-apt-repository`` accepts the repositories the table knows, ``apt-get install
python3.X-venv`` checks the host's interpreter. A row whose toolchain is there leaves behind
what the real installer would (``/usr/local/go/bin/go``, ``$CARGO_HOME/bin/cargo``,
``$NVM_DIR/nvm.sh``...), linking the host's; one whose toolchain is absent fails with one
line naming the Debian package to install on the host. Each row logs ``substituted: ROW: ...``.
The host paths checked are prefixed by ``$TERMRL_STANDIN_ROOT`` when it is set (the tests
point it at a folder that does not exist). A real pip (a venv's) needs
:data:`OFFLINE_PIP_ENV` in its environment to fail fast offline.
"""

import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.parse
from importlib import metadata
from typing import Any, Callable, NamedTuple

SHIM_DIR = os.path.dirname(os.environ.get("TERMRL_STANDIN_LOG", "/tmp/termrl-grader-bin/standins.log"))
STANDIN_LOG = os.environ.get("TERMRL_STANDIN_LOG", "/tmp/termrl-grader-bin/standins.log")
TOOLS = ("pip", "pip3", "uv", "uvx", "apt-get", "apt", "curl", "wget", "add-apt-repository")
"""The commands stood in for, in the agent's sandbox and the verifier's alike (curl and wget for the
installers of SUBSTITUTIONS, any other URL going to the real tool)."""
REAL_PATH = "/usr/local/bin:/usr/bin:/bin"
TRUSTED_TOOLS = {"pytest", "py.test"}
TRUSTED_PLUGINS = {"pytest-json-ctrf": "the trusted pytest's own --ctrf report"}
"""pytest plugins whose option the trusted pytest offers itself (any pin is met, in the verifier only)."""
APT_COMMANDS = {
    "python3": "python3", "python3-pip": "python3", "python-is-python3": "python3", "build-essential": "gcc",
    "g++": "g++", "coreutils": "ls", "procps": "ps", "findutils": "find", "git-core": "git", "xz-utils": "xz",
    "iproute2": "ip", "dnsutils": "dig", "netcat-openbsd": "nc", "openssh-client": "ssh", "vim-tiny": "vi",
    "golang": "go", "golang-go": "go", "rustc": "rustc", "cargo": "cargo", "default-jdk": "javac", "openjdk-17-jdk": "javac",
    "nodejs": "node", "sqlite3": "sqlite3", "gawk": "awk",
}
APT_ALWAYS = {"ca-certificates", "locales", "tzdata", "apt-utils", "lsb-release", "gnupg", "software-properties-common"}
"""Packages an install of which always succeeds (software-properties-common: add-apt-repository is a stand-in)."""
SESSION_RECORDERS = {"tmux", "asciinema"}
"""What Terminal-Bench's images install for its harness to drive and record the agent's terminal, which this harness
does without: an install of one the host lacks succeeds, said to be left out, never said to be present."""
UV_INSTALLER = re.compile(r"^https?://(?:astral\.sh/uv/|github\.com/astral-sh/uv/releases/)\S*install\.sh$")
IN_AGENT_SANDBOX = False
IN_BUILD = os.environ.get("TERMRL_STANDIN_BUILD") == "1"
"""A Dockerfile's step being built: its grader tooling (pytest and its plugins, as pip or Debian packages) is what the
trusted pytest stands in for when the image is graded, so installing it succeeds, recorded as a substitution."""
GRADER_TOOLING = re.compile(r"^(?:python3-)?(?:pytest(?:-[\w.-]+)?|pluggy|iniconfig)$", re.I)
"""Set by ``--sandbox=agent``: no trusted pytest stands in for a pin, apt asks the sandbox itself."""


def _record(line):
    try:
        with open(STANDIN_LOG, "a") as handle:
            handle.write(line + "\n")
    except OSError:
        pass


def _say(line):
    print(f"termrl offline stand-in: {line}", file=sys.stderr)


def _fail(tool, line):
    _record(f"{tool}: refused: {line}")
    _say(f"{tool}: {line}")
    return 1


_PHASES = {"dev": 0, "a": 1, "alpha": 1, "b": 2, "beta": 2, "c": 3, "rc": 3, "pre": 3, "preview": 3, "": 4,
           "post": 5, "rev": 5, "r": 5}
_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)(?:[-_.]?([a-z]+)[-_.]?(\d*))?(?:\+[a-z0-9._]*)?$")
_NAME = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*(.*?)\s*$")
_CLAUSE = re.compile(r"^(~=|===|==|!=|<=|>=|<|>)\s*([A-Za-z0-9_.*+!-]+)$")


def _release(version):
    """The dotted release numbers of a version ([1, 2, 0] for 1.2.0rc1), None when it is not one this reads."""
    match = _VERSION.match(version.strip().lower())
    if match is None or (match.group(2) or "") not in _PHASES:
        return None
    return [int(part) for part in match.group(1).split(".")]


def _version_key(version):
    """An ordering key: release (trailing zeros dropped), then dev < a < b < rc < final < post."""
    match = _VERSION.match(version.strip().lower())
    if match is None or (match.group(2) or "") not in _PHASES:
        return None
    release = [int(part) for part in match.group(1).split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    return tuple(release), _PHASES[match.group(2) or ""], int(match.group(3) or 0)


def _clause_holds(version, op, target):
    """Does ``version`` satisfy the one clause ``op target`` (standard library only)?"""
    if op == "===":
        return version.strip() == target.strip()
    if target.endswith(".*"):
        prefix, release = _release(target[:-2]), _release(version)
        if prefix is None or release is None:
            return False
        same = (release + [0] * len(prefix))[: len(prefix)] == prefix
        return same if op == "==" else not same
    key, want = _version_key(version), _version_key(target)
    if key is None or want is None:
        return False
    if op == "~=":
        release = _release(target)
        return key >= want and _clause_holds(version, "==", ".".join(map(str, release[:-1])) + ".*")
    if op == "<":  # PEP 440: <1.2 admits no pre-release of 1.2 itself
        return key < want and not (key[0] == want[0] and key[1] < _PHASES[""] <= want[1])
    if op == ">":  # nor >1.2 a post-release of 1.2
        return key > want and not (key[0] == want[0] and key[1] > _PHASES[""] >= want[1])
    return {"==": key == want, "!=": key != want, "<=": key <= want, ">=": key >= want}[op]


def _fallback_requirement(requirement):
    """(name, specifier text, contains) read without ``packaging``; None when it is no requirement this reads."""
    match = _NAME.match(requirement.split(";", 1)[0])
    if match is None:
        return None
    name, rest = match.group(1), match.group(2)
    if rest.startswith("@"):  # a direct reference: whatever version is installed is the one asked for
        rest = ""
    if rest.startswith("(") and rest.endswith(")"):
        rest = rest[1:-1]
    clauses = []
    for part in (p.strip() for p in rest.split(",")) if rest else ():
        clause = _CLAUSE.match(part)
        if clause is None:
            return None
        op, target = clause.groups()
        wildcard = target.endswith(".*")
        if (wildcard and op not in ("==", "!=")) or (op != "===" and _release(target[:-2] if wildcard else target) is None):
            return None
        if op == "~=" and len(_release(target)) < 2:
            return None
        clauses.append((op, target))
    text = ",".join(sorted(f"{op}{target}" for op, target in clauses))
    return name, text, lambda version: all(_clause_holds(version, op, target) for op, target in clauses)


def _requirement(requirement):
    """(name, specifier text, contains) by ``packaging`` where it is importable, else by the fallback; None if unreadable."""
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:  # the agent's sandbox: its python3 may have no packaging
        return _fallback_requirement(requirement)
    try:
        req = Requirement(requirement)
    except InvalidRequirement:
        return None
    return req.name, f"{req.specifier}", lambda version: req.specifier.contains(version, prereleases=True)


def trusted_plugin(name):
    """What the trusted pytest offers in place of this pytest plugin (None: it is a package like any other)."""
    return TRUSTED_PLUGINS.get(re.sub(r"[-_.]+", "-", name).lower())


def _present(requirement):
    """(ok, what): is this requirement (``name``, ``name==1.2``, ``name>=1``, ``name[extra]``) met here?"""
    parsed = _requirement(requirement)
    if parsed is None:
        return False, f"{requirement!r} is not a requirement this stand-in can read"
    name, specifier, contains = parsed
    if IN_BUILD and GRADER_TOOLING.match(name):
        _record(f"substituted: grader-tooling: pip install {requirement} (the grader's trusted pytest stands in)")
        return True, f"{requirement} (the grader's trusted pytest stands in)"
    provided = trusted_plugin(name)
    if provided and not IN_AGENT_SANDBOX:
        return True, f"{requirement} (provided: {provided})"
    try:
        version = metadata.version(name)
    except metadata.PackageNotFoundError:
        return False, f"the package {name!r} is not installed here and there is no network to fetch it"
    if (name.lower() in TRUSTED_TOOLS and not IN_AGENT_SANDBOX) or contains(version):
        return True, f"{requirement} (present: {name} {version})"
    return False, f"{requirement}: {name} {version} is installed here, which does not satisfy {specifier}"


def _requirements_file(path):
    try:
        with open(path) as handle:
            lines = [line.split("#", 1)[0].strip() for line in handle]
    except OSError as exc:
        return None, f"cannot read {path} ({exc.strerror})"
    return [line for line in lines if line and not line.startswith("-")], None


def _install(tool, words):
    """pip install / uv pip install / uv add: each package asked for must be present."""
    wanted, i = [], 0
    takes_value = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint", "--target", "-t",
                   "--prefix", "--python", "-p", "--root", "--cache-dir", "--trusted-host", "--platform", "--group"}
    while i < len(words):
        word = words[i]
        if word in ("-r", "--requirement", "-e", "--editable") or (word.startswith("-r") and len(word) > 2):
            path = word[2:] if word.startswith("-r") and len(word) > 2 else (words[i + 1] if i + 1 < len(words) else "")
            if word in ("-e", "--editable"):
                return _fail(tool, f"an editable install of {path} needs a build this stand-in does not do")
            lines, problem = _requirements_file(path)
            if problem:
                return _fail(tool, problem)
            wanted += lines
            i += 1 if word.startswith("-r") and len(word) > 2 else 2
            continue
        if word in takes_value:
            i += 2
            continue
        if not word.startswith("-"):
            wanted.append(word)
        i += 1
    if not wanted:
        _record(f"{tool}: nothing to install")
        return 0
    done = []
    for requirement in wanted:
        ok, what = _present(requirement)
        if not ok:
            return _fail(tool, what)
        done.append(what)
    _record(f"{tool} install: " + ", ".join(done))
    _say(f"{tool}: already present, nothing fetched: " + ", ".join(done))
    return 0


def _run_tool(tool, argv):
    """Run a command the way uvx / uv run would: the trusted pytest and Python for pytest and python."""
    if not argv:
        return _fail(tool, "no command to run")
    name = re.split(r"[<>=!~@\[]", argv[0])[0]
    if name in ("python", "python3") or re.fullmatch(r"python3(?:\.\d+)?", name):
        command = [sys.executable, *argv[1:]]
    elif name.endswith(".py"):  # uv run SCRIPT.py: the script with the project's Python, executable or not
        command = [sys.executable, *argv]
    elif name in TRUSTED_TOOLS and not IN_AGENT_SANDBOX:
        command = [os.path.join(SHIM_DIR, "pytest"), *argv[1:]]
    elif name in TRUSTED_TOOLS and _present("pytest")[0]:
        command = [sys.executable, "-m", "pytest", *argv[1:]]
    else:
        found = shutil.which(name, path=f"{SHIM_DIR}:{os.environ.get('PATH', REAL_PATH)}")
        if found is None and name in TRUSTED_TOOLS:
            return _fail(tool, f"the package {name!r} is not installed here and there is no network to fetch it")
        if found is None:
            return _fail(tool, f"the tool {name!r} is not installed here and there is no network to fetch it")
        command = [found, *argv[1:]]
    _record(f"{tool}: ran {name}")
    return subprocess.call(command)


def _options(words, with_value):
    """(packages named by --with/-w, the rest after the options)."""
    extra, i = [], 0
    while i < len(words) and words[i].startswith("-"):
        word = words[i]
        if word in ("--with", "-w"):
            extra += [w.strip() for w in words[i + 1].split(",") if w.strip()] if i + 1 < len(words) else []
            i += 2
        elif word.startswith("--with="):
            extra += [w.strip() for w in word.split("=", 1)[1].split(",") if w.strip()]
            i += 1
        elif word in with_value:
            i += 2
        else:
            i += 1
    return extra, words[i:]


def uvx(words):
    extra, rest = _options(words, {"-p", "--python", "--from", "--index-url", "--cache-dir"})
    if extra and _install("uvx --with", extra):
        return 1
    if rest and not rest[0].startswith("-") and re.search(r"[<>=!~@]", rest[0]):
        ok, what = _present(rest[0].replace("@", "=="))
        if not ok:
            return _fail("uvx", what)
    return _run_tool("uvx", rest)


def _venv(path):
    """A venv-shaped folder whose activate keeps the stand-ins first on PATH and whose python is the trusted one."""
    bin_dir = os.path.join(path, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    with open(os.path.join(bin_dir, "activate"), "w") as handle:
        handle.write(f'export VIRTUAL_ENV="{os.path.abspath(path)}"\nexport PATH="{SHIM_DIR}:$VIRTUAL_ENV/bin:$PATH"\ndeactivate() {{ :; }}\n')
    for name in ("python", "python3"):
        target = os.path.join(bin_dir, name)
        if not os.path.lexists(target):
            os.symlink(sys.executable, target)
    _record(f"uv venv {path}")
    return 0


def uv(words):
    global_value = {"-p", "--python", "--directory", "--project", "--cache-dir"}
    _, rest = _options(words, global_value)
    if not rest:
        return _fail("uv", "no subcommand")
    command, args = rest[0], rest[1:]
    if command == "pip" and args[:1] == ["install"]:
        return _install("uv pip", args[1:])
    if command == "add":
        return _install("uv add", args)
    if command == "venv":
        positional = [a for a in args if not a.startswith("-")]
        return _venv(positional[0] if positional else ".venv")
    if command in ("init", "sync", "lock") and not [a for a in args if not a.startswith("-")]:
        _record(f"uv {command}: nothing done")
        return 0
    if command == "run":
        extra, run_args = _options(args, {"-p", "--python", "--directory", "--project", "--group", "--extra"})
        if extra and _install("uv run --with", extra):
            return 1
        return _run_tool("uv run", run_args)
    if command == "tool" and args[:1] == ["run"]:
        return uvx(args[1:])
    if command == "tool" and args[:1] == ["install"]:
        return _install("uv tool", args[1:])
    return _fail("uv", f"'uv {command}' needs the network or a project this stand-in does not build")


def pip(tool, words):
    if words[:1] == ["install"]:
        return _install(tool, words[1:])
    if words[:1] in (["list"], ["show"], ["freeze"], ["--version"]):
        return subprocess.call([sys.executable, "-m", "pip", *words])
    return _fail(tool, f"'{tool} {' '.join(words[:1])}' is not something the offline stand-in does")


def apt(tool, words):
    args, i = [], 0
    while i < len(words):  # the words that are no option nor an option's value (-o Dpkg::Options::=..., -t bookworm)
        if words[i] in ("-o", "--option", "-t", "--target-release", "-c", "--config-file"):
            i += 2
            continue
        if not words[i].startswith("-"):
            args.append(words[i])
        i += 1
    if not args:
        return _fail(tool, "no command")
    if args[0] in ("update", "upgrade", "clean", "autoclean", "autoremove", "dist-upgrade"):
        _record(f"{tool} {args[0]}: nothing done")
        return 0
    if args[0] != "install":
        return _fail(tool, f"'{tool} {args[0]}' is not something the offline stand-in does")
    present, substituted, left_out = [], [], []
    for package in args[1:]:
        name = package.split("=")[0].split(":")[0]
        if name in APT_ALWAYS:
            continue
        if IN_BUILD and GRADER_TOOLING.match(name):
            substituted.append(f"substituted: grader-tooling: {tool} install {name} (the grader's trusted pytest stands in)")
            continue
        row, match = _row("apt-get", name)
        if row is not None:
            ok, note = row.apply(row, match, name)
            if not ok:
                return _fail(tool, note)
            substituted.append(f"substituted: {row.name}: {tool} install {note}")
            continue
        command = APT_COMMANDS.get(name, name)
        if shutil.which(command, path=REAL_PATH) is None and not (IN_AGENT_SANDBOX and _apt_installed(name, command)):
            if name in SESSION_RECORDERS:
                left_out.append(name)
                continue
            return _fail(tool, f"the package {name!r} is not installed here (no {command!r} on PATH) and there is no network to fetch it")
        present.append(name)
    for line in substituted:
        _record(line)
    if present or not substituted:
        _record(f"{tool} install: " + (", ".join(present) or "nothing"))
    if left_out:
        _record(f"{tool} install: left out: {', '.join(left_out)} (Terminal-Bench's terminal recorder, not installed here)")
    every = [package.split("=")[0].split(":")[0] for package in args[1:]]
    _say(f"{tool}: already present, nothing fetched: "
         + (", ".join(n for n in every if n not in APT_ALWAYS and n not in left_out) or "nothing")
         + (f"; left out: {', '.join(left_out)} (Terminal-Bench's terminal recorder, which this harness does not use; "
            "not installed here)" if left_out else ""))
    return 0


def _apt_installed(name, command):
    """In the agent's sandbox: is the package there (its command on PATH, its doc folder, dpkg's status)?"""
    path = ":".join(p for p in os.environ.get("PATH", "").split(":") if p and p != SHIM_DIR)
    if path and shutil.which(command, path=path) is not None:
        return True
    if re.match(r"^[a-z0-9][a-z0-9.+-]*$", name) and os.path.isdir(f"/usr/share/doc/{name}"):
        return True
    try:
        status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    return status.returncode == 0 and status.stdout.strip().endswith(" installed")


# -- substitutions: toolchain installers met from what the host already has --------------------------
# A Dockerfile's RUN step (and the agent) fetches toolchains with curl, wget, add-apt-repository
# and apt-get. Offline, each known shape is met from the host's system folders as the sandbox
# sees them (SUBSTITUTIONS, below): the step succeeds and leaves behind what the rest of the
# Dockerfile expects when the host has the toolchain, and fails with one line naming the Debian
# package to install on the host otherwise.

ROOT_VARIABLE = "TERMRL_STANDIN_ROOT"
"""An environment variable whose value prefixes every host path the substitutions check and link
(unset: the paths as the sandbox sees them); the tests point it at a folder that does not exist
to see each row's absent case."""
OFFLINE_PIP_ENV = {
    "PIP_NO_INDEX": "1",
    "PIP_RETRIES": "0",
    "PIP_DEFAULT_TIMEOUT": "5",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_NO_INPUT": "1",
    "PIP_NO_BUILD_ISOLATION": "0",
    "PIP_BREAK_SYSTEM_PACKAGES": "1",
}
"""The environment that makes a real pip (a venv's ``bin/pip``, ``python3 -m pip``: no shim stands
in for them) offline: the builder puts it in every RUN step's environment.

- ``PIP_NO_INDEX=1``: no index is asked, so a requirement that is not already met fails at once
  (``No matching distribution found for flask``) instead of retrying the network, and one that is
  met says ``Requirement already satisfied``;
- ``PIP_RETRIES=0``, ``PIP_DEFAULT_TIMEOUT=5``: a URL or VCS requirement (which no index option
  stops) fails in seconds, not after five retries of fifteen;
- ``PIP_DISABLE_PIP_VERSION_CHECK=1``, ``PIP_NO_INPUT=1``: no self-check online, no prompt;
- ``PIP_NO_BUILD_ISOLATION=0`` (pip reads a ``--no-X`` flag's variable inverted: ``0`` turns
  isolation off): a local project (``pip install .``) builds with the setuptools and wheel the
  environment has, where an isolated build would have to fetch them;
- ``PIP_BREAK_SYSTEM_PACKAGES=1``: the host's python3 may be marked externally managed (PEP 668)
  where the image's was not; with no index, nothing is fetched into it anyway.
"""


class Substitution(NamedTuple):
    """One row of the substitutions' table."""

    name: str
    """The row's name: its log lines start ``substituted: NAME:``."""
    tool: str
    """Who applies it: ``curl/wget`` (a URL), ``add-apt-repository`` (a repository) or ``apt-get`` (a package)."""
    pattern: str
    """A regular expression the whole URL, repository or package name must match."""
    host: str
    """What must exist on the host as the sandbox sees it (under ``TERMRL_STANDIN_ROOT``)."""
    package: str
    """The Debian package to install on the host when it is absent (``-``: none needed)."""
    does: str
    """What the stand-in does in place of the fetch."""
    apply: Callable[..., Any]
    """fetch rows: (row, match, url) -> (payload or None, note); the others: (row, match, word) -> (ok, note)."""


def _host(path):
    """A host path as the substitutions check it: under TERMRL_STANDIN_ROOT when that is set."""
    return os.environ.get(ROOT_VARIABLE, "").rstrip("/") + path


def _absent(row, what, package=None):
    """The one line a substitution fails with: what is missing and the Debian package to install."""
    return (f"{row.name}: {what}, and there is no network to fetch it: "
            f"install the Debian package {package or row.package} on the host")


def _output(command, timeout=20):
    """A command's stripped stdout, None when it cannot run or fails."""
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                              timeout=timeout, universal_newlines=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _script(lines):
    return ("\n".join(lines) + "\n").encode()


def _failing_script(line):
    """A shell script that fails with the one line (what a fetch of an installer script gives when the host lacks it)."""
    return _script(["#!/bin/sh", f"echo {shlex.quote('termrl offline stand-in: ' + line)} >&2", "exit 1"])


def _shell_helpers(tag):
    q = shlex.quote
    return [
        f"__termrl_log={q(STANDIN_LOG)}",
        f'__say() {{ echo "termrl offline stand-in: {tag}: $*" >&2; }}',
        f"__fail() {{ __say \"$*\"; printf '{tag}: refused: %s\\n' \"$*\" >> \"$__termrl_log\" 2>/dev/null; exit 1; }}",
    ]


# uv's installer --------------------------------------------------------------------------------------
def _uv_installer(row, match, url):
    payload = _script([
        'mkdir -p "$HOME/.local/bin"',
        f"printf 'export PATH=\"{SHIM_DIR}:$PATH\"\\n' > \"$HOME/.local/bin/env\"",
        'echo "termrl offline stand-in: uv is already here" >&2',
    ])
    return payload, "uv's installer: the uv stand-in is already on PATH"


# get-pip.py -------------------------------------------------------------------------------------------
_GET_PIP = '''#!/usr/bin/env python3
"""get-pip.py: termrl's offline stand-in (there is no network): pip must already be there for the python that runs this."""
import sys

try:
    import pip
except ImportError:
    line = "%s has no pip, and there is no network to fetch it: install the Debian package python3-pip on the host" % (sys.executable,)
    sys.stderr.write("termrl offline stand-in: get-pip: " + line + "\\n")
    try:
        with open(@LOG@, "a") as handle:
            handle.write("get-pip: refused: " + line + "\\n")
    except (IOError, OSError):
        pass
    sys.exit(1)
sys.stderr.write("termrl offline stand-in: get-pip: pip %s is already here for %s\\n" % (pip.__version__, sys.executable))
'''


def _get_pip(row, match, url):
    return _GET_PIP.replace("@LOG@", repr(STANDIN_LOG)).encode(), "a get-pip.py that checks the python running it has pip"


# the Go tarball ---------------------------------------------------------------------------------------
def _go_tarball(row, match, url):
    """A gzip'd tar of go/: go/bin/* linking the host's, go/VERSION the host's, every other entry of the host's GOROOT linked."""
    goroot = _host("/usr/lib/go")
    go = f"{goroot}/bin/go"
    if not os.access(go, os.X_OK):
        return None, _absent(row, f"the host has no {go} ({match.group(1)} asked)")
    version = None
    try:
        with open(f"{goroot}/VERSION") as handle:
            version = handle.readline().strip() or None
    except OSError:
        pass
    if version is None:
        said = _output([go, "version"]) or ""
        found = re.search(r"\bgo(\d[\w.]*)", said)
        version = f"go{found.group(1)}" if found else "go"
    buffer = io.BytesIO()
    now = int(time.time())

    def member(name, kind, target="", data=b""):
        info = tarfile.TarInfo(name)
        info.type, info.mtime, info.uname, info.gname = kind, now, "root", "root"
        info.mode = 0o755 if kind != tarfile.REGTYPE else 0o644
        info.linkname, info.size = target, len(data)
        tar.addfile(info, io.BytesIO(data) if data else None)

    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        member("go", tarfile.DIRTYPE)
        member("go/bin", tarfile.DIRTYPE)
        for name in sorted(os.listdir(f"{goroot}/bin")):
            member(f"go/bin/{name}", tarfile.SYMTYPE, f"{goroot}/bin/{name}")
        for name in sorted(os.listdir(goroot)):
            if name not in ("bin", "VERSION"):
                member(f"go/{name}", tarfile.SYMTYPE, f"{goroot}/{name}")
        member("go/VERSION", tarfile.REGTYPE, data=f"{version}\n".encode())
    note = f"{match.group(1)} asked, the host's {version} linked (go/bin/go -> {go})"
    return buffer.getvalue(), note


# rustup -----------------------------------------------------------------------------------------------
_RUST_TOOLS = ("cargo", "rustc", "rustdoc", "rustfmt", "cargo-fmt", "cargo-clippy", "clippy-driver", "rust-gdb", "rust-lldb")
_RUST_COMPONENTS = (  # component, the host path that means it is there, the Debian package that brings it
    ("rustfmt", "/usr/bin/rustfmt", "rustfmt"),
    ("clippy", "/usr/bin/cargo-clippy", "rust-clippy"),
    ("rust-src", "/usr/lib/rustlib/src/rust", "rust-src"),
    ("rust-docs", "/usr/share/doc/rust-doc/html", "rust-doc"),
    ("rust-analyzer", "/usr/bin/rust-analyzer", "rust-analyzer"),
    ("llvm-tools", "/usr/bin/rust-lld", "rust-llvm"),
)
_RUSTUP = r'''#!/bin/sh
# rustup: termrl's offline stand-in (there is no network): the host's Rust toolchain
# (rustc @HOSTV@, @TARGET@) is the only one; what it cannot do fails naming what to install.
@HELPERS@
__hostv=@HOSTV@
__target=@TARGET@
__toolchain_ok() {
  __tc=${1%-"$__target"}
  case "$__tc" in stable|default|none|"$__hostv") return 0 ;; esac
  case "$__hostv" in "$__tc".*) return 0 ;; esac
  return 1
}
__need_toolchain() {
  __toolchain_ok "$1" || __fail "the Rust toolchain '$1' is not here (the host has rustc $__hostv), and there is no network to fetch it: install the Debian packages rustc and cargo of that version on the host"
}
__component() {
  __c=${1%-"$__target"}; __c=${__c%-preview}
  case "$__c" in
    rustc|cargo|rust-std) ;;
@COMPONENTS@
    *) __fail "the component '$1' is not one the offline stand-in can find on the host, and there is no network to fetch it" ;;
  esac
}
__target_ok() {
  [ "$1" = "$__target" ] && return 0
  [ -d @RUSTLIB@/"$1" ] && return 0
  case "$1" in
    wasm32-*) __pkg=libstd-rust-dev-wasm32 ;;
    *-windows-*) __pkg=libstd-rust-dev-windows ;;
    *) __pkg="libstd-rust-dev (for $1)" ;;
  esac
  __fail "the target '$1' is not on the host (no @RUSTLIB@/$1), and there is no network to fetch it: install the Debian package $__pkg on the host"
}
__split() { echo "$1" | tr ',' ' '; }
__cmd=${1-}
[ $# -gt 0 ] && shift
case "$__cmd" in
  -V|--version) echo "rustup 1.27.1 (termrl offline stand-in: the host's rustc $__hostv)" ;;
  -h|--help|help|"") echo "rustup (termrl offline stand-in): default, toolchain install|list, component add|list, target add|list, show, which, run, update, set" ;;
  default)
    if [ $# -eq 0 ]; then echo "stable-$__target (default)"; else __need_toolchain "$1"; echo "info: default toolchain set to 'stable-$__target' (the host's rustc $__hostv)"; fi ;;
  toolchain|update|upgrade|install)
    if [ "$__cmd" = toolchain ]; then __sub=${1-}; [ $# -gt 0 ] && shift; else __sub=install; fi
    case "$__sub" in
      install|add|update)
        __comps=; __tgts=
        while [ $# -gt 0 ]; do
          case "$1" in
            -c|--component|--components) __comps="$__comps $(__split "${2-}")"; [ $# -gt 1 ] && shift ;;
            -t|--target|--targets) __tgts="$__tgts $(__split "${2-}")"; [ $# -gt 1 ] && shift ;;
            --component=*|--components=*) __comps="$__comps $(__split "${1#*=}")" ;;
            --target=*|--targets=*) __tgts="$__tgts $(__split "${1#*=}")" ;;
            --profile|--toolchain) [ $# -gt 1 ] && shift ;;
            -*) ;;
            *) __need_toolchain "$1" ;;
          esac
          shift
        done
        for __c in $__comps; do __component "$__c"; done
        for __t in $__tgts; do __target_ok "$__t"; done
        echo "stable-$__target unchanged - rustc $__hostv (the host's)" ;;
      list) echo "stable-$__target (default)" ;;
      uninstall|remove) ;;
      *) __fail "'rustup toolchain $__sub' is not something the offline stand-in does" ;;
    esac ;;
  component|target)
    __sub=${1-}; [ $# -gt 0 ] && shift
    case "$__sub" in
      add)
        __names=
        while [ $# -gt 0 ]; do
          case "$1" in
            --toolchain) __need_toolchain "${2-}"; [ $# -gt 1 ] && shift ;;
            --target) [ "$__cmd" = component ] && __target_ok "${2-}"; [ $# -gt 1 ] && shift ;;
            --toolchain=*) __need_toolchain "${1#*=}" ;;
            -*) ;;
            *) __names="$__names $1" ;;
          esac
          shift
        done
        for __n in $__names; do if [ "$__cmd" = component ]; then __component "$__n"; else __target_ok "$__n"; fi; done ;;
      list)
        if [ "$__cmd" = component ]; then echo "rustc-$__target (installed)"; echo "cargo-$__target (installed)"; echo "rust-std-$__target (installed)"
        else echo "$__target (installed)"; fi ;;
      remove) ;;
      *) __fail "'rustup $__cmd $__sub' is not something the offline stand-in does" ;;
    esac ;;
  show)
    echo "Default host: $__target"; echo "rustup home:  ${RUSTUP_HOME:-$HOME/.rustup}"; echo
    echo "stable-$__target (default)"; echo "rustc $__hostv (the host's)" ;;
  which)
    [ -e @BIN@/"${1-}" ] || __fail "'${1-}' is not a tool of the host's Rust toolchain"
    echo @BIN@/"$1" ;;
  run)
    __need_toolchain "${1-}"; shift; exec "$@" ;;
  override)
    case "${1-}" in set) __need_toolchain "${2-}" ;; unset|list) ;; *) __fail "'rustup override ${1-}' is not something the offline stand-in does" ;; esac ;;
  set|completions) ;;
  self)
    case "${1-}" in update) echo "info: rustup is up to date (offline stand-in)" ;; *) __fail "'rustup self ${1-}' is not something the offline stand-in does" ;; esac ;;
  *) __fail "'rustup $__cmd' is not something the offline stand-in does" ;;
esac
'''
_RUSTUP_INIT = r'''#!/bin/sh
# rustup-init: termrl's offline stand-in (there is no network): links the host's Rust toolchain
# (rustc @HOSTV@, cargo) into $CARGO_HOME/bin, writes $CARGO_HOME/env and a rustup that knows it.
@HELPERS@
__main() {
  __yes=0; __modify=1; __toolchain=stable; __comps=; __tgts=
  while [ $# -gt 0 ]; do
    case "$1" in
      -y|--yes) __yes=1 ;;
      -q|--quiet|-v|--verbose|--no-update-default-toolchain) ;;
      --no-modify-path) __modify=0 ;;
      --default-toolchain) __toolchain=${2-}; [ $# -gt 1 ] && shift ;;
      --default-toolchain=*) __toolchain=${1#*=} ;;
      -c|--component|--components) __comps="$__comps $(echo "${2-}" | tr ',' ' ')"; [ $# -gt 1 ] && shift ;;
      --component=*|--components=*) __comps="$__comps $(echo "${1#*=}" | tr ',' ' ')" ;;
      -t|--target|--targets) __tgts="$__tgts $(echo "${2-}" | tr ',' ' ')"; [ $# -gt 1 ] && shift ;;
      --target=*|--targets=*) __tgts="$__tgts $(echo "${1#*=}" | tr ',' ' ')" ;;
      --profile|--default-host) [ $# -gt 1 ] && shift ;;
      --profile=*|--default-host=*) ;;
      -h|--help) echo "rustup-init (termrl offline stand-in): -y [--default-toolchain stable|@HOSTV@|none] [--profile P] [-c C] [-t T] [--no-modify-path]"; exit 0 ;;
      -V|--version) echo "rustup-init 1.27.1 (termrl offline stand-in: the host's rustc @HOSTV@)"; exit 0 ;;
      *) __fail "rustup-init: the option '$1' is not something the offline stand-in does" ;;
    esac
    shift
  done
  if [ "$__yes" != 1 ] && [ ! -t 0 ]; then
    __fail "rustup-init: Unable to run interactively. Run with -y to accept defaults"
  fi
  __cargo_home=${CARGO_HOME:-$HOME/.cargo}
  __rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
  mkdir -p "$__cargo_home/bin" "$__rustup_home" || __fail "cannot make $__cargo_home/bin"
@LINKS@
  cat > "$__cargo_home/bin/rustup" <<'TERMRL_RUSTUP_EOF'
@RUSTUP@TERMRL_RUSTUP_EOF
  chmod 755 "$__cargo_home/bin/rustup"
  cat > "$__cargo_home/env" <<TERMRL_ENV_EOF
#!/bin/sh
# rustup shell setup (termrl offline stand-in): the host's Rust toolchain, linked in $__cargo_home/bin
case ":\${PATH}:" in
    *:"$__cargo_home/bin":*) ;;
    *) export PATH="$__cargo_home/bin:\$PATH" ;;
esac
TERMRL_ENV_EOF
  case "$__toolchain" in none) ;; *) "$__cargo_home/bin/rustup" default "$__toolchain" >/dev/null || exit 1 ;; esac
  for __c in $__comps; do "$__cargo_home/bin/rustup" component add "$__c" || exit 1; done
  for __t in $__tgts; do "$__cargo_home/bin/rustup" target add "$__t" || exit 1; done
  if [ "$__modify" = 1 ] && [ -n "${HOME-}" ]; then
    for __rc in "$HOME/.profile" "$HOME/.bashrc"; do
      if [ "$__rc" = "$HOME/.profile" ] || [ -f "$__rc" ]; then
        grep -qs "$__cargo_home/env" "$__rc" || printf '. "%s"\n' "$__cargo_home/env" >> "$__rc"
      fi
    done
  fi
  echo "termrl offline stand-in: rustup: the host's rustc @HOSTV@ and cargo are in $__cargo_home/bin (. \"$__cargo_home/env\" puts them on PATH)" >&2
}
__main "$@"
'''


def _rustup_init(row, match, url):
    q = shlex.quote
    cargo, rustc = _host("/usr/bin/cargo"), _host("/usr/bin/rustc")
    missing = [path for path in (cargo, rustc) if not os.access(path, os.X_OK)]
    if missing:
        package = "cargo" if cargo in missing else "rustc"
        return _failing_script(_absent(row, f"the host has no {missing[0]}", package)), f"refused: the host has no {missing[0]}"
    said = _output([rustc, "-vV"]) or ""
    release = re.search(r"^release:\s*(\S+)", said, re.M)
    target = re.search(r"^host:\s*(\S+)", said, re.M)
    hostv = release.group(1) if release and re.fullmatch(r"[\w.+-]+", release.group(1)) else "unknown"
    triple = target.group(1) if target and re.fullmatch(r"[\w.+-]+", target.group(1)) else "x86_64-unknown-linux-gnu"
    components = []
    for name, path, package in _RUST_COMPONENTS:
        path = _host(path)
        line = (f"the component '{name}' is not on the host (no {path}), and there is no network to fetch it: "
                f"install the Debian package {package} on the host")
        components.append(f"    {name}) [ -e {q(path)} ] || __fail {q(line)} ;;")
    rustup = (_RUSTUP.replace("@HELPERS@", "\n".join(_shell_helpers("rustup"))).replace("@COMPONENTS@", "\n".join(components))
              .replace("@RUSTLIB@", q(_host("/usr/lib/rustlib"))).replace("@BIN@", q(_host("/usr/bin"))))
    links = [f'  ln -sfn {q(_host("/usr/bin/" + tool))} "$__cargo_home/bin/{tool}" || __fail "cannot link {tool} into $__cargo_home/bin"'
             for tool in _RUST_TOOLS if os.access(_host("/usr/bin/" + tool), os.X_OK)]
    script = (_RUSTUP_INIT.replace("@HELPERS@", "\n".join(_shell_helpers("rustup"))).replace("@LINKS@", "\n".join(links))
              .replace("@RUSTUP@", rustup))
    script = script.replace("@HOSTV@", hostv).replace("@TARGET@", triple)
    return script.encode(), f"a rustup-init linking the host's rustc {hostv} and cargo into $CARGO_HOME/bin"


# nvm --------------------------------------------------------------------------------------------------
_NVM_SH = r'''# nvm.sh: termrl's offline stand-in for nvm (there is no network). Its one node is the host's
# (@HOSTV@, in @HOSTBIN@), linked into $NVM_DIR/versions/node/@HOSTV@/bin by `nvm install`;
# a version the host does not have fails naming it. Source it as nvm's own: . "$NVM_DIR/nvm.sh"
@SPLIT@export NVM_DIR
__termrl_nvm_hostv=@HOSTV@
__termrl_nvm_hostbin=@HOSTBIN@
__termrl_nvm_log=@LOG@
__termrl_nvm_say() { echo "termrl offline stand-in: nvm: $*" >&2; }
__termrl_nvm_refuse() {
  __termrl_nvm_say "$*"
  printf 'nvm: refused: %s\n' "$*" >> "$__termrl_nvm_log" 2>/dev/null
  return 3
}
__termrl_nvm_bin() { printf '%s' "$NVM_DIR/versions/node/$__termrl_nvm_hostv/bin"; }
__termrl_nvm_plain() {
  local v major
  v=${1#v}
  major=${__termrl_nvm_hostv#v}; major=${major%%.*}
  case "$1" in
    node|stable|current|latest|"lts/*"|--lts|"$__termrl_nvm_hostv") return 0 ;;
    lts/argon) v=4 ;; lts/boron) v=6 ;; lts/carbon) v=8 ;; lts/dubnium) v=10 ;; lts/erbium) v=12 ;;
    lts/fermium) v=14 ;; lts/gallium) v=16 ;; lts/hydrogen) v=18 ;; lts/iron) v=20 ;; lts/jod) v=22 ;;
    lts/krypton) v=24 ;;
  esac
  case "$v" in "$major"|"$major".*) return 0 ;; esac
  return 1
}
__termrl_nvm_matches() {
  case "$1" in
    */*|.*|"") __termrl_nvm_plain "$1" ;;
    *) if [ -f "$NVM_DIR/alias/$1" ]; then __termrl_nvm_plain "$(cat "$NVM_DIR/alias/$1")"; else __termrl_nvm_plain "$1"; fi ;;
  esac
}
__termrl_nvm_need() {
  __termrl_nvm_matches "$1" && return 0
  __termrl_nvm_refuse "nodejs $1 is not here (the host has node $__termrl_nvm_hostv), and there is no network to fetch it: install nodejs $1 on the host"
}
__termrl_nvm_link() {
  local bin tool
  bin=$(__termrl_nvm_bin)
  mkdir -p "$bin" "$NVM_DIR/alias" || return 1
  for tool in node npm npx corepack; do
    if [ -e "$__termrl_nvm_hostbin/$tool" ]; then ln -sfn "$__termrl_nvm_hostbin/$tool" "$bin/$tool" || return 1; fi
  done
  [ -f "$NVM_DIR/alias/default" ] || printf '%s\n' "$__termrl_nvm_hostv" > "$NVM_DIR/alias/default"
  return 0
}
__termrl_nvm_use() {
  local bin
  bin=$(__termrl_nvm_bin)
  [ -x "$bin/node" ] || __termrl_nvm_link || return 1
  case ":$PATH:" in *":$bin:"*) ;; *) PATH="$bin:$PATH"; export PATH ;; esac
  NVM_BIN=$bin
  export NVM_BIN
}
__termrl_nvm_version_arg() {
  local a version=
  for a in "$@"; do
    case "$a" in
      --lts) version='lts/*' ;;
      --lts=*) version="lts/${a#--lts=}" ;;
      -*) ;;
      *) [ -n "$version" ] || version=$a ;;
    esac
  done
  if [ -z "$version" ] && [ -f .nvmrc ]; then version=$(head -n 1 .nvmrc | tr -d ' \r'); fi
  printf '%s' "$version"
}
nvm() {
  local cmd version bin silent=
  if [ $# -eq 0 ]; then
    echo "nvm (termrl offline stand-in): install, use, alias, unalias, current, which, ls, version, run, exec, deactivate, unload, --version"
    return 0
  fi
  cmd=$1
  shift
  bin=$(__termrl_nvm_bin)
  case "$cmd" in
    --version|-v) echo @NVMV@ ;;
    install|i)
      version=$(__termrl_nvm_version_arg "$@")
      [ -n "$version" ] || { __termrl_nvm_refuse "nvm install: no version named and no .nvmrc here"; return; }
      __termrl_nvm_need "$version" || return
      __termrl_nvm_link && __termrl_nvm_use || return 1
      printf 'substituted: nvm: nvm install %s: the host node %s\n' "$version" "$__termrl_nvm_hostv" >> "$__termrl_nvm_log" 2>/dev/null
      echo "Now using node $__termrl_nvm_hostv (the host's: termrl offline stand-in for nvm install $version)" ;;
    use)
      for version in "$@"; do [ "$version" = --silent ] && silent=1; done
      version=$(__termrl_nvm_version_arg "$@")
      [ -n "$version" ] || { __termrl_nvm_refuse "nvm use: no version named and no .nvmrc here"; return; }
      if [ "$version" = system ]; then nvm deactivate >/dev/null; return 0; fi
      __termrl_nvm_need "$version" || return
      __termrl_nvm_use || return 1
      [ -n "$silent" ] || echo "Now using node $__termrl_nvm_hostv (the host's)" ;;
    alias)
      if [ $# -lt 2 ]; then
        for version in "$NVM_DIR"/alias/*; do
          [ -f "$version" ] && echo "${version##*/} -> $(cat "$version") (-> $__termrl_nvm_hostv)"
        done
        return 0
      fi
      __termrl_nvm_need "$2" || return
      mkdir -p "$NVM_DIR/alias" && printf '%s\n' "$2" > "$NVM_DIR/alias/$1" || return 1
      echo "$1 -> $2 (-> $__termrl_nvm_hostv)" ;;
    unalias) rm -f "$NVM_DIR/alias/${1-}" ;;
    current)
      case ":$PATH:" in *":$bin:"*) echo "$__termrl_nvm_hostv" ;; *) echo system ;; esac ;;
    which)
      version=${1:-current}
      if [ "$version" = current ]; then
        case ":$PATH:" in *":$bin:"*) ;; *) command -v node; return ;; esac
      elif [ "$version" = system ]; then
        echo "$__termrl_nvm_hostbin/node"; return 0
      else
        __termrl_nvm_need "$version" || return
        [ -x "$bin/node" ] || __termrl_nvm_link || return 1
      fi
      echo "$bin/node" ;;
    ls|list)
      [ -x "$bin/node" ] && echo "->     $__termrl_nvm_hostv"
      [ -f "$NVM_DIR/alias/default" ] && echo "default -> $(cat "$NVM_DIR/alias/default") (-> $__termrl_nvm_hostv)"
      return 0 ;;
    version)
      if __termrl_nvm_matches "${1:-current}"; then echo "$__termrl_nvm_hostv"; else echo N/A; return 3; fi ;;
    run)
      version=${1-}; [ $# -gt 0 ] && shift
      __termrl_nvm_need "$version" || return
      [ -x "$bin/node" ] || __termrl_nvm_link || return 1
      "$bin/node" "$@" ;;
    exec)
      version=${1-}; [ $# -gt 0 ] && shift
      __termrl_nvm_need "$version" || return
      [ -x "$bin/node" ] || __termrl_nvm_link || return 1
      PATH="$bin:$PATH" "$@" ;;
    deactivate)
      PATH=$(printf '%s' ":$PATH:" | sed -e "s#:$bin:#:#g" -e 's#^:##' -e 's#:$##')
      export PATH
      unset NVM_BIN ;;
    unload) unset -f nvm ;;
    cache) return 0 ;;
    *) __termrl_nvm_refuse "'nvm $cmd' is not something the offline stand-in does (there is no network)" ;;
  esac
}
if [ -f "$NVM_DIR/alias/default" ] && __termrl_nvm_matches default; then __termrl_nvm_use >/dev/null 2>&1 || true; fi
'''
_NVM_INSTALL = r'''#!/usr/bin/env bash
# nvm's install.sh: termrl's offline stand-in (there is no network): writes $NVM_DIR/nvm.sh, whose
# nvm installs and uses the host's node (@HOSTV@) and fails naming any other version.
__termrl_main() {
  if [ -z "${NVM_DIR-}" ]; then
    if [ -z "${XDG_CONFIG_HOME-}" ]; then NVM_DIR="$HOME/.nvm"; else NVM_DIR="$XDG_CONFIG_HOME/nvm"; fi
  fi
  mkdir -p "$NVM_DIR" || { echo "termrl offline stand-in: nvm: cannot make $NVM_DIR" >&2; exit 1; }
  cat > "$NVM_DIR/nvm.sh" <<'TERMRL_NVM_EOF'
@NVM_HEAD@TERMRL_NVM_EOF
  printf ': "${NVM_DIR:=%s}"\n' "$NVM_DIR" >> "$NVM_DIR/nvm.sh"
  cat >> "$NVM_DIR/nvm.sh" <<'TERMRL_NVM_EOF'
@NVM_BODY@TERMRL_NVM_EOF
  printf '#!/usr/bin/env bash\n. "%s/nvm.sh"\nexec "$@"\n' "$NVM_DIR" > "$NVM_DIR/nvm-exec"
  chmod 755 "$NVM_DIR/nvm-exec"
  printf '# bash_completion: nvm (termrl offline stand-in) completes nothing\n' > "$NVM_DIR/bash_completion"
  for __rc in "$HOME/.bashrc" "$HOME/.bash_profile" "$HOME/.profile"; do
    if [ -f "$__rc" ]; then
      grep -qs 'NVM_DIR/nvm.sh' "$__rc" || printf '\nexport NVM_DIR="%s"\n[ -s "$NVM_DIR/nvm.sh" ] && \\. "$NVM_DIR/nvm.sh"  # This loads nvm\n' "$NVM_DIR" >> "$__rc"
      break
    fi
  done
  echo "=> nvm @NVMV@ (termrl offline stand-in) is in $NVM_DIR: its node is the host's @HOSTV@"
}
__termrl_main "$@"
'''


def _node_version():
    """(the host's node path, its version 'v20.1.0'), version None when node is absent or does not run."""
    node = _host("/usr/bin/node")
    if not os.access(node, os.X_OK):
        return node, None
    said = _output([node, "--version"]) or ""
    return node, (said if re.match(r"^v\d+\.\d+\.\d+", said) else None)


def _nvm_install(row, match, url):
    q = shlex.quote
    node, hostv = _node_version()
    if hostv is None:
        return _failing_script(_absent(row, f"the host has no {node} that runs")), f"refused: the host has no {node}"
    version = match.group(1).lstrip("v")
    nvm_sh = (_NVM_SH.replace("@HOSTV@", q(hostv)).replace("@HOSTBIN@", q(os.path.dirname(node)))
              .replace("@LOG@", q(STANDIN_LOG)).replace("@NVMV@", q(version)))
    head, _, body = nvm_sh.partition("@SPLIT@")
    script = _NVM_INSTALL.replace("@NVM_HEAD@", head).replace("@NVM_BODY@", body).replace("@HOSTV@", hostv).replace("@NVMV@", version)
    return script.encode(), f"an nvm whose node is the host's {hostv}"


# NodeSource -------------------------------------------------------------------------------------------
def _nodesource(row, match, url):
    node, hostv = _node_version()
    asked = match.group(1)
    if hostv is None:
        return _failing_script(_absent(row, f"the host has no {node} that runs (nodejs {asked} asked)")), f"refused: the host has no {node}"
    major = hostv[1:].split(".")[0]
    if asked.isdigit() and asked != major:
        line = _absent(row, f"nodejs {asked} (the host has {major}: node {hostv}) is not here", f"nodejs {asked}")
        return _failing_script(line), f"refused: nodejs {asked} asked, the host has {hostv}"
    payload = _script([
        "#!/bin/sh",
        f"# NodeSource's setup_{asked}.x: termrl's offline stand-in (there is no network): the host's node {hostv}",
        "# is the nodejs that apt-get install nodejs meets.",
        f"echo {shlex.quote(f'termrl offline stand-in: nodesource: the host has nodejs {major} (node {hostv}): no repository to add')} >&2",
    ])
    return payload, f"nodejs {asked} asked, the host's node {hostv}"


# apt packages of a python3.X (deadsnakes' and Debian's) ------------------------------------------------
def _apt_python(row, match, name):
    """python3.X, python3.X-venv, -dev, -distutils: the host's /usr/bin/python3.X and what it has."""
    minor = match.group(1)
    if minor is None:  # python3-venv, python3-dev: for the host's python3
        python3 = _host("/usr/bin/python3")
        said = _output([python3, "-I", "-c", "import sys; print('%d' % sys.version_info[1])"]) if os.access(python3, os.X_OK) else None
        if said is None:
            return False, _absent(row, f"the host has no {python3} that runs ({name} asked)", "python3")
        minor = said
    python = _host(f"/usr/bin/python3.{minor}")
    if not os.access(python, os.X_OK):
        return False, _absent(row, f"the host has no {python}", name)
    kind = row.name.partition("-")[2]
    if kind == "venv":
        if _output([python, "-I", "-c", "import venv, ensurepip"]) is None:
            return False, _absent(row, f"the host's python3.{minor} has no venv or ensurepip", name)
        return True, f"{name} (the host's python3.{minor} has venv and ensurepip)"
    if kind == "dev":
        header = _host(f"/usr/include/python3.{minor}/Python.h")
        if not os.path.isfile(header):
            return False, _absent(row, f"the host has no {header}", name)
        return True, f"{name} (the host has {header})"
    if kind == "distutils":
        said = _output([python, "-I", "-c", "import importlib.util as u; print(u.find_spec('distutils') is not None or u.find_spec('setuptools') is not None)"])
        if said != "True":
            return False, _absent(row, f"the host's python3.{minor} has neither distutils nor setuptools",
                                  name if int(minor) < 12 else "python3-setuptools")
        return True, f"{name} (the host's python3.{minor} has distutils or setuptools)"
    return True, f"{name} (the host's {python})"


def _apt_repository(row, match, name):
    return True, f"add-apt-repository {name}: {row.does}"


def _substitutions():
    """The table. A row's pattern matches a whole URL (curl/wget), repository (add-apt-repository) or package name (apt-get)."""
    return (
        Substitution("uv-installer", "curl/wget", UV_INSTALLER.pattern.strip("^$"), "none: the uv stand-in is on PATH", "-",
                     "a script writing ~/.local/bin/env that keeps the stand-ins on PATH", _uv_installer),
        Substitution("get-pip", "curl/wget", r"https?://bootstrap\.pypa\.io/(?:pip/[0-9.]+/)?get-pip\.py",
                     "the python running it imports pip", "python3-pip",
                     "a get-pip.py that succeeds when the python running it has pip", _get_pip),
        Substitution("go-tarball", "curl/wget",
                     r"https?://(?:go\.dev/dl|golang\.org/dl|dl\.google\.com/go|storage\.googleapis\.com/golang)/"
                     r"(go\d+(?:\.\d+)*(?:rc\d+|beta\d+)?)\.linux-[a-z0-9]+\.tar\.gz",
                     "/usr/lib/go/bin/go", "golang-go",
                     "a gzip'd tar of go/: go/bin/* linking the host's /usr/lib/go/bin/*, the rest of its GOROOT linked, "
                     "go/VERSION the host's", _go_tarball),
        Substitution("rustup", "curl/wget",
                     r"https://(?:sh\.rustup\.rs/?|static\.rust-lang\.org/rustup/(?:[^/]+/)*rustup-init(?:\.sh)?)",
                     "/usr/bin/cargo and /usr/bin/rustc", "cargo",
                     "a rustup-init: -y links cargo, rustc into $CARGO_HOME/bin (default $HOME/.cargo), writes "
                     "$CARGO_HOME/env and a rustup for the host's toolchain", _rustup_init),
        Substitution("nvm", "curl/wget", r"https://raw\.githubusercontent\.com/(?:nvm-sh|creationix)/nvm/(v?[\w.]+)/install\.sh",
                     "/usr/bin/node (its major for nvm install N)", "nodejs",
                     "an install.sh writing $NVM_DIR/nvm.sh (default $HOME/.nvm): nvm install/use/alias of the host's "
                     "node major link $NVM_DIR/versions/node/vX.Y.Z/bin", _nvm_install),
        Substitution("nodesource", "curl/wget", r"https?://deb\.nodesource\.com/setup_(\d+|lts|current)\.x",
                     "/usr/bin/node of major N", "nodejs",
                     "a setup script that succeeds when the host's node major is the one asked", _nodesource),
        Substitution("deadsnakes-ppa", "add-apt-repository", r"ppa:deadsnakes/ppa",
                     "none: its packages are the python3.X rows", "-", "nothing to add: apt-get meets its python3.X packages from the host",
                     _apt_repository),
        Substitution("ubuntu-component", "add-apt-repository", r"(?:main|universe|multiverse|restricted)",
                     "none: apt-get checks each package", "-", "nothing to add: apt-get checks each package on the host",
                     _apt_repository),
        Substitution("python3.X", "apt-get", r"python3\.(\d+)(?:-minimal)?", "/usr/bin/python3.X", "python3.X",
                     "nothing fetched: the host's interpreter", _apt_python),
        Substitution("python3.X-venv", "apt-get", r"python3(?:\.(\d+))?-venv", "python3.X imports venv and ensurepip",
                     "python3.X-venv", "nothing fetched: the host's venv", _apt_python),
        Substitution("python3.X-dev", "apt-get", r"python3(?:\.(\d+))?-dev", "/usr/include/python3.X/Python.h",
                     "python3.X-dev", "nothing fetched: the host's headers", _apt_python),
        Substitution("python3.X-distutils", "apt-get", r"python3(?:\.(\d+))?-distutils",
                     "python3.X imports distutils or setuptools", "python3.X-distutils (python3-setuptools from 3.12)",
                     "nothing fetched: the host's distutils or setuptools", _apt_python),
    )


SUBSTITUTIONS = _substitutions()
"""The substitutions' one table (documented in pytest_termrl/standins/__init__.py)."""


def _row(tool, word):
    """(row, match) of the first row of this tool whose pattern matches the whole word; (None, None) if none."""
    for row in SUBSTITUTIONS:
        if row.tool == tool:
            match = re.fullmatch(row.pattern, word)
            if match is not None:
                return row, match
    return None, None


def download_row(url):
    """The curl/wget row that meets a download of ``url`` (an ``ADD`` of it, when a Dockerfile is built); None when none does."""
    return _row("curl/wget", url)[0]


# curl and wget ----------------------------------------------------------------------------------------
_CURL_VALUE_SHORT = set("oHduAexXmTwKrbcEFYyzCDUQtP")
_CURL_VALUE_LONG = {
    "--output", "--output-dir", "--url", "--proto", "--proto-redir", "--retry", "--retry-delay", "--retry-max-time",
    "--connect-timeout", "--max-time", "--header", "--user-agent", "--data", "--data-raw", "--data-binary",
    "--data-urlencode", "--user", "--referer", "--proxy", "--request", "--upload-file", "--write-out", "--config",
    "--range", "--cookie", "--cookie-jar", "--cert", "--cacert", "--key", "--form", "--dump-header", "--limit-rate",
    "--max-redirs", "--resolve", "--interface", "--ciphers", "--tls-max", "--continue-at", "--speed-limit",
    "--speed-time", "--max-filesize", "--expect100-timeout", "--keepalive-time", "--dns-servers", "--oauth2-bearer",
}
_WGET_VALUE_SHORT = set("OoaPtTUeiBwQlDARIXY")
_WGET_VALUE_LONG = {
    "--output-document", "--directory-prefix", "--tries", "--timeout", "--header", "--user-agent", "--output-file",
    "--append-output", "--user", "--password", "--wait", "--quota", "--level", "--accept", "--reject", "--execute",
    "--input-file", "--base", "--post-data", "--post-file", "--method", "--body-data", "--ca-certificate",
    "--certificate", "--private-key", "--limit-rate", "--read-timeout", "--connect-timeout", "--dns-timeout",
    "--retry-on-http-error", "--progress", "--referer", "--load-cookies", "--save-cookies",
}
STDOUT = "-"


def _fetch_words(tool, words):
    """(urls, destination, create_dirs): destination is STDOUT, a path, or ('remote', dir) for the URL's own name."""
    curl = tool == "curl"
    value_short, value_long = (_CURL_VALUE_SHORT, _CURL_VALUE_LONG) if curl else (_WGET_VALUE_SHORT, _WGET_VALUE_LONG)
    urls, output, remote, folder, create, i = [], None, not curl, "", False, 0
    while i < len(words):
        word = words[i]
        following = words[i + 1] if i + 1 < len(words) else ""
        if word.startswith("--"):
            name, has_value, value = word.partition("=") if not curl else (word, "", "")
            takes = name in value_long
            if takes and not has_value:
                value, i = following, i + 1
            if name in ("--output", "--output-document"):
                output = value
            elif name in ("--output-dir", "--directory-prefix"):
                folder = value
            elif name == "--url":
                urls.append(value)
            elif name in ("--remote-name", "--remote-name-all"):
                remote = True
            elif name == "--create-dirs":
                create = True
        elif word.startswith("-") and len(word) > 1:
            if not curl and word[1] == "n" and len(word) == 3:  # wget's -nv, -nc, -nd, -nH, -np
                i += 1
                continue
            for at in range(1, len(word)):
                letter = word[at]
                if letter in value_short:
                    value = word[at + 1:]
                    if not value:
                        value, i = following, i + 1
                    if letter == "O" and not curl:
                        output = value
                    elif letter == "o" and curl:
                        output = value
                    elif letter == "P" and not curl:
                        folder = value
                    break
                if letter == "O" and curl:
                    remote = True
        elif re.match(r"^https?://", word):
            urls.append(word)
        i += 1
    if output is not None:
        destination = output if output == STDOUT or os.path.isabs(output) or not folder else os.path.join(folder, output)
    elif remote:
        destination = ("remote", folder)
    else:
        destination = STDOUT
    return urls, destination, create


def _fetch(tool, words):
    """curl and wget: a URL of the table's rows is met from the host; any other runs the real tool (and finds no network)."""
    urls, destination, create = _fetch_words(tool, words)
    found = [(url,) + _row("curl/wget", url) for url in urls]
    found = [(url, row, match) for url, row, match in found if row is not None]
    if len(urls) != 1 or not found:
        real = shutil.which(tool, path=REAL_PATH)
        if real is None:
            return _fail(tool, f"{tool} is not installed here")
        return subprocess.call([real, *words])
    url, row, match = found[0]
    payload, note = row.apply(row, match, url)
    if payload is None:
        return _fail(tool, note)
    if isinstance(destination, tuple):
        name = urllib.parse.urlsplit(url).path.rstrip("/").rpartition("/")[2]
        if not name and tool == "curl":
            return _fail(tool, f"{row.name}: {url} names no file to write (-O)")
        destination = os.path.join(destination[1], name or "index.html")
    if destination == STDOUT:
        try:
            sys.stdout.flush()
            sys.stdout.buffer.write(payload)
            sys.stdout.buffer.flush()
        except BrokenPipeError:  # the reader (tar, sh) stopped: say so, as curl does, and leave no traceback at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return _fail(tool, f"{row.name}: the command reading {url} stopped before the end")
    else:
        try:
            if create and os.path.dirname(destination):
                os.makedirs(os.path.dirname(destination), exist_ok=True)
            with open(destination, "wb") as handle:
                handle.write(payload)
        except OSError as exc:
            return _fail(tool, f"{row.name}: cannot write {destination} ({exc.strerror})")
    where = "" if destination == STDOUT else f" -> {destination}"
    if note.startswith("refused: "):
        _record(f"{tool}: refused: {row.name}: {url}: {note[len('refused: '):]} (the script it gets fails saying so)")
    else:
        _record(f"substituted: {row.name}: {tool} {url}{where}: {note}")
    return 0


def curl(words):
    return _fetch("curl", words)


def wget(words):
    return _fetch("wget", words)


# add-apt-repository -----------------------------------------------------------------------------------
def add_apt_repository(words):
    """add-apt-repository: the repositories the table knows are accepted (their packages are checked by apt-get install)."""
    repositories, i = [], 0
    takes_value = {"-k", "--keyserver", "-S", "--sourceslist", "-U", "--uri", "-C", "--component", "-p", "--pocket"}
    while i < len(words):
        word = words[i]
        if word in ("-P", "--ppa"):
            repositories.append("ppa:" + words[i + 1] if i + 1 < len(words) else "")
            i += 2
            continue
        if word.startswith("--ppa="):
            repositories.append("ppa:" + word.split("=", 1)[1])
        elif word in takes_value:
            i += 1
        elif not word.startswith("-"):
            repositories.append(word)
        i += 1
    if not repositories:
        return _fail("add-apt-repository", "no repository named")
    done = []
    for repository in repositories:
        row, match = _row("add-apt-repository", repository.strip())
        if row is None:
            known = ", ".join(re.sub(r"\(\?:|\)", "", r.pattern).replace("|", ", ") for r in SUBSTITUTIONS if r.tool == "add-apt-repository")
            return _fail("add-apt-repository", f"the repository {repository!r} cannot be reached (there is no network), and the "
                                               f"offline stand-in knows only {known}: install what you need from it on the host")
        done.append((row, repository, row.apply(row, match, repository)[1]))
    for row, repository, note in done:
        _record(f"substituted: {row.name}: {note}")
    _say("add-apt-repository: " + ", ".join(repository for _, repository, _ in done) + ": nothing to add offline, "
         "apt-get install meets their packages from the host")
    return 0


def _configure(args):
    """Read the leading ``--sandbox=agent``, ``--shims=DIR``, ``--log=FILE`` (the agent's shims pass them); return the rest."""
    global IN_AGENT_SANDBOX, SHIM_DIR, STANDIN_LOG
    while args and args[0].startswith("--") and "=" in args[0]:
        key, value = args[0][2:].split("=", 1)
        if key == "sandbox":
            IN_AGENT_SANDBOX = value == "agent"
        elif key == "shims":
            SHIM_DIR = value
        elif key == "log":
            STANDIN_LOG = value
        args = args[1:]
    return args


def main(argv):
    args = _configure(argv[1:])
    tool, words = os.path.basename(args[0]), args[1:]
    if tool in ("pip", "pip3"):
        return pip(tool, words)
    if tool == "uv":
        return uv(words)
    if tool == "uvx":
        return uvx(words)
    if tool in ("apt-get", "apt"):
        return apt(tool, words)
    if tool == "curl":
        return curl(words)
    if tool == "wget":
        return wget(words)
    if tool == "add-apt-repository":
        return add_apt_repository(words)
    return _fail(tool, "no stand-in by that name")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
