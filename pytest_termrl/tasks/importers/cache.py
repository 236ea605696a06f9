"""The import cache: content-addressed folders the importers write a task's derived files into.

Nothing here converts files by hand: each importer reads a task in its own format and
writes what the Task model needs but the format lacks (a reference wrapper, an environment
folder assembled from a Dockerfile's COPY lines, a setup script from its RUN lines) into a
cache folder keyed by the task's content, never into the task's own directory.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..files import MAX_FILE_BYTES, read_bytes, task_files
from .dockerfile import DockerPlan, setup_text, write_environment

IMPORTER_VERSION = "3"
"""Part of every cache key: bump it when what the importers write changes."""


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
    for path in task_files(root):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(read_bytes(path, MAX_FILE_BYTES))
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


@dataclass(frozen=True)
class PlannedFiles:
    """The native task files an importer wrote for a planned image, in its cache folder."""

    folder: Path
    environment_dir: Path | None
    """environment/: the files the Dockerfile copies into the workdir (None when it copies none)."""
    setup_script: Path | None
    """setup.sh: the RUN steps replayed as the agent's user (None when none are kept)."""
    solution_script: Path | None
    """solution.sh: the reference wrapper (None when the task has no reference)."""


def materialise_plan(kind: str, name: str, task_dir: Path, plan: DockerPlan, setup_label: str, reference: str | None) -> PlannedFiles:
    """Write a plan's environment and setup, and the reference wrapper, into the cache folder of ``task_dir``'s content."""

    def build(folder: Path) -> None:
        write_environment(plan, folder / "environment")
        setup = setup_text(plan, setup_label)
        if setup:
            (folder / "setup.sh").write_text(setup)
        if reference is not None:
            (folder / "solution.sh").write_text(reference)

    folder = materialise(kind, name, digest_tree(task_dir), build)
    env_dir = folder / "environment"
    return PlannedFiles(
        folder=folder,
        environment_dir=env_dir if env_dir.is_dir() else None,
        setup_script=folder / "setup.sh" if (folder / "setup.sh").is_file() else None,
        solution_script=folder / "solution.sh" if reference is not None else None,
    )
