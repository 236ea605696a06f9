"""A stage being built, and the instructions that change only its configuration (no layer), as the engine reads them.

``ARG``, ``ENV`` and ``LABEL`` split their words first and expand each after, as BuildKit's
``parseNameVal`` does (a value from a variable holding spaces stays one value; several
pairs in one ``ENV`` all see the values from before it); ``USER``, ``STOPSIGNAL`` and
``WORKDIR`` expand their one word; ``SHELL`` takes the JSON form only; ``CMD`` and
``ENTRYPOINT`` keep their exec form, or the shell form run by ``SHELL``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ...errors import TaskFormatError
from .arguments import split_words
from .parser import Dockerfile, Instruction
from .shell_words import expand, expand_words

CONFIG_KEYWORDS = frozenset({"ARG", "ENV", "LABEL", "USER", "SHELL", "CMD", "ENTRYPOINT", "EXPOSE", "VOLUME", "STOPSIGNAL",
                             "HEALTHCHECK", "ONBUILD", "MAINTAINER"})
"""The instructions :func:`configure` handles: none of them makes a layer."""
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class Stage:
    """One stage's state while it is built: its layers so far and its configuration."""

    index: int
    name: str | None
    base: str
    stand_in: str
    parent: str
    """The key its next layer builds on: its top layer's, or its base's."""
    layers: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    args: dict[str, str] = field(default_factory=dict)
    user: str = ""
    workdir: str = "/"
    shell: tuple[str, ...] = ("/bin/sh", "-c")
    cmd: tuple[str, ...] | None = None
    entrypoint: tuple[str, ...] | None = None
    labels: dict[str, str] = field(default_factory=dict)
    exposed: list[str] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)
    stopsignal: str | None = None
    notes: list[str] = field(default_factory=list)

    def scope(self) -> dict[str, str]:
        """What variables in an instruction see: the stage's ARGs, its ENV winning."""
        return {**self.args, **self.env}

    def following(self, index: int, name: str | None) -> "Stage":
        """A stage ``FROM`` this one: its layers and configuration, none of its ARGs."""
        return Stage(index, name, self.base, self.stand_in, self.parent, list(self.layers), dict(self.env), {}, self.user,
                     self.workdir, self.shell, self.cmd, self.entrypoint, dict(self.labels), list(self.exposed),
                     list(self.volumes), self.stopsignal, list(self.notes))


def expand_one(ins: Instruction, text: str, scope: dict[str, str]) -> str:
    """``text`` expanded as one word; a bad substitution names the instruction's line."""
    try:
        return expand(text, scope)
    except ValueError as exc:
        raise TaskFormatError(ins.where(), ins.keyword, str(exc)) from None


def expand_all(ins: Instruction, scope: dict[str, str]) -> list[str]:
    """The instruction's arguments as words, each expanded (COPY, EXPOSE, VOLUME)."""
    try:
        return expand_words(ins.args, scope)
    except ValueError as exc:
        raise TaskFormatError(ins.where(), ins.keyword, str(exc)) from None


def name_values(ins: Instruction, scope: dict[str, str]) -> list[tuple[str, str | None]]:
    """``NAME=value`` words (or the old ``NAME value...`` form), split first, each expanded with the scope before the instruction."""
    try:
        raw = split_words(ins.args)
    except ValueError as exc:
        raise TaskFormatError(ins.where(), ins.keyword, str(exc)) from None
    if not raw:
        raise TaskFormatError(ins.where(), ins.keyword, "expected NAME=value")
    if ins.keyword != "ARG" and "=" not in raw[0]:
        parts = ins.args.strip().split(None, 1)
        if len(parts) < 2:
            raise TaskFormatError(ins.where(), ins.keyword, f"expected NAME=value, or NAME value (got {ins.args.strip()!r})")
        return [(parts[0], expand_one(ins, parts[1], scope))]
    pairs: list[tuple[str, str | None]] = []
    for word in raw:
        name, eq, value = word.partition("=")
        if not name or (ins.keyword == "ARG" and not _NAME.match(name)) or (ins.keyword != "ARG" and not eq):
            raise TaskFormatError(ins.where(), ins.keyword, f"expected NAME=value, got {word!r}")
        pairs.append((expand_one(ins, name, scope), expand_one(ins, value, scope) if eq else None))
    return pairs


