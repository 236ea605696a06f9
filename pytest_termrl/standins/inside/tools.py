"""Offline stand-ins for pip, pip3, uv, uvx, apt-get and uv's curl installer inside the verifier sandbox.

Executed as ``python -I tools.py TOOL ARGS...`` by the shims the script runner puts
first on the grader's PATH (the harness's own Python, standard library and ``packaging``
only). There is no network, so each install a grader script asks for is checked against
what is already here: it succeeds, printing one line, when every package asked for is
present with its version satisfied, and fails with a one-line reason naming the missing
package otherwise. The harness's pytest stands in for any ``pytest`` pin (it is the
grader's trusted pytest). Tools are run when asked: ``uvx pytest ...`` and ``uv run pytest
...`` run the trusted pytest, ``uv run python`` the trusted Python. ``uv venv DIR`` makes a
folder whose ``bin/activate`` keeps the stand-ins on PATH. ``curl`` of uv's installer
script prints a script that installs nothing and writes ``~/.local/bin/env``; any other
curl runs the real one (and finds no network). Every stand-in appends what it did to
``STANDIN_LOG`` so the runner can sign the list with the verdict.

The agent's sandbox runs the same stand-ins (``--sandbox=agent``, from the shims of
pytest_termrl/standins/shims.py) with the sandbox's own python3, which may lack
``packaging``: a small standard-library reading of the common specifiers (==, !=, <=, >=,
<, >, ~=, ===, ``==1.2.*``) on dotted versions takes its place. There "present" is what
that python3 can import the metadata of, and for apt what the sandbox has (a command on
PATH, ``/usr/share/doc/PKG``, or dpkg's status); there is no trusted pytest, so ``uvx
pytest`` runs the sandbox's pytest or fails naming it.
"""

import os
import re
import shutil
import subprocess
import sys
from importlib import metadata

SHIM_DIR = os.path.dirname(os.environ.get("TERMRL_STANDIN_LOG", "/tmp/termrl-grader-bin/standins.log"))
STANDIN_LOG = os.environ.get("TERMRL_STANDIN_LOG", "/tmp/termrl-grader-bin/standins.log")
TOOLS = ("pip", "pip3", "uv", "uvx", "apt-get", "apt", "curl")
"""The commands stood in for, in the agent's sandbox and the verifier's alike (curl for uv's installer script)."""
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
APT_ALWAYS = {"ca-certificates", "locales", "tzdata", "apt-utils", "lsb-release", "gnupg", "tmux", "asciinema"}
UV_INSTALLER = re.compile(r"^https?://(?:astral\.sh/uv/|github\.com/astral-sh/uv/releases/)\S*install\.sh$")
IN_AGENT_SANDBOX = False
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
    if name in ("python", "python3"):
        command = [sys.executable, *argv[1:]]
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
    args = [w for w in words if not w.startswith("-")]
    if not args:
        return _fail(tool, "no command")
    if args[0] in ("update", "upgrade", "clean", "autoclean", "autoremove", "dist-upgrade"):
        _record(f"{tool} {args[0]}: nothing done")
        return 0
    if args[0] != "install":
        return _fail(tool, f"'{tool} {args[0]}' is not something the offline stand-in does")
    present = []
    for package in args[1:]:
        name = package.split("=")[0].split(":")[0]
        if name in APT_ALWAYS:
            continue
        command = APT_COMMANDS.get(name, name)
        if shutil.which(command, path=REAL_PATH) is None and not (IN_AGENT_SANDBOX and _apt_installed(name, command)):
            return _fail(tool, f"the package {name!r} is not installed here (no {command!r} on PATH) and there is no network to fetch it")
        present.append(name)
    _record(f"{tool} install: " + (", ".join(present) or "nothing"))
    _say(f"{tool}: already present, nothing fetched: " + (", ".join(present) or "nothing"))
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


def curl(words):
    urls = [w for w in words if re.match(r"^https?://", w)]
    if len(urls) == 1 and UV_INSTALLER.match(urls[0]):
        _record(f"curl {urls[0]}: uv's installer, stood in for")
        print('mkdir -p "$HOME/.local/bin"')
        print(f"printf 'export PATH=\"{SHIM_DIR}:$PATH\"\\n' > \"$HOME/.local/bin/env\"")
        print('echo "termrl offline stand-in: uv is already here" >&2')
        return 0
    real = shutil.which("curl", path=REAL_PATH)
    if real is None:
        return _fail("curl", "curl is not installed here")
    return subprocess.call([real, *words])


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
    return _fail(tool, "no stand-in by that name")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
