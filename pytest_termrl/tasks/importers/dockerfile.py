"""Dockerfile planning: what an image's build does, sorted into what a bwrap sandbox can replay and what it cannot."""

from __future__ import annotations

import fnmatch
import glob as globlib
import os
import re
import shlex
import shutil
from collections.abc import Set
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ...errors import TaskFormatError
from ...sandbox.build.arguments import split_words
from ...sandbox.build.bases import DEFAULT_PATH, LIBRARY_PREFIX
from ...sandbox.build.parser import Instruction, from_parts, parse
from ...sandbox.build.shell_words import expand, expand_heredoc, expand_words
from ..files import read_text
from ..model import ImageSpec
from .package_installs import install_packages, needs_nothing, sandbox_satisfies
from .scripts import network_need, split_segments
from .toolchains import PACKAGE_COMMANDS, sandbox_has

_GENERIC_BASE = re.compile(
    rf"^(?:{LIBRARY_PREFIX}(?:ubuntu|debian|python|buildpack-deps)(?::[\w.-]+)?(?:@sha256:[0-9a-f]+)?"
    r"|ghcr\.io/laude-institute/t-bench/(?:python|ubuntu)[\w.-]*(?::[\w.-]+)?)$",
    re.I,
)


HARNESS_BASE_REPOSITORY = "termrl-base"
"""The repository of the harness's own base image (``sandbox.image`` builds it; the docker backend runs on it)."""


def is_generic_base(image: str) -> bool:
    """An image that is just 'a Linux with bash (and Python)', the harness's own base included: what a bwrap sandbox already is."""
    image = image.strip()
    return bool(_GENERIC_BASE.match(image)) or image.split("@")[0].split(":")[0] == HARNESS_BASE_REPOSITORY


_HEREDOC_SOURCE = re.compile(r"^<<-?([A-Za-z_][\w.-]*)$")
_COMPOUND = re.compile(r"(?:^|[\s;&|])(?:for|while|until|if|case|function)\s|[{}()]|\|\|")
_AGENT_CHOWN = re.compile(r"^chown\s+(?:-R\s+)?(?:1000|user)(?::(?:1000|user))?\s+(\S+)$")
"""``chown 1000:1000 DIR``: a folder given to the agent's user, as an exported task's image gives it the workdir."""
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
    args: dict[str, str] = field(default_factory=dict)
    """The build arguments in scope at the end (their defaults): RUN steps see them as variables."""
    inline_files: list[tuple[str, bytes]] = field(default_factory=list)
    """(path relative to the workdir, content) of each file a ``COPY <<EOF`` heredoc writes."""
    toolchains: list[str] = field(default_factory=list)
    """The commands of the toolchain packages the image installs (:data:`.toolchains.PACKAGE_COMMANDS`), in order."""
    missing_toolchains: list[tuple[int, str]] = field(default_factory=list)
    """(line, Debian package) of each toolchain package the image installs that the sandbox lacks."""
    toolchain_blockers: list[str] = field(default_factory=list)
    """The blockers that are those installs alone (also in ``blockers``)."""