def declare_args(ins: Instruction, scope: dict[str, str], declared: dict[str, str], build_args: dict[str, str],
                 outer: dict[str, str]) -> None:
    """``ARG`` into ``declared``: a build argument given wins, else the default written, else the value ``outer`` holds."""
    for name, value in name_values(ins, scope):
        declared[name] = build_args[name] if name in build_args else value if value is not None else outer.get(name, "")


def configure(stage: Stage, ins: Instruction, build_args: dict[str, str], global_args: dict[str, str]) -> None:
    """Apply one of :data:`CONFIG_KEYWORDS` to the stage."""
    keyword, scope = ins.keyword, stage.scope()
    if keyword == "ARG":
        declare_args(ins, scope, stage.args, build_args, global_args)
    elif keyword == "ENV":
        stage.env.update((key, value or "") for key, value in name_values(ins, scope))
    elif keyword == "LABEL":
        stage.labels.update((key, value or "") for key, value in name_values(ins, scope))
    elif keyword == "USER":
        stage.user = expand_one(ins, ins.args.strip(), scope)
        if not stage.user:
            raise TaskFormatError(ins.where(), "USER", "expected a user")
    elif keyword == "SHELL":
        if not ins.json:
            raise TaskFormatError(ins.where(), "SHELL", 'expected the JSON form, such as SHELL ["/bin/bash", "-c"]')
        stage.shell = tuple(ins.json)
    elif keyword in ("CMD", "ENTRYPOINT"):
        argv = tuple(ins.json) if ins.json is not None else (*stage.shell, ins.args)
        if keyword == "CMD":
            stage.cmd = argv
        else:
            stage.entrypoint = argv
            stage.cmd = None  # as the engine does: a new ENTRYPOINT clears an inherited CMD
    elif keyword == "EXPOSE":
        stage.exposed += [w if "/" in w else f"{w}/tcp" for w in expand_all(ins, scope)]
    elif keyword == "VOLUME":
        stage.volumes += list(ins.json) if ins.json is not None else expand_all(ins, scope)
    elif keyword == "STOPSIGNAL":
        stage.stopsignal = expand_one(ins, ins.args.strip(), scope)
    else:  # HEALTHCHECK, ONBUILD, MAINTAINER
        stage.notes.append(f"{ins.where()}: {keyword} recorded, not run by the builder")


def next_workdir(stage: Stage, ins: Instruction) -> str:
    """The folder ``WORKDIR`` names, relative ones from the stage's current workdir."""
    path = expand_one(ins, ins.args.strip(), stage.scope())
    if not path:
        raise TaskFormatError(ins.where(), "WORKDIR", "expected a folder")
    return os.path.normpath(path if path.startswith("/") else str(PurePosixPath(stage.workdir) / path))


def split_stages(parsed: Dockerfile) -> tuple[list[Instruction], list[list[Instruction]]]:
    """(the global ARGs before the first FROM, each stage's instructions starting with its FROM)."""
    head: list[Instruction] = []
    stages: list[list[Instruction]] = []
    for instruction in parsed.instructions:
        if instruction.keyword == "FROM":
            stages.append([instruction])
        elif stages:
            stages[-1].append(instruction)
        elif instruction.keyword == "ARG":
            head.append(instruction)
        else:
            raise TaskFormatError(instruction.where(), instruction.keyword, "expected FROM before any instruction but ARG")
    if not stages:
        raise TaskFormatError(parsed.source, "FROM", "expected a FROM line")
    return head, stages


def needed_stages(stages: list[list[Instruction]], plans: list[tuple[str, str | None]], names: dict[str, int], last: int,
                  global_args: dict[str, str]) -> set[int]:
    """The stages the target (``last``) depends on, itself included: FROM a stage, COPY --from a stage (by name or index)."""
    needed: set[int] = set()
    todo = [last]
    while todo:
        index = todo.pop()
        if index in needed:
            continue
        needed.add(index)
        image = plans[index][0].lower()
        if image in names and names[image] < index:
            todo.append(names[image])
        for instruction in stages[index][1:]:
            source = instruction.flag("from") if instruction.keyword in ("COPY", "ADD") else None
            if source is not None:
                ref = expand_one(instruction, source, global_args).lower()
                if ref in names:
                    todo.append(names[ref])
                elif ref.isdigit() and int(ref) < index:
                    todo.append(int(ref))
    return needed
