"""What the importers share: the cache, ids, shell-script and Dockerfile analysis, wrappers.

Nothing here converts files by hand: each importer reads a task in its own format and
writes what the Task model needs but the format lacks (a reference wrapper, an environment
folder assembled from a Dockerfile's COPY lines, a setup script from its RUN lines) into a
content-addressed cache folder, never into the task's own directory.
"""

from __future__ import annotations

import ast
import base64
import dataclasses
import fnmatch
import glob as globlib
import hashlib
import importlib.util
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable

from ...errors import TaskFormatError
from ..model import Task

IMPORTER_VERSION = "1"
"""Part of every cache key: bump it when what the importers write changes."""

DIFFICULTIES = ("easy", "medium", "hard")
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
"""PATH inside the sandbox: the host's /usr and /bin are what a bwrap task gets."""


# -- the cache -------------------------------------------------------------------------
def cache_root() -> Path:
    """``$TERMRL_CACHE_DIR/imports``, else ``$XDG_CACHE_HOME/pytest-termrl/imports`` (~/.cache)."""
    explicit = os.environ.get("TERMRL_CACHE_DIR")
    if explicit:
        return Path(explicit) / "imports"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-termrl" / "imports"


def digest_tree(root: Path, extra: bytes = b"") -> str:
    """sha256 over the relative paths and bytes of every file under root (caches skipped)."""
    h = hashlib.sha256(IMPORTER_VERSION.encode() + b"\0" + extra + b"\0")
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if {"__pycache__", ".pytest_cache"} & set(rel.parts) or not path.is_file():
            continue
        h.update(rel.as_posix().encode() + b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def materialise(kind: str, name: str, digest: str, build: Callable[[Path], None]) -> Path:
    """The cache folder ``<kind>/<name>-<digest>``, built once by ``build(folder)``.

    Built in a temporary sibling and renamed into place, so a folder that exists is
    complete and two processes importing the same task at once agree on its contents.
    """
    dest = cache_root() / kind / f"{name}-{digest[:16]}"
    if dest.is_dir():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".tmp-{dest.name}-{os.getpid()}-{secrets.token_hex(4)}"
    tmp.mkdir()
    try:
        build(tmp)
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, dest)
        except OSError:
            if not dest.is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


# -- ids and metadata --------------------------------------------------------------------
def grader_field(grader: str) -> dict:
    """``{"grader": grader}`` once Task has a ``grader`` field, else ``{}`` (``extra["grader"]`` says it)."""
    return {"grader": grader} if any(f.name == "grader" for f in dataclasses.fields(Task)) else {}



def task_id_from(name: str) -> str:
    """A task id our test ids accept: letters, digits, '_' and '.', so 'hello-world' -> 'hello_world'."""
    return re.sub(r"[^A-Za-z0-9_.]+", "_", name).strip("_.") or "task"


def marker_word(value: str) -> str:
    """A category usable in a marker name ('data extraction' -> 'data_extraction')."""
    return re.sub(r"\W+", "_", value.strip().lower()).strip("_") or "general"


def difficulty_of(where: Path | str, value, notes: list[str]) -> str:
    if value is None:
        return "medium"
    if not isinstance(value, str):
        raise TaskFormatError(where, "difficulty", "expected a string (easy, medium or hard)")
    if value.strip().lower() in DIFFICULTIES:
        return value.strip().lower()
    notes.append(f"difficulty {value!r} is not easy/medium/hard; recorded as medium")
    return "medium"


def string_list(where: Path | str, key: str, value) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise TaskFormatError(where, key, "expected a list of non-empty strings")
    return tuple(value)


def number(where: Path | str, key: str, value, default: float | None = None) -> float | None:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise TaskFormatError(where, key, "expected a positive number")
    return float(value)


def requires_from(*texts: str) -> tuple[str, ...]:
    """What the task's scripts call, of the tools a bwrap sandbox shares with the host."""
    joined = "\n".join(texts)
    found = ["bash"]
    for tool, pattern in (("python", r"\bpython3?\b"), ("git", r"\bgit\b")):
        if re.search(pattern, joined):
            found.append(tool)
    return tuple(found)


