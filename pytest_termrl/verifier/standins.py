"""Offline stand-ins for pip, pip3, uv, uvx, apt-get and uv's curl installer inside the verifier sandbox.

Executed as ``python -I standins.py TOOL ARGS...`` by the shims the script runner puts
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
"""

import os
import re
import shutil
import subprocess
import sys
from importlib import metadata

SHIM_DIR = os.path.dirname(os.environ.get("TERMRL_STANDIN_LOG", "/tmp/termrl-grader-bin/standins.log"))
STANDIN_LOG = os.environ.get("TERMRL_STANDIN_LOG", "/tmp/termrl-grader-bin/standins.log")
REAL_PATH = "/usr/local/bin:/usr/bin:/bin"
TRUSTED_TOOLS = {"pytest", "py.test"}
APT_COMMANDS = {
    "python3": "python3", "python3-pip": "python3", "python-is-python3": "python3", "build-essential": "gcc",
    "g++": "g++", "coreutils": "ls", "procps": "ps", "findutils": "find", "git-core": "git", "xz-utils": "xz",
    "iproute2": "ip", "dnsutils": "dig", "netcat-openbsd": "nc", "openssh-client": "ssh", "vim-tiny": "vi",
    "golang": "go", "golang-go": "go", "rustc": "rustc", "cargo": "cargo", "default-jdk": "javac", "openjdk-17-jdk": "javac",
    "nodejs": "node", "sqlite3": "sqlite3", "gawk": "awk",
}
APT_ALWAYS = {"ca-certificates", "locales", "tzdata", "apt-utils", "lsb-release", "gnupg", "tmux", "asciinema"}
UV_INSTALLER = re.compile(r"^https?://(?:astral\.sh/uv/|github\.com/astral-sh/uv/releases/)\S*install\.sh$")


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


def _present(requirement):
    """(ok, what): is this requirement (``name``, ``name==1.2``, ``name>=1``, ``name[extra]``) met here?"""
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:  # pragma: no cover - packaging ships with pytest
        return False, f"{requirement}: cannot read the requirement"
    try:
        req = Requirement(requirement)
    except InvalidRequirement:
        return False, f"{requirement!r} is not a requirement this stand-in can read"
    try:
        version = metadata.version(req.name)
    except metadata.PackageNotFoundError:
        return False, f"the package {req.name!r} is not installed here and there is no network to fetch it"
    if req.name.lower() in TRUSTED_TOOLS or req.specifier.contains(version, prereleases=True):
        return True, f"{requirement} (present: {req.name} {version})"
    return False, f"{requirement}: {req.name} {version} is installed here, which does not satisfy {req.specifier}"


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
    elif name in TRUSTED_TOOLS:
        command = [os.path.join(SHIM_DIR, "pytest"), *argv[1:]]
    else:
        found = shutil.which(name, path=f"{SHIM_DIR}:{os.environ.get('PATH', REAL_PATH)}")
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
        if shutil.which(command, path=REAL_PATH) is None:
            return _fail(tool, f"the package {name!r} is not installed here (no {command!r} on PATH) and there is no network to fetch it")
        present.append(name)
    _record(f"{tool} install: " + (", ".join(present) or "nothing"))
    _say(f"{tool}: already present, nothing fetched: " + (", ".join(present) or "nothing"))
    return 0


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


def main(argv):
    tool, words = os.path.basename(argv[1]), argv[2:]
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
