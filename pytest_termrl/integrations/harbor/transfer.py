"""Files and folders in and out of a live sandbox as tar streams through ``exec``: bytes, modes and links kept.

Harbor moves the task's tests, an oracle's solution, the agent's logs and the verifier's
reward through its environment's upload and download calls. One tar stream per call
carries every file with its mode, empty folders and symbolic links (never followed on
the host side: extraction refuses links and paths that leave the target folder).
"""

from __future__ import annotations

import io
import shlex
import tarfile
from pathlib import Path

from ...sandbox.base import ExecResult
from ..session import MachineSession

TRANSFER_CAP_BYTES = 2 * 1024**3
"""The largest archive moved in one call; a larger one fails loudly rather than arriving cut."""
TRANSFER_TIMEOUT_S = 600.0


class TransferError(RuntimeError):
    """A transfer that did not complete, with the machine's own words."""


def _run(session: MachineSession, script: str, *args: str, stdin: bytes = b"") -> ExecResult:
    done = session.exec(["sh", "-c", script, "transfer", *args], user="root", cwd="/", stdin=stdin,
                        timeout_s=TRANSFER_TIMEOUT_S, output_cap_bytes=TRANSFER_CAP_BYTES)
    if done.truncated:
        raise TransferError(f"{args[0] if args else script}: larger than {TRANSFER_CAP_BYTES} bytes")
    return done


def _failed(what: str, done: ExecResult) -> TransferError:
    words = done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
    return TransferError(f"{what}: {words}")


def pack(source: Path) -> bytes:
    """``source`` (a folder) as an uncompressed tar rooted at ``.``, links kept as links."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(source, arcname=".")
    return buffer.getvalue()


def upload_dir(session: MachineSession, source: Path, target: str) -> None:
    source = Path(source)
    if not source.is_dir():
        raise FileNotFoundError(f"no folder {source}")
    done = _run(session, 'mkdir -p -- "$1" && tar -xf - -C "$1" --no-same-owner', target, stdin=pack(source))
    if done.returncode != 0:
        raise _failed(f"upload of {source} to {target}", done)


def upload_file(session: MachineSession, source: Path, target: str) -> None:
    source = Path(source)
    data = source.read_bytes()
    mode = f"{source.stat().st_mode & 0o7777:o}"
    script = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1" && chmod "$2" -- "$1"'
    done = _run(session, script, target, mode, stdin=data)
    if done.returncode != 0:
        raise _failed(f"upload of {source} to {target}", done)


def download_dir(session: MachineSession, source: str, target: Path) -> None:
    """The folder's contents into ``target`` (made if missing; files there are overwritten)."""
    done = _run(session, 'cd -- "$1" && tar -cf - .', source)
    if done.returncode != 0:
        raise _failed(f"download of {source}", done)
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(done.stdout), mode="r:") as tar:
        tar.extractall(target, filter="data")


def download_file(session: MachineSession, source: str, target: Path) -> None:
    done = _run(session, 'cat -- "$1" && stat -c %a -- "$1" >&2', source)
    if done.returncode != 0:
        raise _failed(f"download of {source}", done)
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(done.stdout)
    mode = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["644"]
    try:
        target.chmod(int(mode[0], 8) & 0o777)
    except ValueError:
        pass


def quote(path: str) -> str:
    return shlex.quote(path)