def inputs_named(instruction: str, env_dir: Path | None, workdir: str, limit: int = 8) -> tuple[str, ...]:
    """Files of the environment the instruction names (by workdir-relative or absolute path)."""
    if env_dir is None or not env_dir.is_dir():
        return ()
    found = []
    for path in sorted(env_dir.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        rel = path.relative_to(env_dir).as_posix()
        absolute = f"{workdir.rstrip('/')}/{rel}"
        if re.search(r"(?<![\w./-])" + re.escape(rel) + r"(?![\w/-])", instruction) or absolute in instruction:
            found.append(rel)
        if len(found) >= limit:
            break
    return tuple(found)


# -- shell scripts ------------------------------------------------------------------------
_NETWORK = [
    (re.compile(r"\bcurl\b"), "downloads with curl"),
    (re.compile(r"\bwget\b"), "downloads with wget"),
    (re.compile(r"\b(?:pip3?|python3?\s+-m\s+pip)\s+install\b"), "pip install"),
    (re.compile(r"\buv\s+(?:pip\s+install|add|sync|tool\s+install|run\s+--with)\b"), "uv installs packages"),
    (re.compile(r"\buvx\b"), "uvx fetches packages"),
    (re.compile(r"\bapt(?:-get)?\s+(?:-\S+\s+)*(?:update|install|upgrade|dist-upgrade)\b"), "apt"),
    (re.compile(r"\b(?:apk\s+add|yum\s+install|dnf\s+install|zypper\s+install|pacman\s+-S)\b"), "a package manager"),
    (re.compile(r"\b(?:npm\s+(?:install|ci|i)\b|npx\b|yarn\s+(?:add|install)\b|pnpm\s+(?:add|install)\b)"), "npm"),
    (re.compile(r"\bgit\s+(?:clone|fetch|pull)\b"), "git over the network"),
    (re.compile(r"\b(?:conda|mamba|micromamba)\s+(?:install|create)\b"), "conda"),
    (re.compile(r"\b(?:cargo\s+install|go\s+(?:get|install)|gem\s+install)\b"), "a language package manager"),
]
_PYTEST = re.compile(r"(?:^|[\s;&|(])(?:pytest|py\.test)\b|-m\s+pytest\b")
_BENIGN = re.compile(
    r"^(?:#.*|set\s+[-+]\w+.*|source\s+.*|\.\s+\S.*|export\s+.*|cd\s+.*|echo\b.*|printf\b.*|"
    r"uv\s+(?:venv|init)\b.*|python3?\s+-m\s+venv\b.*|deactivate|if\b.*|then|else|elif\b.*|fi|"
    r"mkdir\s+-p\s+\S*/logs/\S*|exit\b.*|true|:|ls\b.*|cat\b.*|rm\s+-f\s+\S*/logs/\S*|"
    r"\w+=\S*)$"
)
_REWARD = re.compile(r"reward\.(?:txt|json)")


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each logical line, continuations joined, comments dropped."""
    out: list[tuple[int, str]] = []
    current, start = "", 0
    for number_, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not current:
            start = number_
            if not stripped or stripped.startswith("#"):
                continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        out.append((start, (current + stripped).strip()))
        current = ""
    if current.strip():
        out.append((start, current.strip()))
    return out


@dataclass
class ScriptFindings:
    """What a grader or setup script does, line by line, as far as matters for running offline."""

    network: list[str] = field(default_factory=list)
    """'line N: <text> (<what>)' for each line that needs the network."""
    pytest: list[str] = field(default_factory=list)
    """Lines that run pytest."""
    rewards: list[str] = field(default_factory=list)
    """Lines that write /logs/verifier/reward.*."""
    other: list[str] = field(default_factory=list)
    """Lines that are none of the above nor plain shell plumbing (echo, cd, export, if ...)."""

    @property
    def offline(self) -> bool:
        return not self.network


def analyse_script(text: str) -> ScriptFindings:
    findings = ScriptFindings()
    for lineno, line in logical_lines(text):
        shown = f"line {lineno}: {line[:160]}"
        what = next((label for pattern, label in _NETWORK if pattern.search(line)), None)
        if what is not None:
            findings.network.append(f"{shown} ({what})")
            if _PYTEST.search(line):
                findings.pytest.append(shown)
            continue
        if _REWARD.search(line):
            findings.rewards.append(shown)
        elif _PYTEST.search(line):
            findings.pytest.append(shown)
        elif not _BENIGN.match(line.rstrip(";").strip()):
            findings.other.append(shown)
    return findings


# -- tests and the trusted toolchain ------------------------------------------------------
def missing_test_imports(tests_dir: Path) -> list[str]:
    """Top-level modules the tests import that the harness's own Python cannot import."""
    local = {p.stem for p in tests_dir.rglob("*.py")} | {p.name for p in tests_dir.iterdir() if p.is_dir()}
    names: set[str] = set()
    for path in sorted(tests_dir.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(errors="replace"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    missing = []
    for name in sorted(names - local - set(sys.stdlib_module_names) - {"pytest", "_pytest"}):
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


# -- Dockerfiles ----------------------------------------------------------------------------
HARNESS_ONLY_PACKAGES = {"tmux", "asciinema"}
"""Installed by Terminal-Bench images for its own tmux-driven harness, not for the task."""
GRADER_TOOLING = re.compile(r"^(?:pytest(?:-[\w.-]+)?|pluggy|iniconfig)$", re.I)
"""pip packages the trusted toolchain stands in for."""
_APT_COMMAND = {
    "python3-pip": "pip3", "coreutils": "ls", "procps": "ps", "findutils": "find", "build-essential": "gcc",
    "git-core": "git", "xz-utils": "xz", "bsdmainutils": "column", "util-linux": "lsblk", "iproute2": "ip",
    "dnsutils": "dig", "netcat-openbsd": "nc", "netcat": "nc", "openssh-client": "ssh", "vim-tiny": "vi",
    "gawk": "awk", "sqlite3": "sqlite3", "python-is-python3": "python", "bash": "bash", "grep": "grep",
    "sed": "sed", "tar": "tar", "gzip": "gzip", "bzip2": "bzip2", "zip": "zip", "unzip": "unzip",
}
_APT_ALWAYS = {"ca-certificates", "locales", "tzdata", "apt-utils", "lsb-release", "gnupg"}
_PIP_MODULE = {"pyyaml": "yaml", "scikit-learn": "sklearn", "pillow": "PIL", "beautifulsoup4": "bs4", "python-dateutil": "dateutil"}
_GENERIC_BASE = re.compile(
    r"^(?:(?:docker\.io/)?(?:library/)?(?:ubuntu|debian|python|buildpack-deps)(?::[\w.-]+)?(?:@sha256:[0-9a-f]+)?"
    r"|ghcr\.io/laude-institute/t-bench/(?:python|ubuntu)[\w.-]*(?::[\w.-]+)?)$",
    re.I,
)


def is_generic_base(image: str) -> bool:
    """An image that is just 'a Linux with bash (and Python)': what a bwrap sandbox already is."""
    return bool(_GENERIC_BASE.match(image.strip()))


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


def split_segments(command: str) -> list[str]:
    """Split a shell command on top-level '&&' and ';' (quotes respected, subshells not parsed)."""
    parts, current, quote, i = [], "", None, 0
    while i < len(command):
        ch = command[i]
        if quote:
            current += ch
            if ch == "\\" and quote == '"' and i + 1 < len(command):
                current += command[i + 1]
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            current += ch
        elif command.startswith("&&", i) or ch == ";":
            parts.append(current.strip())
            current = ""
            i += 2 if ch == "&" else 1
            continue
        else:
            current += ch
        i += 1
    parts.append(current.strip())
    return [p for p in parts if p]


def _install_packages(segment: str) -> tuple[str, list[str]] | None:
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
            return "pip", ["<requirements file>"]
        return "pip", [re.split(r"[<>=!~\[;]", w)[0] for w in pip if not w.startswith("-")]
    return None


_COMPOUND = re.compile(r"(?:^|[\s;&|])(?:for|while|until|if|case|function)\s|[{}()]|\|\|")
_HOUSEKEEPING = re.compile(
    r"^(?:apt(?:-get)?\s+(?:-\S+\s+)*(?:update|clean|autoremove|autoclean)\b.*|rm\s+-rf\s+/var/lib/apt/lists/?\*?"
    r"|pip3?\s+cache\s+purge|true)$"
)


@dataclass
class DockerPlan:
    """What a Dockerfile does, sorted into what a bwrap sandbox can reproduce and what it cannot."""

    dockerfile: Path | None
    bases: list[str] = field(default_factory=list)
    workdir: str = "/app"
    copies: list[tuple[Path, str]] = field(default_factory=list)
    """(host file, path relative to the workdir) for each file the image copies into the workdir."""
    setup: list[str] = field(default_factory=list)
    """Shell commands of RUN lines to replay, as the agent's user, in the workdir."""
    env: dict[str, str] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    """Steps left out on bwrap, and why (harness-only tools, packages the host already has)."""
    blockers: list[str] = field(default_factory=list)
    """Why a bwrap sandbox cannot stand in for the image (then the task needs the docker backend)."""
    image_installs: bool = False


def _dockerignore(context: Path) -> list[str]:
    path = context / ".dockerignore"
    if not path.is_file():
        return []
    return [line.strip().lstrip("/") for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def _ignored(rel: str, patterns: list[str]) -> bool:
    ignored = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        pat = pattern[1:] if negate else pattern
        if fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(rel, pat.rstrip("/") + "/*") or rel.split("/")[0] == pat.rstrip("/"):
            ignored = not negate
    return ignored


def plan_dockerfile(dockerfile: Path, context: Path, exclude: set[str] = frozenset(), default_workdir: str = "/app") -> DockerPlan:
    """Read a Dockerfile; raise TaskFormatError (naming the line) when a COPY source is missing."""
    plan = DockerPlan(dockerfile=dockerfile, workdir=default_workdir)
    text = dockerfile.read_text(errors="replace")
    cwd = "/"
    saw_workdir = False
    args: dict[str, str] = {}
    pending: list[tuple[int, Path, str]] = []  # (line, source file, absolute destination)
    run_dirs: list[tuple[int, str]] = []
    ignore = _dockerignore(context)
    for lineno, line in logical_lines(text):
        where = f"{dockerfile}:{lineno}"
        keyword, _, rest = line.partition(" ")
        keyword, rest = keyword.upper(), rest.strip()
        if keyword == "ARG":
            name, _, value = rest.partition("=")
            args[name.strip()] = value.strip().strip("\"'")
        elif keyword == "FROM":
            words = [w for w in rest.split() if not w.startswith("--")]
            if not words:
                raise TaskFormatError(where, "FROM", "expected an image")
            image = re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), ""), words[0])
            plan.bases.append(image)
        elif keyword == "WORKDIR":
            target = rest.strip("\"'")
            cwd = target if target.startswith("/") else str(PurePosixPath(cwd) / target)
            saw_workdir = True
        elif keyword == "ENV":
            if rest and "=" in rest.split()[0]:
                for word in shlex.split(rest):
                    key, _, value = word.partition("=")
                    plan.env[key] = value
            elif rest:
                key, _, value = rest.partition(" ")
                plan.env[key] = value.strip()
        elif keyword == "RUN":
            if rest.startswith("<<"):
                plan.blockers.append(f"{where}: a heredoc RUN step (not replayed outside docker)")
                continue
            if rest.startswith("["):
                try:
                    rest = shlex.join(json.loads(rest))
                except ValueError:
                    raise TaskFormatError(where, "RUN", "expected a JSON array or a shell command") from None
            if rest.startswith("--"):
                plan.blockers.append(f"{where}: RUN with build flags ({rest.split()[0]})")
                continue
            if _COMPOUND.search(rest):
                # A loop or a group: replayed whole, or not at all when it installs or downloads.
                net = next((label for pattern, label in _NETWORK if pattern.search(rest)), None)
                if net is not None:
                    plan.image_installs = True
                    plan.blockers.append(f"{where}: a compound RUN step that needs the network ({net})")
                else:
                    run_dirs.append((lineno, cwd))
                    plan.setup.append(f"cd {shlex.quote(cwd)} && {rest}")
                continue
            segments = split_segments(rest)
            kept = []
            for segment in segments:
                if _HOUSEKEEPING.match(segment):
                    continue
                install = _install_packages(segment)
                if install is not None:
                    plan.image_installs = True
                    manager, packages = install
                    missing = []
                    for package in packages:
                        if manager == "apt":
                            if package in HARNESS_ONLY_PACKAGES or package in _APT_ALWAYS:
                                continue
                            if not _host_command(_APT_COMMAND.get(package, package)):
                                missing.append(package)
                        else:
                            if GRADER_TOOLING.match(package):
                                continue
                            module = _PIP_MODULE.get(package.lower(), package.replace("-", "_"))
                            if package == "<requirements file>" or not _sandbox_python_has(module):
                                missing.append(package)
                    if missing:
                        plan.blockers.append(f"{where}: installs {', '.join(missing)} over the network ({manager})")
                    else:
                        plan.dropped.append(f"{where}: {segment[:100]} (nothing the sandbox lacks)")
                    continue
                net = next((label for pattern, label in _NETWORK if pattern.search(segment)), None)
                if net is not None:
                    plan.blockers.append(f"{where}: {segment[:100]} ({net})")
                    continue
                kept.append(segment)
            if kept:
                run_dirs.append((lineno, cwd))
                body = rest if len(kept) == len(segments) else " && ".join(kept)
                plan.setup.append(f"cd {shlex.quote(cwd)} && {body}")
        elif keyword in ("COPY", "ADD"):
            if rest.startswith("["):
                try:
                    words = json.loads(rest)
                except ValueError:
                    raise TaskFormatError(where, keyword, "expected a JSON array or sources and a destination") from None
            else:
                words = shlex.split(rest)
            flags = [w for w in words if w.startswith("--")]
            words = [w for w in words if not w.startswith("--")]
            if any(f.startswith("--from") for f in flags):
                plan.blockers.append(f"{where}: {keyword} --from another stage")
                continue
            if len(words) < 2:
                raise TaskFormatError(where, keyword, "expected at least one source and a destination")
            *sources, dest = words
            dest_abs = dest if dest.startswith("/") else str(PurePosixPath(cwd) / dest)
            is_dir_dest = dest.endswith("/") or len(sources) > 1 or dest in (".", "./")
            for source in sources:
                if re.match(r"^[a-z]+://", source):
                    plan.blockers.append(f"{where}: ADD {source} (downloads over the network)")
                    continue
                if keyword == "ADD" and re.search(r"\.(?:tar|tgz|tar\.\w+)$", source):
                    plan.blockers.append(f"{where}: ADD {source} (an archive docker would unpack)")
                    continue
                matches = sorted(globlib.glob(str(context / source), recursive=False))
                if not matches:
                    raise TaskFormatError(where, keyword, f"source {source!r} does not exist in {context}")
                for match in matches:
                    match_path = Path(match)
                    if match_path.is_dir():
                        for sub in sorted(match_path.rglob("*")):
                            if not sub.is_file():
                                continue
                            rel_ctx = sub.relative_to(context).as_posix()
                            top = rel_ctx.split("/")[0]
                            if top in exclude or _ignored(rel_ctx, ignore) or "__pycache__" in sub.parts:
                                continue
                            pending.append((lineno, sub, str(PurePosixPath(dest_abs) / sub.relative_to(match_path).as_posix())))
                    else:
                        rel_ctx = match_path.relative_to(context).as_posix()
                        if rel_ctx in exclude or _ignored(rel_ctx, ignore):
                            continue
                        target = str(PurePosixPath(dest_abs) / match_path.name) if (is_dir_dest or len(matches) > 1) else dest_abs
                        pending.append((lineno, match_path, target))
    if not plan.bases:
        raise TaskFormatError(dockerfile, "FROM", "expected a FROM line")
    if len(plan.bases) > 1:
        plan.blockers.append(f"{dockerfile}: a multi-stage build ({', '.join(plan.bases)})")
    for image in plan.bases[:1]:
        if not is_generic_base(image):
            plan.blockers.append(f"{dockerfile}: FROM {image} (an image with more than bash, git and Python)")
    if saw_workdir:
        plan.workdir = cwd
    root = PurePosixPath(plan.workdir)
    for lineno, source, target in pending:
        target_path = PurePosixPath(target)
        if target_path != root and root not in target_path.parents:
            plan.blockers.append(f"{dockerfile}:{lineno}: copies {source.name} to {target}, outside the workdir {plan.workdir}")
            continue
        plan.copies.append((source, target_path.relative_to(root).as_posix()))
    for lineno, directory in run_dirs:
        path = PurePosixPath(directory)
        if path != root and root not in path.parents:
            plan.blockers.append(f"{dockerfile}:{lineno}: a RUN step in {directory}, outside the workdir {plan.workdir}")
    return plan


def write_environment(plan: DockerPlan, dest: Path) -> bool:
    """Copy the plan's files into dest (modes kept); False when there are none."""
    if not plan.copies:
        return False
    for source, rel in plan.copies:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return True


def setup_text(plan: DockerPlan, label: str) -> str | None:
    if not plan.setup:
        return None
    lines = [f"# Replayed from the RUN steps of {label}, as the agent's user, without network.", "set -e"]
    lines += [f"export {key}={shlex.quote(value)}" for key, value in sorted(plan.env.items()) if re.match(r"^\w+$", key)]
    lines += [f"( {step} )" for step in plan.setup]
    return "\n".join(lines) + "\n"


# -- the reference as a script -------------------------------------------------------------
SOLUTION_INSIDE = "/tmp/termrl-solution"
"""Where an imported reference and its sibling files are unpacked inside the agent's sandbox
(a private /tmp, outside the home, so the footprint is the reference's alone)."""


def _file_command(target: str, data: bytes) -> str:
    """A command writing ``data`` to ``target``: a readable heredoc for text, base64 otherwise."""
    try:
        text = data.decode()
    except UnicodeDecodeError:
        text = None
    if text is not None and text.endswith("\n") and "\r" not in text:
        delimiter = "__TERMRL_EOF__"
        while delimiter in text:
            delimiter += "_"
        return f"cat > {shlex.quote(target)} <<'{delimiter}'\n{text}{delimiter}"
    encoded = base64.b64encode(data).decode()
    body = "\n".join(encoded[i:i + 76] for i in range(0, len(encoded), 76))
    return f"base64 -d > {shlex.quote(target)} <<'__TERMRL_B64__'\n{body}\n__TERMRL_B64__"


def solution_wrapper(script: str, workdir: str, label: str, siblings: dict[str, bytes] | None = None, rewrite_dir: str | None = None) -> str:
    """A command for the oracle agent that runs ``script`` the way its own harness does.

    Terminal-Bench and Harbor run the reference as a separate ``bash`` process in the
    workdir, not sourced into the agent's shell; ``set -e`` or ``exit`` in it must not leak
    into the shell the episode continues in. Sibling files (Harbor's solution/ folder) are
    unpacked next to it, and ``rewrite_dir`` (say '/solution') is pointed at them.
    """
    if rewrite_dir:
        script = script.replace(rewrite_dir.rstrip("/") + "/", SOLUTION_INSIDE + "/")
    files = {"solve.sh": script.encode(), **(siblings or {})}
    lines = [
        f"# The reference of {label}, run as its own bash script in {workdir}.",
        f"rm -rf {SOLUTION_INSIDE} && mkdir -p {SOLUTION_INSIDE}",
    ]
    for rel, data in sorted(files.items(), key=lambda kv: (kv[0] == "solve.sh", kv[0])):
        target = f"{SOLUTION_INSIDE}/{rel}"
        parent = str(PurePosixPath(target).parent)
        if parent != SOLUTION_INSIDE:
            lines.append(f"mkdir -p {shlex.quote(parent)}")
        lines.append(_file_command(target, data))
    lines.append(f"(cd {shlex.quote(workdir)} && bash {SOLUTION_INSIDE}/solve.sh)")
    lines.append("__termrl_rc=$?")
    lines.append(f"rm -rf {SOLUTION_INSIDE}")
    lines.append("(exit $__termrl_rc)")
    return "\n".join(lines) + "\n"
