"""The offline installer stand-ins of the agent's sandbox: a read-only folder of shims first on its PATH, and their log.

A task's setup script, the agent and a Dockerfile's RUN steps meet ``pip``, ``pip3``, ``uv``, ``uvx``,
``apt-get``, ``apt``, ``curl``, ``wget`` and ``add-apt-repository`` (for toolchain installers:
its table of substitutions) as the stand-ins of
:mod:`pytest_termrl.standins.inside.tools`, run by the sandbox's own ``python3``: there is no
network, so an install of what the sandbox already has succeeds with one line, and one of
what it lacks fails with one line naming the package. The folder holding the shims and a
copy of standins.py is built once per content in the backend's work root and mounted
read-only at :data:`SHIMS_INSIDE`; an engine on another machine, which cannot bind this
machine's folders, gets the same files copied in, owned by root (:func:`shims_archive`).

Each stand-in appends what it did to :data:`LOG_NAME` in the shell's output folder. The
agent's user can write there, so the list read back (:func:`read_log`) is informational,
never a verdict.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import secrets
import shutil
import tarfile
from pathlib import Path
from typing import Protocol

from .layout import AGENT_ENV, IO_INSIDE
from .output import REPLACED_OUTPUT
from ..standins.inside import tools
from .tarstream import parent_dirs_tar

SHIMS_INSIDE = "/opt/termrl/standins"
BIN_INSIDE = f"{SHIMS_INSIDE}/bin"
LOG_NAME = "standins.log"
LOG_INSIDE = f"{IO_INSIDE}/{LOG_NAME}"
TOOLS = tools.TOOLS
AGENT_PATH = f"{BIN_INSIDE}:{AGENT_ENV['PATH']}"
"""The agent's PATH: the shims first, then the system's."""
MAX_LINES = 200
MAX_LOG_CHARS = 64 * 1024

_SOURCE = Path(tools.__file__)

_SHIM = """#!/bin/sh
# {tool}: an offline stand-in (this sandbox has no network); it checks what is already here.
for __py in python3 /usr/bin/python3; do
  if command -v "$__py" >/dev/null 2>&1; then
    exec "$__py" {shims}/standins.py --sandbox=agent --shims={bin} --log={log} {tool} "$@"
  fi
done
echo "termrl offline stand-in: {tool}: there is no python3 here to check what is installed, and no network to fetch anything" >&2
exit 1
"""


class _OutputFiles(Protocol):
    def read_output(self, name: str, cap: int) -> tuple[str, bool]: ...


@functools.lru_cache(maxsize=1)
def _contents() -> dict[str, tuple[str, int]]:
    """Relative path -> (text, mode) of the folder mounted at SHIMS_INSIDE."""
    files = {"standins.py": (_SOURCE.read_text(), 0o644)}
    for tool in TOOLS:
        files[f"bin/{tool}"] = (_SHIM.format(tool=tool, shims=SHIMS_INSIDE, bin=BIN_INSIDE, log=LOG_INSIDE), 0o755)
    return files


@functools.lru_cache(maxsize=1)
def _digest() -> str:
    return hashlib.sha256(repr(sorted(_contents().items())).encode()).hexdigest()[:16]


def shim_folder(workroot: Path) -> Path:
    """The host folder of shims for this version of the stand-ins, built once (atomically) in the work root.

    Read and hashed once a process: every agent's shell start asks for it.
    """
    files = _contents()
    folder = workroot / f"standins-{_digest()}"
    if folder.is_dir():
        return folder
    staging = workroot / f"standins-tmp-{os.getpid()}-{secrets.token_hex(4)}"
    (staging / "bin").mkdir(parents=True)
    for rel, (text, mode) in files.items():
        path = staging / rel
        path.write_text(text)
        os.chmod(path, mode)
    for path in (staging, staging / "bin"):
        os.chmod(path, 0o755)
    try:
        os.rename(staging, folder)
    except OSError:  # another process built it first
        shutil.rmtree(staging, ignore_errors=True)
        if not folder.is_dir():
            raise
    return folder


@functools.lru_cache(maxsize=1)
def shims_archive() -> bytes:
    """The shims' folder's contents as a tar to extract at :data:`SHIMS_INSIDE` (a volume there):
    root-owned, so the agent can read and run the shims but not change them (for a container
    whose engine cannot bind a host folder)."""
    members = dict(sorted(_contents().items()))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for info in parent_dirs_tar(members):
            tar.addfile(info)
        for name, (text, mode) in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def bwrap_args(workroot: Path) -> list[str]:
    """bwrap arguments for the agent's shell: the shims mounted read-only and first on PATH."""
    folder = shim_folder(workroot)
    return ["--perms", "0755", "--dir", str(Path(SHIMS_INSIDE).parent), "--ro-bind", str(folder), SHIMS_INSIDE,
            "--setenv", "PATH", AGENT_PATH]


def read_log(files: _OutputFiles) -> list[str]:
    """The stand-ins' log lines from the shell's output folder (a link, FIFO or folder there reads as none)."""
    text, _ = files.read_output(LOG_NAME, MAX_LOG_CHARS)
    if text == REPLACED_OUTPUT:
        return []
    return [line[:300] for line in text.splitlines() if line.strip()][:MAX_LINES]
