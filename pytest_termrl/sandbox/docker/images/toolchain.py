"""Which toolchain variant of the base image a task needs on the docker backend, and what it is called.

A toolchain variant is the suite's base image plus the Debian packages of some named
toolchains, built by ``python -m pytest_termrl.sandbox.docker.images.base build --with cpp,golang``
(:func:`pytest_termrl.sandbox.docker.images.base.build_toolchain_image`) and tagged after them:
``termrl-base:1`` with ``cpp`` and ``golang`` is ``termrl-base:1-cpp-golang``.

==========  =========================================  =================================
name        Debian packages                            commands a grader may run
==========  =========================================  =================================
``cpp``     ``g++ make cmake`` (gcc comes with g++)    gcc, cc, g++, c++, make, cmake
``golang``  ``golang-go``                              go, gofmt
``java``    ``default-jdk-headless``                   javac, java
``rust``    ``rustc cargo``                            rustc, cargo
==========  =========================================  =================================

A task's toolchain commands are those its loader recorded in ``Task.requires``
(:mod:`pytest_termrl.tasks.importers.toolchains`): on docker the task runs in the variant
that brings all of them (:func:`toolchain_image_for`), and a command no variant brings, or
a variant the engine lacks, is refused by name with what to run or install.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....errors import SandboxError
from ....tasks.importers.toolchains import TOOLCHAINS

TOOLCHAIN_PACKAGES: dict[str, tuple[str, ...]] = {
    "cpp": ("g++", "make", "cmake"),
    "golang": ("golang-go",),
    "java": ("default-jdk-headless",),
    "rust": ("rustc", "cargo"),
}
"""Toolchain name -> the Debian packages its variant adds to the base image."""

COMMAND_TOOLCHAIN: dict[str, str] = {
    "gcc": "cpp", "cc": "cpp", "g++": "cpp", "c++": "cpp", "make": "cpp", "cmake": "cpp",
    "go": "golang", "gofmt": "golang",
    "javac": "java", "java": "java",
    "rustc": "rust", "cargo": "rust",
}
"""Toolchain command (:data:`.toolchains.TOOLCHAINS`) -> the variant that brings it."""

_TABLE = ", ".join(f"{name}: {' '.join(packages)}" for name, packages in sorted(TOOLCHAIN_PACKAGES.items()))

TOOLCHAINS_LABEL = "termrl.toolchains"
"""Label of a variant: its toolchain names, comma-separated and sorted."""


class ToolchainError(SandboxError):
    """A toolchain variant that cannot be named, or that a task needs and the engine lacks."""


def toolchain_names(names) -> tuple[str, ...]:
    """The names given (``"cpp,golang"`` or an iterable), checked against the table, sorted and unique."""
    if isinstance(names, str):
        names = names.split(",")
    found = sorted({name.strip().lower() for name in names if name.strip()})
    unknown = [name for name in found if name not in TOOLCHAIN_PACKAGES]
    if unknown or not found:
        raise ToolchainError(
            f"unknown toolchain {', '.join(unknown) or '(none given)'}: the names are {', '.join(sorted(TOOLCHAIN_PACKAGES))}"
        )
    return tuple(found)


def toolchain_packages(names) -> tuple[str, ...]:
    """The Debian packages of the named toolchains, in the table's order."""
    return tuple(package for name in toolchain_names(names) for package in TOOLCHAIN_PACKAGES[name])


def toolchain_tag(base_tag: str, names) -> str:
    """The variant's tag: the base image's tag with the toolchain names appended (``termrl-base:1-cpp``)."""
    return f"{base_tag}-{'-'.join(toolchain_names(names))}"


def ensure_command(names, base_tag: str, default_base: str) -> str:
    """The command that builds the variant when it is missing."""
    tag = "" if base_tag == default_base else f" --tag {base_tag}"
    return f"python -m pytest_termrl.sandbox.docker.images.base ensure --with {','.join(toolchain_names(names))}{tag}"


@dataclass(frozen=True)
class ToolchainNeed:
    """The toolchain commands a task runs, and the variant that brings them."""

    commands: tuple[str, ...]
    """The toolchain commands of ``Task.requires``, in its order."""
    names: tuple[str, ...]
    """The variants' names those commands need, sorted (empty: the base image will do)."""
    uncovered: tuple[str, ...]
    """Commands no variant brings (``node``, ``clang``...)."""


def toolchain_need(requires: tuple[str, ...]) -> ToolchainNeed:
    """What a task with these ``requires`` needs of a toolchain variant."""
    commands = tuple(command for command in requires if command in TOOLCHAINS)
    names = tuple(sorted({COMMAND_TOOLCHAIN[c] for c in commands if c in COMMAND_TOOLCHAIN}))
    return ToolchainNeed(commands, names, tuple(c for c in commands if c not in COMMAND_TOOLCHAIN))


def toolchain_image_for(requires: tuple[str, ...], base_tag: str, default_base: str, has_image, where: str) -> str | None:
    """The variant of ``base_tag`` a task with these ``requires`` runs in (None: it needs none).

    ``has_image(tag)`` says whether the engine holds a tag. Raises :class:`ToolchainError`
    naming the task (``where``), the commands, and the ``ensure`` command to run (or the
    Debian package of a command that no variant brings).
    """
    need = toolchain_need(requires)
    if need.uncovered:
        missing = ", ".join(f"`{c}` ({TOOLCHAINS[c].name}, Debian package {TOOLCHAINS[c].package})" for c in need.uncovered)
        raise ToolchainError(
            f"{where}: its grader runs {missing}, which no toolchain image of the docker backend brings "
            f"(those are {_TABLE}); "
            f"give the task a Dockerfile whose image installs it, or run it on bwrap on a machine that has it"
        )
    if not need.names:
        return None
    tag = toolchain_tag(base_tag, need.names)
    if not has_image(tag):
        raise ToolchainError(
            f"{where}: its grader runs {', '.join(f'`{c}`' for c in need.commands)}, which the docker backend brings "
            f"in the image {tag}, not in the engine; build it with `{ensure_command(need.names, base_tag, default_base)}`"
        )
    return tag
