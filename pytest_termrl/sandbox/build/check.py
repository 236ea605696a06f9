"""What can be told of a Dockerfile before building it: whether the builder can build it here, and the image's USER and WORKDIR.

Read by the importers when a task is loaded. Only real blockers are named: a base image the
host cannot stand in for (:mod:`.bases`), a download (``ADD`` of a URL, a remote build
context), ``COPY --from`` an image that is not a stage, a ``RUN --mount`` the builder does not
provide. What a step needs that the host lacks is found when the step runs, and named there.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ...standins.inside import tools
from ...tasks.placement import numeric_id_problem
from .bases import stand_in
from .context import is_remote
from .parser import Instruction, from_parts, parse
from .shell_words import expand, expand_words


PLATFORM_ARGS = {"TARGETPLATFORM": "linux/amd64", "TARGETOS": "linux", "TARGETARCH": "amd64", "TARGETVARIANT": "",
                 "BUILDPLATFORM": "linux/amd64", "BUILDOS": "linux", "BUILDARCH": "amd64", "BUILDVARIANT": ""}
"""BuildKit's automatic platform arguments (an amd64 Linux host)."""
IGNORED_RUN_MOUNTS = ("cache", "tmpfs")
"""``RUN --mount`` types a step runs without (a cache folder or a tmpfs changes no result)."""


def stood_in_download(url: str) -> bool:
    """Whether ``ADD url`` is one of the installers the offline stand-ins' table meets (rustup's script, Go's tarball...)."""
    return tools.download_row(url) is not None


@dataclass(frozen=True)
class Buildable:
    """A Dockerfile as the builder will take it."""

    blockers: tuple[str, ...]
    """Why it cannot be built here (empty: it can, unless a step fails)."""
    bases: tuple[str, ...]
    """Every external image its stages start FROM."""
    user: str
    """The final stage's USER ('' when it sets none: root)."""
    workdir: str | None
    """The final stage's WORKDIR (None when it sets none)."""


def _try(function, *args, default):
    try:
        return function(*args)
    except ValueError:
        return default


def read_buildable(dockerfile: Path, target: str | None = None) -> Buildable:
    """The blockers, bases, USER and WORKDIR of ``dockerfile`` (raises TaskFormatError naming a malformed line)."""
    parsed = parse(dockerfile.read_text(encoding="utf-8", errors="replace"), str(dockerfile))
    global_args = dict(PLATFORM_ARGS)
    stages: list[tuple[str | None, list[Instruction]]] = []
    for ins in parsed.instructions:
        if ins.keyword == "FROM":
            stages.append((None, [ins]))
        elif stages:
            stages[-1][1].append(ins)
        elif ins.keyword == "ARG":
            for word in _try(expand_words, ins.args, global_args, default=[]):
                name, _, value = word.partition("=")
                global_args[name] = value
    blockers: list[str] = []
    bases: list[str] = []
    names: dict[str, int] = {}
    users: list[str] = []
    workdirs: list[str | None] = []
    for index, (_, instructions) in enumerate(stages):
        image, name = from_parts(instructions[0])
        image = _try(expand, image, global_args, default=image)
        parent = names.get(image.lower())
        user, workdir = (users[parent], workdirs[parent]) if parent is not None else ("", None)
        if parent is None:
            bases.append(image)
            if stand_in(image) is None:
                blockers.append(f"{instructions[0].where()}: FROM {image} (a base image the host cannot stand in for)")
        if name:
            names[name] = index
        scope: dict[str, str] = {}
        for ins in instructions[1:]:
            keyword = ins.keyword
            if keyword in ("ARG", "ENV"):
                for word in _try(expand_words, ins.args, scope, default=[]):
                    key, eq, value = word.partition("=")
                    scope[key] = value if eq else global_args.get(key, scope.get(key, ""))
            elif keyword == "USER":
                user = _try(expand, ins.args.strip(), scope, default=ins.args.strip())
                unmapped = numeric_id_problem(user)
                if unmapped is not None:
                    blockers.append(f"{ins.where()}: USER {user} ({unmapped})")
            elif keyword == "WORKDIR":
                path = _try(expand, ins.args.strip(), scope, default=ins.args.strip())
                workdir = os.path.normpath(path if path.startswith("/") else str(PurePosixPath(workdir or "/") / path))
            elif keyword in ("COPY", "ADD"):
                source = ins.flag("from")
                if source is not None:
                    ref = _try(expand, source, scope, default=source).lower()
                    if ref not in names and not (ref.isdigit() and int(ref) < index):
                        blockers.append(f"{ins.where()}: {keyword} --from={source} (an image, not a stage of this Dockerfile: "
                                        "it would be pulled)")
                words = _try(expand_words, ins.args, scope, default=ins.args.split())
                for word in words[:-1]:
                    if is_remote(word) and not (keyword == "ADD" and stood_in_download(word)):
                        blockers.append(f"{ins.where()}: {keyword} {word} (a download over the network)")
            elif keyword == "RUN":
                for flag in ins.flags:
                    if flag.startswith("--mount"):
                        kind = re.search(r"type=(\w+)", flag)
                        if (kind.group(1) if kind else "bind") not in IGNORED_RUN_MOUNTS:
                            blockers.append(f"{ins.where()}: RUN {flag} (a mount the builder does not provide)")
        users.append(user)
        workdirs.append(workdir)
    if not stages:
        blockers.append(f"{dockerfile}: no FROM line")
        return Buildable(tuple(blockers), (), "", None)
    last = names.get(target.lower(), len(stages) - 1) if target else len(stages) - 1
    return Buildable(tuple(blockers), tuple(bases), users[last], workdirs[last])
