"""The verifier's one-shot process on bwrap, started ahead so a grading pays for its tests only.

A cold verifier run pays for a fresh sandbox, the harness's interpreter and pytest's import
before the first test (about 200 ms here). So the backend keeps one spare per process,
started for the shape of the last run (argv, workdir, fixed mounts, staged mount points,
limits): bubblewrap has made its namespaces and the runner has imported what it needs, then
blocks reading its key. A run of that shape moves the snapshot's entries into the spare's
empty home, copies each staged mount's content (the task's tests) into the spare's read-only
folder for it, and only then sends the key; the next spare starts right away. Nothing of the
agent's reaches a spare before its key, and no process of the agent's ever ran in it. So a
program served by a spare must read its key before it looks at its home, as the trusted
runners do; a cold run (no spare of its shape) starts its process only once the home is
filled, so any program finds the snapshot there.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import threading
import time
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..base import IsolatedRun, SandboxSettings, TrustedMount
from .mounts import parent_dirs
from ..hostfs import copy_tree
from ..layout import workdir_alias
from ..limits import ResourceLimits
from ..polling import readable
from ..proctree import kill_process_tree

BwrapArgs = Callable[[Path, list[str]], list[str]]
"""``(home, extra arguments) -> the bwrap command line up to the program``: the backend's one recipe."""
Folders = Callable[[str], Path]
"""``label -> a new sandbox folder`` of the backend's."""


@dataclass(frozen=True)
class Shape:
    """What a spare must have been started with to serve a run."""

    argv: tuple[str, ...]
    cwd: str
    fixed: tuple[tuple[str, str], ...]
    """(host path, path inside) of the mounts bound as they are: the interpreter, the runners."""
    staged: tuple[str, ...]
    """Paths inside of the mounts whose content is copied in when the run comes (``TrustedMount.staged``)."""
    settings: SandboxSettings

    @classmethod
    def of(cls, argv: list[str], mounts: list[TrustedMount], cwd: str, settings: SandboxSettings) -> "Shape":
        fixed = tuple((str(m.host_path), m.sandbox_path) for m in mounts if not m.staged)
        staged = tuple(m.sandbox_path for m in mounts if m.staged)
        return cls(tuple(argv), cwd, fixed, staged, settings)


class PendingRun:
    """One verifier sandbox, started with an empty home, waiting for its snapshot and its key."""

    def __init__(
        self, shape: Shape, new_folder: Folders, bwrap_args: BwrapArgs, network: str | None = None, ahead: bool = True
    ) -> None:
        """``network``: a network namespace to run in (``/proc/PID/ns/net`` of the agent's sandbox) instead of a new, empty one.

        ``ahead=False`` is a cold run: the process starts only once the home is filled, so a
        program that never reads its key still finds the snapshot there.
        """
        self.shape = shape
        self._bwrap_args = bwrap_args
        self._network = network
        self.folder = new_folder("verify")
        self.home = self.folder / "home"
        self.home.mkdir()
        os.chmod(self.home, 0o755)
        self._staged = {inside: self.folder / f"staged-{index}" for index, inside in enumerate(shape.staged)}
        for path in self._staged.values():
            path.mkdir()
            os.chmod(path, 0o755)
        self._limits = ResourceLimits(shape.settings, self.folder.name)
        self._limits.setup()
        self._done = False
        self._secret_w = self._result_r = -1
        self.process: subprocess.Popen | None = None
        if ahead:
            self._launch()

    def _launch(self) -> None:
        shape, network = self.shape, self._network
        secret_r, self._secret_w = os.pipe()
        self._result_r, result_w = os.pipe()
        try:
            command = self._bwrap_args(self.home, self._extra_args(secret_r, result_w)) + list(shape.argv)
            if network is not None:
                command = ["nsenter", f"--net={network}", "--", *_without_first(command, "--unshare-net")]
            self.process = subprocess.Popen(
                self._limits.wrap(command),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=(secret_r, result_w),
                start_new_session=True,
            )
        except BaseException:
            for fd in (self._secret_w, self._result_r):
                os.close(fd)
            self._limits.release()
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        finally:
            os.close(secret_r)
            os.close(result_w)

    def _extra_args(self, secret_r: int, result_w: int) -> list[str]:
        shape = self.shape
        mounts = [*shape.fixed, *((str(self._staged[inside]), inside) for inside in shape.staged)]
        extra = parent_dirs([inside for _, inside in mounts])
        for host, inside in mounts:
            extra += ["--ro-bind", host, inside]
        if os.path.exists("/etc/ld.so.preload"):
            extra += ["--ro-bind", "/dev/null", "/etc/ld.so.preload"]
        extra += ["--setenv", "TERMRL_SECRET_FD", str(secret_r), "--setenv", "TERMRL_RESULT_FD", str(result_w)]
        alias = workdir_alias(shape.cwd)
        if alias is not None:
            extra += [*parent_dirs([alias]), "--bind", str(self.home), alias]
        return extra + ["--chdir", shape.cwd]

    def run(self, home: Path, mounts: list[TrustedMount], secret: bytes, timeout_s: float) -> IsolatedRun:
        """Give the spare the snapshot at ``home`` and the staged content, send the key, collect; ``home`` gets back what is left."""
        try:
            _move_entries(home, self.home)
            st = os.lstat(home)
            os.chmod(self.home, st.st_mode & 0o7777)
            os.chown(self.home, st.st_uid, st.st_gid)
            for mount in mounts:
                if mount.staged:
                    copy_tree(mount.host_path, self._staged[mount.sandbox_path])
            if self.process is None:
                self._launch()
            process = self.process
            assert process is not None
            try:
                os.write(self._secret_w, secret)
            except BrokenPipeError:
                pass
            os.close(self._secret_w)
            self._secret_w = -1
            result_r, self._result_r = self._result_r, -1  # collect closes it, come what may
            self._done = True  # and kills the process tree
            payload, log, timed_out = collect(process, result_r, timeout_s)
            return IsolatedRun(process.returncode, payload, log.decode(errors="replace"), timed_out)
        finally:  # an interrupt mid-grading leaves no process or cgroup behind, and the snapshot where it was
            self.discard()
            _move_entries(self.home, home)
            shutil.rmtree(self.folder, ignore_errors=True)

    def discard(self) -> None:
        """Kill the spare and let go of its pipes and cgroups (its folder goes with :meth:`remove`)."""
        if not self._done and self.process is not None:
            kill_process_tree(self.process)
        self._done = True
        for fd in (self._secret_w, self._result_r):
            if fd >= 0:
                os.close(fd)
        self._secret_w = self._result_r = -1
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()
        self._limits.release()

    def remove(self) -> None:
        self.discard()
        shutil.rmtree(self.folder, ignore_errors=True)


