"""Where a run writes: one run holds a run directory at a time, and every output path is checked before the first episode.

A run claims its run directory with an advisory ``fcntl.flock`` on ``<run dir>/.lock``
(and on ``.<name>.lock`` beside an episode log kept elsewhere), writing its pid and command
line there; a second run is refused with the holder's pid and command line. The lock dies
with its process, so a killed run never leaves a stale claim. Each output path is probed
by writing a byte beside it, so a read-only, immutable or full file system is named before
any episode plays. Nothing here imports pytest.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

from .episodes import describe_os_error

LOCK_NAME = ".lock"


class OutputError(Exception):
    """A run's output place is unusable (held by another run, unwritable); the message names the path and why."""


class RunLock:
    """An advisory lock on a lock file, held by this process until released (or it dies)."""

    def __init__(self, path: Path, subject: str, option: str) -> None:
        self.path = path
        self.subject = subject
        """What the lock guards, named in messages: 'the run directory /x'."""
        self.option = option
        """The option that gives this run another place."""
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise OutputError(f"cannot write {self.subject}: {describe_os_error(exc)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise OutputError(
                f"{self.subject} is in use by another run: {holder}; wait for it to end, or give this run another {self.option}"
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps({"pid": os.getpid(), "command": command_line()}) + "\n").encode(), 0)
            os.fsync(fd)
        except OSError as exc:
            os.close(fd)
            raise OutputError(f"cannot write {self.subject}: {describe_os_error(exc)}") from None
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)  # the file stays (unlinking would race a run opening it); the claim goes
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None


def _holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 65536, 0).decode("utf-8", "replace") or "{}")
    except (OSError, ValueError):
        info = {}
    if not isinstance(info, dict) or "pid" not in info:
        return "a run that has not yet written its pid"
    return f"pid {info['pid']} ({info.get('command', '?')})"


def command_line() -> str:
    """This process's command line, as ps shows it."""
    try:
        argv = Path("/proc/self/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        return shlex.join(a.decode("utf-8", "replace") for a in argv)
    except OSError:
        return shlex.join([sys.executable, *sys.argv])


def check_writable(path: Path, what: str) -> None:
    """Raise OutputError naming ``path`` and why, unless a file can be written there (created anew, or appended to)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the folder of the {what} {path}: {describe_os_error(exc)}") from None
    if path.is_dir():
        raise OutputError(f"cannot write the {what} {path}: it is a directory")
    try:
        if path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC))
        probe_folder(path.parent)
    except OSError as exc:
        raise OutputError(f"cannot write the {what} {path}: {describe_os_error(exc)}") from None


def probe_folder(folder: Path) -> None:
    """Create, write a byte to, sync and remove a file in ``folder``: raises the OSError a real write would meet."""
    fd, name = tempfile.mkstemp(prefix=".termrl-probe-", dir=folder)
    try:
        os.write(fd, b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
        os.unlink(name)


class RunClaim:
    """A run directory held by this run, with its output paths checked; ``release`` at the end of the run."""

    def __init__(self, run_dir: Path, outputs: list[tuple[str, Path]], log: Path | None) -> None:
        self.locks: list[RunLock] = []
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot create the run directory {run_dir}: {describe_os_error(exc)}") from None
        try:
            try:
                probe_folder(run_dir)
            except OSError as exc:
                raise OutputError(f"cannot write the run directory {run_dir}: {describe_os_error(exc)}") from None
            self._lock(RunLock(run_dir / LOCK_NAME, f"the run directory {run_dir}", "--termrl-run-dir"))
            for what, path in outputs:
                check_writable(path, what)
            if log is not None and os.path.abspath(log.parent) != os.path.abspath(run_dir):
                # A log kept outside the run directory is claimed too: two runs on one log double-count.
                self._lock(RunLock(log.parent / f".{log.name}.lock", f"the episode log {log}", "--termrl-episodes"))
        except OutputError:
            self.release()
            raise

    def _lock(self, lock: RunLock) -> None:
        lock.acquire()
        self.locks.append(lock)

    def release(self) -> None:
        for lock in reversed(self.locks):
            lock.release()
        self.locks.clear()


def write_whole(path: Path, text: str) -> None:
    """Write a file whole or not at all (a temporary file beside it, then a rename): a full disk leaves no half file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(name, path)
    except BaseException:
        if os.path.exists(name):
            os.unlink(name)
        raise
