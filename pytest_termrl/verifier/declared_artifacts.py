"""Harbor's declared ``artifacts`` on the host copy of the home: kept for the run directory, and all a separate verifier sees.

Harbor copies each path of a task's top-level ``artifacts`` out of the agent's environment
when the agent ends; with ``[verifier] environment_mode = "separate"`` they are the only
files of it that the verifier's own environment receives. Here both happen on the snapshot
of the home, before the grader runs: the files are read (regular files, no link followed on
the way, capped as the grader's own artifacts are) and, for a separate verifier, everything
else of the workdir is removed from the copy it grades.
"""

from __future__ import annotations

import base64
import os
import shutil
import stat
from pathlib import Path, PurePosixPath
from typing import Callable

from ..tasks.model import Task
from .inside.script_runner import ARTIFACT_BYTES, collect_artifacts, read_capped

PREFIX = "declared"
"""Declared artifacts sit under this folder of the episode's artifacts, at their absolute path (declared/app/out.txt)."""


def _relative(task: Task, source: str) -> str | None:
    """The artifact's path relative to the workdir ('' for the workdir itself), None outside it."""
    path, root = PurePosixPath(source), PurePosixPath(task.workdir)
    if path == root:
        return ""
    return path.relative_to(root).as_posix() if root in path.parents else None


def _link_on_the_way(home: Path, rel: str) -> str | None:
    """The first component of ``rel`` under ``home`` that is a link (a copy must never follow one)."""
    current = home
    for part in PurePosixPath(rel).parts:
        current = current / part
        if current.is_symlink():
            return str(current.relative_to(home))
    return None


def collect(home: Path, task: Task) -> tuple[dict[str, str], list[str]]:
    """({'declared/<abs path>': base64}, [left out and why]) of the task's declared artifacts in the home's copy."""
    kept: dict[str, str] = {}
    left_out: list[str] = []
    for source in task.artifacts:
        rel = _relative(task, source)
        key = f"{PREFIX}{source}"
        if rel is None:
            left_out.append(f"{source}: outside the workdir {task.workdir}")
            continue
        path = home / rel if rel else home
        link = _link_on_the_way(home, rel) if rel else None
        if link is not None:
            left_out.append(f"{source}: a link on the way ({link}), not followed")
        elif not os.path.lexists(path):
            left_out.append(f"{source}: not there when the agent ended")
        elif path.is_dir():
            files, skipped = collect_artifacts(str(path))
            kept.update({f"{key}/{name}": data for name, data in files.items()})
            left_out += [f"{source}/{why}" for why in skipped]
        else:
            data, why = read_capped(str(path), ARTIFACT_BYTES)
            if data is None:
                left_out.append(f"{source}: {why}")
            else:
                kept[key] = base64.b64encode(data).decode("ascii")
    return kept, left_out[:50]


def keep_only_artifacts(home: Path, task: Task) -> list[str]:
    """Remove from the home's copy all but the declared artifacts (a separate verifier's view): the paths removed."""
    return prune_to(home, {rel for rel in (_relative(task, s) for s in task.artifacts) if rel is not None})


def prune_to(top: Path, keep: set[str], folder_kept: Callable[[Path], None] = lambda _: None) -> list[str]:
    """Remove below ``top`` all but ``keep`` (paths relative to it; '' or '.' keeps all) and the real folders that lead
    there, never following a link: the paths removed. ``folder_kept`` sees ``top`` and each folder kept on the way."""
    if keep & {"", "."}:
        return []
    ancestors = {str(parent) for rel in keep for parent in PurePosixPath(rel).parents if str(parent) != "."}
    removed: list[str] = []

    def prune(folder: Path, rel_dir: str) -> None:
        for entry in sorted(os.listdir(folder)):
            rel = f"{rel_dir}/{entry}" if rel_dir else entry
            path = folder / entry
            if rel in keep:
                continue
            is_dir = stat.S_ISDIR(os.lstat(path).st_mode)
            if rel in ancestors and is_dir:
                folder_kept(path)
                prune(path, rel)
                continue
            if is_dir:
                shutil.rmtree(path)
            else:
                path.unlink()
            removed.append(rel)

    folder_kept(top)
    prune(top, "")
    return removed
