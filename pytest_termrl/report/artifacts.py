"""A grader's artifacts, kept in the run directory as Harbor keeps them in its trial directory.

The verifier signs what the grader left in ``/logs/artifacts`` with its result (base64, capped
by the runner), the record carries it from the worker to the controller, and here the files
are written under ``RUN_DIR/artifacts/<agent>/<episode id>/`` and the record keeps only their
manifest (size and path), so the episode log stays small.
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path, PurePosixPath

ARTIFACTS_DIR = "artifacts"
_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]+")


def _folder_name(text: str) -> str:
    name = _UNSAFE.sub("_", text).strip("._") or "_"
    return name[:120]


def keep_artifacts(record: dict, run_dir: Path) -> list[Path]:
    """Write the record's artifacts under the run directory, replace them by their manifest; return the paths written."""
    verdict = record.get("verdict")
    if not isinstance(verdict, dict):
        return []
    files = verdict.get("artifacts")
    if not isinstance(files, dict) or not files:
        return []
    folder = run_dir / ARTIFACTS_DIR / _folder_name(str(record.get("agent") or "agent")) / _folder_name(str(record.get("episode_id")))
    manifest, written = {}, []
    for rel, content in files.items():
        if not isinstance(content, str):
            manifest[rel] = content  # already a manifest entry (a record read back from a log)
            continue
        parts = PurePosixPath(rel).parts
        if not parts or PurePosixPath(rel).is_absolute() or any(p in ("..", ".") for p in parts):
            manifest[rel] = {"error": "not a relative path inside the artifacts folder"}
            continue
        try:
            data = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            manifest[rel] = {"error": "not base64"}
            continue
        target = folder.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written.append(target)
        manifest[rel] = {"bytes": len(data), "path": target.relative_to(run_dir).as_posix()}
    verdict["artifacts"] = manifest
    return written