class SpareVerifier:
    """The one spare verifier sandbox a backend keeps, for the shape of its last run.

    Spares are started on the backend's one long-lived starter thread (``starter``): bwrap
    dies with the thread that started it (``--die-with-parent``), so a spare started on an
    episode's own thread (training plays each rollout on one) would die when it ends.
    """

    def __init__(self, new_folder: Folders, bwrap_args: BwrapArgs, starter: Executor) -> None:
        self._start = lambda shape, ahead=True: PendingRun(shape, new_folder, bwrap_args, ahead=ahead)
        self._starter = starter
        self._lock = threading.Lock()
        self._spare: Future | None = None
        self.enabled = True

    @property
    def ready(self) -> PendingRun | None:
        """The spare, once started (waiting for its start); None if there is none."""
        with self._lock:
            spare = self._spare
        return started_spare(spare)

    def take(self, shape: Shape) -> PendingRun:
        """The spare if it has this shape (another is dropped), else a cold run that starts once its home is filled."""
        with self._lock:
            future, self._spare = self._spare, None
        spare = started_spare(future)
        if spare is not None and spare.shape == shape and spare.process is not None and spare.process.poll() is None:
            return spare
        if spare is not None:
            spare.remove()
        return self._start(shape, ahead=False)

    def refill(self, shape: Shape) -> None:
        """Start the next spare of this shape on the starter thread, unless one is there or spares are off."""
        if not self.enabled:
            return
        with self._lock:
            if self._spare is None:
                self._spare = self._starter.submit(self._start, shape)

    def close(self) -> None:
        with self._lock:
            future, self._spare = self._spare, None
        spare = started_spare(future)
        if spare is not None:
            spare.remove()


def _without_first(command: list[str], word: str) -> list[str]:
    """``command`` without the first ``word`` (bubblewrap's own options come before the program)."""
    index = command.index(word)
    return command[:index] + command[index + 1:]


def started_spare(future: Future | None):
    """What a start on the starter thread gave; None if there was none or it failed (a cold start follows)."""
    if future is None:
        return None
    try:
        return future.result()
    except Exception:  # noqa: BLE001 - the cold path meets the same failure and reports it
        return None


def _move_entries(src: Path, dest: Path) -> None:
    """Move every entry of ``src`` into ``dest`` (a rename; a copy across file systems)."""
    for name in os.listdir(src):
        try:
            os.rename(src / name, dest / name)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            subprocess.run(["cp", "-a", "--", str(src / name), str(dest / name)], check=True, capture_output=True)
            target = src / name
            shutil.rmtree(target) if target.is_dir() and not target.is_symlink() else target.unlink()


def collect(process: subprocess.Popen, result_fd: int, timeout_s: float) -> tuple[bytes, bytes, bool]:
    """Read the private result pipe and the log until both close or the deadline passes."""
    deadline = time.monotonic() + timeout_s
    stdout = process.stdout
    if stdout is None:
        raise ValueError("collect reads the process's log from its stdout pipe")
    log_fd = stdout.fileno()
    streams = {result_fd: bytearray(), log_fd: bytearray()}
    open_fds = set(streams)
    timed_out = False
    try:
        while open_fds:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            for fd in readable(open_fds, min(remaining, 0.5)):
                chunk = os.read(fd, 65536)
                if chunk:
                    if len(streams[fd]) < 16 * 1024 * 1024:
                        streams[fd] += chunk
                else:
                    open_fds.discard(fd)
    finally:
        kill_process_tree(process)
        os.close(result_fd)
        stdout.close()
    log = bytes(streams[log_fd])
    return bytes(streams[result_fd]), log[-20000:], timed_out

