"""What ``COPY`` and ``ADD`` hand the sandbox that makes their layer: staged files, and the commands that place them.

The files are staged on the host in a tree laid out from the image's root, owners as ids
inside; the step unpacks that tree's tar inside as root, so the overlay makes the layer as a
step would: folders the image has keep their owners and modes (``--no-overwrite-dir``), links
in the destination are followed inside the image (``--keep-directory-symlink``). An ``ADD`` of
a URL runs the stand-ins' ``curl`` inside; ``COPY --from`` a stage reads that stage's files
with ``tar`` inside a sandbox over its layers.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

from ...errors import SandboxError
from .ownership import Owner, SymbolicMode
from .step_run import STAGE_INSIDE

STAGED_TAR = "layer.tar"
UNPACK_ARGV = ["tar", "-C", "/", "-xpf", f"{STAGE_INSIDE}/{STAGED_TAR}", "--numeric-owner", "--same-owner",
               "--no-overwrite-dir", "--keep-directory-symlink"]
"""The step that places staged files: run as root inside, over the image so far."""
FROM_TAR = "/run/termrl-out/from.tar"
"""Where a ``COPY --from`` step's reading of the source stage is written (its output folder)."""
DOWNLOAD_MODE = 0o600
"""The mode the engine gives a file ``ADD`` downloads."""


def write_inline(tree: Path, target: str, data: bytes, owner: Owner | None, mode: int | SymbolicMode | None) -> None:
    """A heredoc source (``COPY <<EOF /path``) staged at its absolute ``target``: 0644 unless ``--chmod``."""
    path = tree / target.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.chmod(path, mode.apply(0o644, False) if isinstance(mode, SymbolicMode) else mode if mode is not None else 0o644)
    if owner is not None:
        os.chown(path, owner.uid, owner.gid)


def stage_tar(tree: Path, folder: Path, where: str) -> None:
    """The staged tree as the tar :data:`UNPACK_ARGV` unpacks, in ``folder`` (bound read-only at the stage folder inside)."""
    folder.mkdir(mode=0o755)
    made = subprocess.run(["tar", "-C", str(tree), "--numeric-owner", "-cpf", str(folder / STAGED_TAR), "."],
                          capture_output=True, text=True)
    if made.returncode != 0:
        raise SandboxError(f"{where}: staging the files failed: {made.stderr.strip()[:300]}")
    os.chmod(folder / STAGED_TAR, 0o644)


def download_argv(url: str, target: str, mode: int | SymbolicMode | None, owner: Owner | None) -> list[str]:
    """The step of ``ADD URL target``: the stand-in's file, ``target`` a folder when it ends in '/' (named from the URL)."""
    chmod = f"{mode:o}" if isinstance(mode, int) else str(mode) if mode is not None else f"{DOWNLOAD_MODE:o}"
    uid, gid = (owner.uid, owner.gid) if owner is not None else (0, 0)
    script = ('set -e; d="$1"; case "$d" in */) d="$d${2##*/}";; esac; mkdir -p "$(dirname "$d")"; '
              'curl -fsSL -o "$d" "$2"; chmod "$3" "$d"; chown "$4" "$d"')
    return ["/bin/sh", "-c", script, "add", target, url, chmod, f"{uid}:{gid}"]


def from_stage_argv(sources: list[str]) -> list[str]:
    """The step that reads ``COPY --from`` sources (relative to the source stage's root, wildcards left to its shell)."""
    patterns = " ".join(_glob_word(s.lstrip("/") or ".") for s in sources)
    return ["/bin/sh", "-c", f"cd / && exec tar --numeric-owner -cpf {FROM_TAR} -- {patterns}"]


def unpack_from(tar: Path, out: Path, where: str) -> None:
    """A ``COPY --from`` reading unpacked on the host, owners as ids inside, to be read as a build context."""
    out.mkdir(mode=0o755)
    made = subprocess.run(["tar", "-C", str(out), "--numeric-owner", "--same-owner", "-xpf", str(tar)], capture_output=True, text=True)
    if made.returncode != 0:
        raise SandboxError(f"{where}: reading the files of --from failed: {made.stderr.strip()[:300]}")


def _glob_word(path: str) -> str:
    """A source path for the shell inside: its wildcards left to the shell, everything else quoted."""
    return "".join(c if c in "*?[]" else shlex.quote(c) if not re.match(r"[\w./@+,-]", c) else c for c in path)
