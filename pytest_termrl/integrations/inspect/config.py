"""What a ``termrl`` sandbox spec names, resolved to something a session can open.

Inspect hands a provider its config as a string (``sandbox=("termrl", PATH)``), a model
(``TermrlConfig``), or nothing. A path is a task folder of any format this project reads
(its frozen contract applies when a suite holds it), the ``task.toml`` / ``task.yaml`` in
one, or a Dockerfile. Nothing gives the bare machine: a native-shaped task with no files,
its agent ``user`` (uid 1000) in ``/home/user``, as this project's own episodes run.
Compose files are refused by name: one machine per sample is what this sandbox is.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from ...tasks.model import Task
from ...tasks.suite import LoadedTask
from ..session import CONTRACTS, load_source

BARE_ID = "inspect-bare-machine"
TASK_FILES = ("task.toml", "task.yaml")
COMPOSE_SUFFIXES = (".yaml", ".yml")


class TermrlConfig(BaseModel, frozen=True):
    """A ``termrl`` sandbox spec as a model: ``SandboxEnvironmentSpec("termrl", TermrlConfig(...))``."""

    source: str | None = None
    """A task folder, its task.toml/task.yaml, or a Dockerfile; None: the bare machine."""
    backend: Literal["bwrap", "docker"] = "bwrap"
    user: str | None = None
    """Who ``exec`` runs as when no user is named (None: the task's user)."""


@dataclass(frozen=True)
class Resolved:
    """A config made concrete: what to open, on which backend, as whom."""

    source: Path | None
    backend: str
    user: str | None

    def load(self) -> LoadedTask:
        """The task to open (the bare machine when no source is named); raises TaskFormatError for a bad one.

        A task of a frozen suite is read once per state of its ``contracts.jsonl``: reading it means
        reading and checking the whole suite (80 ms for the core suite), and every sample of a suite
        run names one of its folders."""
        if self.source is None:
            return LoadedTask(bare_task(), None)
        contracts = self.source.parent / CONTRACTS
        if self.source.is_dir() and contracts.is_file():
            stat = contracts.stat()
            return _suite_task(self.source, (stat.st_mtime_ns, stat.st_size))
        return load_source(self.source)


@functools.lru_cache(maxsize=512)
def _suite_task(source: Path, contracts_stamp: tuple[int, int]) -> LoadedTask:
    return load_source(source)


def resolve(config: Any) -> Resolved:
    """Inspect's config (None, a path string, a :class:`TermrlConfig` or its dict) as a :class:`Resolved`."""
    if config is None or config == "":
        return Resolved(None, "bwrap", None)
    if isinstance(config, str):
        return Resolved(source_path(config), "bwrap", None)
    if isinstance(config, dict):
        config = TermrlConfig(**config)
    if isinstance(config, TermrlConfig):
        return Resolved(source_path(config.source) if config.source else None, config.backend, config.user)
    raise ValueError(f"a termrl sandbox takes a task folder, a Dockerfile or a TermrlConfig, not {type(config).__name__}")


def source_path(text: str) -> Path:
    """The path as given (relative to the folder Inspect runs the task from); a task file means its folder."""
    path = Path(text).expanduser()
    if path.name in TASK_FILES and path.is_file():
        path = path.parent
    if path.suffix in COMPOSE_SUFFIXES:
        raise ValueError(f"{text}: the termrl sandbox makes one whole machine per sample and reads no compose file; "
                         "name a task folder or a Dockerfile")
    if not path.exists():
        raise FileNotFoundError(f"{text}: no such task folder or Dockerfile")
    return path.resolve()


def bare_task() -> Task:
    """The bare machine: a native task with no files, instruction or grader (the host's system stands in for the image)."""
    return Task(id=BARE_ID, title="A bare termrl machine", instruction="", root=Path(__file__).resolve().parent)