def _dockerignore(context: Path) -> list[str]:
    path = context / ".dockerignore"
    if not os.path.lexists(path):
        return []
    text = read_text(path, what="a .dockerignore file")
    return [line.strip().lstrip("/") for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _ignored(rel: str, patterns: list[str]) -> bool:
    ignored = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        pat = pattern[1:] if negate else pattern
        if fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(rel, pat.rstrip("/") + "/*") or rel.split("/")[0] == pat.rstrip("/"):
            ignored = not negate
    return ignored


def _run_step(instruction: Instruction) -> str:
    """The shell text of a RUN step: its command, or for heredocs the command with each body after it."""
    rest = instruction.args
    if not instruction.heredocs:
        return shlex.join(instruction.json) if instruction.json is not None else rest
    command = rest
    first = instruction.heredocs[0]
    if _HEREDOC_ONLY.match(command):
        # RUN <<EOF: the body is the script, run by its shebang's interpreter or the shell.
        shebang = first.body.split("\n", 1)[0]
        command = f"{shebang[2:].strip() if shebang.startswith('#!') else 'sh'} <<'{first.name}'"
        return f"{command}\n{first.body}{first.name}"
    bodies = "".join(f"{doc.body}{doc.name}\n" for doc in instruction.heredocs)
    return f"{command}\n{bodies}".rstrip("\n")


def _absolute_mkdirs(segments: list[str]) -> list[str] | None:
    """The folders when every segment is ``mkdir [-p] /abs/path ...`` (the workdir, its parents, or inside it, checked later)."""
    made = []
    for segment in segments:
        try:
            found = shlex.split(segment)
        except ValueError:
            return None
        if not found or found[0] != "mkdir":
            return None
        paths = [w for w in found[1:] if w not in ("-p", "--parents")]
        if not paths or any(not p.startswith("/") or "$" in p or "*" in p for p in paths):
            return None
        made += [str(PurePosixPath(p)) for p in paths]
    return made


_HEREDOC_ONLY = re.compile(r"^<<-?([\"']?)[A-Za-z_][\w.-]*\1$")


def _expanded(where: str, keyword: str, words: list[str], env: dict[str, str], escape: str, split: bool = False) -> list[str]:
    """Each word expanded as Docker expands it (and split on whitespace with ``split``); a TaskFormatError naming the line when Docker cannot."""
    try:
        if split:
            return [found for word in words for found in expand_words(word, env, escape=escape)]
        return [expand(word, env, escape=escape) for word in words]
    except ValueError as exc:
        raise TaskFormatError(where, keyword, f"words Docker can expand ({exc})") from None


def plan_dockerfile(
    dockerfile: Path, context: Path, exclude: Set[str] = frozenset(), default_workdir: str = "/app", workdir_override: str | None = None
) -> DockerPlan:
    """Read a Dockerfile as Docker does; raise TaskFormatError (naming the line) when a COPY source is missing.

    ``workdir_override`` (Harbor's ``[environment] workdir``) is the workdir whatever WORKDIR says.
    """
    plan = DockerPlan(dockerfile=dockerfile, workdir=default_workdir)
    text = dockerfile.read_text(errors="replace")
    cwd = "/"
    saw_workdir = False
    global_args: dict[str, str] = {}
    args: dict[str, str] = {}
    pending: list[tuple[int, Path, str]] = []  # (line, source file, absolute destination)
    inline: list[tuple[int, bytes, str]] = []  # (line, content, absolute destination)
    run_dirs: list[tuple[int, str]] = []
    mkdirs: list[tuple[int, str]] = []  # (line, folder) of RUN steps that only make folders by absolute path
    agent_chowns: list[tuple[int, str, str]] = []  # (line, the folder given to the agent's user, the segment)
    ignore = _dockerignore(context)
    parsed = parse(text, str(dockerfile))
    escape = parsed.escape
    for instruction in parsed.instructions:
        lineno, keyword, rest = instruction.lineno, instruction.keyword, instruction.args
        where = f"{dockerfile}:{lineno}"
        scope = {"PATH": DEFAULT_PATH, **args, **plan.env}  # the base image's PATH until an ENV sets its own
        if keyword == "ARG":
            for word in _expanded(where, keyword, split_words(rest, escape), scope, escape):
                name, eq, value = word.partition("=")
                if not plan.bases:
                    global_args[name] = value
                else:
                    args[name] = value if eq else global_args.get(name, args.get(name, ""))
        elif keyword == "FROM":
            image, _ = from_parts(instruction)
            plan.bases.append(_expanded(where, keyword, [image], global_args, escape)[0])
            args = {}
        elif keyword == "WORKDIR":
            target = _expanded(where, keyword, [rest], scope, escape)[0]
            cwd = target if target.startswith("/") else str(PurePosixPath(cwd) / target)
            saw_workdir = True
        elif keyword == "ENV":
            found = _expanded(where, keyword, split_words(rest, escape), scope, escape)
            if found and "=" in found[0]:
                for word in found:
                    key, _, value = word.partition("=")
                    plan.env[key] = value
            elif found:
                plan.env[found[0]] = " ".join(found[1:])
        elif keyword == "RUN":
            if instruction.flags:
                plan.blockers.append(f"{where}: RUN with build flags ({instruction.flags[0]})")
                continue
            step = _run_step(instruction)
            if instruction.heredocs or _COMPOUND.search(step):
                # A loop, a group or a heredoc: replayed whole, or not at all when it installs or downloads.
                net = network_need(step)
                if net is not None:
                    plan.image_installs = True
                    plan.blockers.append(f"{where}: a compound RUN step that needs the network ({net})")
                else:
                    run_dirs.append((lineno, cwd))
                    plan.setup.append(f"cd {shlex.quote(cwd)} && {step}")
                continue
            rest = step
            segments = split_segments(rest)
            kept = []
            for segment in segments:
                if _HOUSEKEEPING.match(segment):
                    continue
                chown = _AGENT_CHOWN.match(segment)
                if chown:
                    target = chown.group(1).rstrip("/") or "/"
                    agent_chowns.append((lineno, target if target.startswith("/") else str(PurePosixPath(cwd) / target), segment))
                    continue
                install = install_packages(segment)
                if install is not None:
                    plan.image_installs = True
                    manager, packages = install
                    missing, toolchains = [], []
                    for package in packages:
                        if manager == "apt" and package in PACKAGE_COMMANDS and not needs_nothing("apt", package):
                            # A compiler or runtime: the host's serves when the sandbox sees it.
                            if PACKAGE_COMMANDS[package] not in plan.toolchains:
                                plan.toolchains.append(PACKAGE_COMMANDS[package])
                            if not sandbox_has(PACKAGE_COMMANDS[package]):
                                toolchains.append(package)
                        elif not needs_nothing(manager, package) and not sandbox_satisfies(manager, package):
                            missing.append(package)
                    if toolchains:
                        plan.missing_toolchains += [(lineno, package) for package in toolchains]
                        plan.toolchain_blockers.append(f"{where}: installs the toolchain {', '.join(toolchains)} over the network ({manager})")
                        plan.blockers.append(plan.toolchain_blockers[-1])
                    if missing:
                        plan.blockers.append(f"{where}: installs {', '.join(missing)} over the network ({manager})")
                    elif not toolchains:
                        plan.dropped.append(f"{where}: {segment[:100]} (nothing the sandbox lacks)")
                    continue
                net = network_need(segment)
                if net is not None:
                    plan.blockers.append(f"{where}: {segment[:100]} ({net})")
                    continue
                kept.append(segment)
            if kept:
                made = _absolute_mkdirs(kept)
                if made is not None:
                    mkdirs += [(lineno, path) for path in made]  # where it runs does not matter: checked by what it makes
                else:
                    run_dirs.append((lineno, cwd))
                body = rest if len(kept) == len(segments) else " && ".join(kept)
                plan.setup.append(f"cd {shlex.quote(cwd)} && {body}")
        elif keyword in ("COPY", "ADD"):
            if instruction.json is not None:
                found = _expanded(where, keyword, list(instruction.json), scope, escape)
            else:
                found = _expanded(where, keyword, [rest], scope, escape, split=True)
            if instruction.flag("from") is not None:
                plan.blockers.append(f"{where}: {keyword} --from another stage")
                continue
            if len(found) < 2:
                raise TaskFormatError(where, keyword, "expected at least one source and a destination")
            *sources, dest = found
            dest_abs = dest if dest.startswith("/") else str(PurePosixPath(cwd) / dest)
            is_dir_dest = dest.endswith("/") or len(sources) > 1 or dest in (".", "./")
            docs = {doc.name: doc for doc in instruction.heredocs}
            for source in sources:
                heredoc = _HEREDOC_SOURCE.match(source)
                if heredoc and heredoc.group(1) in docs:
                    doc = docs[heredoc.group(1)]
                    try:
                        body = expand_heredoc(doc.body, scope) if doc.expand else doc.body
                    except ValueError as exc:
                        raise TaskFormatError(where, keyword, f"a heredoc Docker can expand ({exc})") from None
                    target = str(PurePosixPath(dest_abs) / doc.name) if is_dir_dest and len(sources) > 1 else dest_abs
                    inline.append((lineno, body.encode(), target))
                    continue
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
    plan.args = args  # global ARGs (before FROM) are seen by FROM alone, as in Docker
    if not plan.bases:
        raise TaskFormatError(dockerfile, "FROM", "expected a FROM line")
    if len(plan.bases) > 1:
        plan.blockers.append(f"{dockerfile}: a multi-stage build ({', '.join(plan.bases)})")
    for image in plan.bases[:1]:
        if not is_generic_base(image):
            plan.blockers.append(f"{dockerfile}: FROM {image} (an image with more than bash, git and Python)")
    if workdir_override:
        plan.workdir = workdir_override
    elif saw_workdir:
        plan.workdir = cwd
    root = PurePosixPath(plan.workdir)
    for lineno, src_path, target in pending:
        target_path = PurePosixPath(target)
        if target_path != root and root not in target_path.parents:
            plan.blockers.append(f"{dockerfile}:{lineno}: copies {src_path.name} to {target}, outside the workdir {plan.workdir}")
            continue
        plan.copies.append((src_path, target_path.relative_to(root).as_posix()))
    for lineno, content, target in inline:
        target_path = PurePosixPath(target)
        if target_path == root or root not in target_path.parents:
            plan.blockers.append(f"{dockerfile}:{lineno}: writes a heredoc to {target}, outside the workdir {plan.workdir}")
            continue
        plan.inline_files.append((target_path.relative_to(root).as_posix(), content))
    for lineno, directory, segment in agent_chowns:
        path = PurePosixPath(directory)
        if path == root or root in path.parents:
            plan.dropped.append(f"{dockerfile}:{lineno}: {segment} (the workdir is the agent's user's already)")
        else:
            plan.blockers.append(f"{dockerfile}:{lineno}: {segment} (gives {directory}, outside the workdir {plan.workdir}, to the agent's user)")
    for lineno, directory in mkdirs:
        path = PurePosixPath(directory)
        if path != root and path not in root.parents and root not in path.parents:
            plan.blockers.append(f"{dockerfile}:{lineno}: makes {directory}, outside the workdir {plan.workdir}")
    for lineno, directory in run_dirs:
        path = PurePosixPath(directory)
        if path != root and root not in path.parents:
            plan.blockers.append(f"{dockerfile}:{lineno}: a RUN step in {directory}, outside the workdir {plan.workdir}")
    return plan


def write_environment(plan: DockerPlan, dest: Path) -> bool:
    """Copy the plan's files (and write its heredoc files) into dest, modes kept; False when there are none."""
    if not plan.copies and not plan.inline_files:
        return False
    for source, rel in plan.copies:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    for rel, content in plan.inline_files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return True


def setup_text(plan: DockerPlan, label: str) -> str | None:
    if not plan.setup:
        return None
    lines = [f"# Replayed from the RUN steps of {label}, as the task's user, without network.", "set -e"]
    variables = {**plan.args, **plan.env}  # a RUN step sees the build arguments and the ENV, ENV winning
    lines += [f"export {key}={shlex.quote(value)}" for key, value in sorted(variables.items()) if re.match(r"^\w+$", key)]
    lines += [f"( {step}\n)" if "\n" in step else f"( {step} )" for step in plan.setup]
    return "\n".join(lines) + "\n"



def image_spec(plan: DockerPlan, needs_docker: list[str], docker_image: str | None = None, *, built: bool = False,
               build_timeout_s: float | None = None) -> ImageSpec:
    """The task's image as the Task records it: the plan's bases, ENV and build context, and why bwrap cannot stand in.

    ``built``: a whole-machine bwrap sandbox builds the Dockerfile by running it, rather than replaying the plan.
    """
    return ImageSpec(
        docker_image=docker_image,
        build_context=plan.dockerfile.parent if plan.dockerfile is not None else None,
        base_images=tuple(plan.bases),
        env=tuple(plan.env.items()),
        needs_docker=tuple(needs_docker),
        dockerfile=plan.dockerfile if built else None,
        build_timeout_s=build_timeout_s,
        planned=not plan.blockers,
    )
