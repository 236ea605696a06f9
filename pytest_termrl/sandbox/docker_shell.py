"""The persistent shell of the docker backend: one bash in an exec attached over the API.

Same protocol as :mod:`.shell` (bwrap): the harness writes each command to a file, the shell
sources it with stdin closed and output sent to another file, then prints a done line
with a random token and the exit code; after each command the shell saves its variables,
functions, umask and cwd, so a shell that dies or wedges is replaced by one that resumes.

Differences, all forced by the engine:

- Commands and the init script live in a folder the agent can only read (``/run/termrl``);
  output and saved state in a second, agent-writable one (``/run/termrl-out``). So the
  agent cannot plant a link where the harness writes as root.
- The shell talks over the exec's hijacked API connection (stdout/stderr multiplexed in
  8-byte-header frames), not a pipe; EOF on it means the shell is gone.
- On a timeout, as when the shell dies, every process of the agent is killed by the
  sandbox's ``kill_agent`` (from the host through the container's cgroup on a local engine,
  by an in-container killer otherwise) and a new shell resumes from the state saved after
  the last finished command, like the bwrap backend's shell.
"""

from __future__ import annotations

import os
import secrets
import select
import socket
import stat
import struct
import time
from pathlib import Path
from typing import Protocol

from .base import CommandResult
from .output import read_capped
from .shell import INIT_SCRIPT, TIMEOUT_EXIT_CODE


class ExecStream:
    """An exec started with its stdin, stdout and stderr attached to one hijacked connection."""

    def __init__(self, api, container_id: str, cmd: list[str], user: str, workdir: str, environment: dict[str, str]) -> None:
        self.api = api
        self.exec_id = api.exec_create(
            container_id, cmd, stdin=True, stdout=True, stderr=True, tty=False,
            user=user, workdir=workdir, environment=environment,
        )["Id"]
        self._raw = api.exec_start(self.exec_id, socket=True, tty=False)
        self._sock = getattr(self._raw, "_sock", self._raw)
        if hasattr(self._sock, "settimeout"):
            self._sock.settimeout(None)  # reads are bounded by select, not by the client's timeout
        self._pending = b""
        self.eof = False
        self.timed_out = False

    def fileno(self) -> int:
        return self._sock.fileno()

    def send(self, data: bytes) -> bool:
        try:
            self._sock.sendall(data)
            return True
        except (OSError, AttributeError):
            return False

    def close_stdin(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_WR)
        except AttributeError:  # a paramiko channel (ssh://)
            self._sock.shutdown_write()
        except OSError:
            pass

    def read(self, timeout_s: float) -> list[tuple[int, bytes]]:
        """The frames (stream 1 stdout, 2 stderr) that arrive within timeout_s; [] at EOF or none."""
        if self.eof:
            return []
        ready, _, _ = select.select([self._sock], [], [], max(0.0, timeout_s))
        if not ready:
            return []
        try:
            chunk = self._sock.recv(65536)
        except (OSError, socket.timeout):
            chunk = b""
        if not chunk:
            self.eof = True
            return []
        self._pending += chunk
        frames = []
        while len(self._pending) >= 8:
            kind, size = self._pending[0], struct.unpack(">I", self._pending[4:8])[0]
            if len(self._pending) < 8 + size:
                break
            frames.append((kind, self._pending[8 : 8 + size]))
            self._pending = self._pending[8 + size :]
        return frames

    def frames(self, deadline: float):
        """Every frame until EOF; stops early, with ``timed_out`` set, when the deadline (monotonic) passes."""
        self.timed_out = False
        while not self.eof:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.timed_out = True
                return
            yield from self.read(min(remaining, 0.5))

    def exit_code(self, wait_s: float = 3.0) -> int | None:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                info = self.api.exec_inspect(self.exec_id)
            except Exception:  # noqa: BLE001 - the container is gone: no exit code to tell
                return None
            if not info.get("Running") or time.monotonic() > deadline:
                return info.get("ExitCode") if not info.get("Running") else None
            time.sleep(0.02)

    def close(self) -> None:
        for thing in (self._sock, self._raw):
            try:
                thing.close()
            except Exception:  # noqa: BLE001
                pass
        self.eof = True


class ShellHost(Protocol):
    """What the shell needs from its sandbox."""

    def open_exec(self, cmd: list[str]) -> ExecStream: ...

    def kill_agent(self, spare: set[int]) -> None: ...


def write_control_file(folder: Path, name: str, text: str) -> None:
    """Write a file the sandbox reads, as root, refusing to follow anything planted there."""
    path = folder / name
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, text.encode())
        os.fchmod(fd, 0o644)
    finally:
        os.close(fd)


def read_output(path: Path, cap: int) -> tuple[str, bool]:
    """read_capped, for a regular file only (the agent may have put a FIFO or link there)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return "", False
    except OSError:
        return "", False
    try:
        return read_capped(str(path), cap)
    except OSError:
        return "", False


class ControlFiles(Protocol):
    """Where the shell's command files and output files live, seen from the harness."""

    def write(self, name: str, text: str) -> None:
        """Put a file the shell reads (commands, init) in the control folder."""

    def read_output(self, name: str, cap: int) -> tuple[str, bool]:
        """A command's output file, capped; ("", False) if it is not a regular file."""

    def discard(self, n: int) -> None:
        """Drop command n-1's files (and any stale output of n) before command n is written."""


class HostControlFiles:
    """Control and output folders bind-mounted from this machine (a local engine)."""

    def __init__(self, in_host: Path, out_host: Path) -> None:
        self.in_host, self.out_host = in_host, out_host

    def write(self, name: str, text: str) -> None:
        write_control_file(self.in_host, name, text)

    def read_output(self, name: str, cap: int) -> tuple[str, bool]:
        return read_output(self.out_host / name, cap)

    def discard(self, n: int) -> None:
        for folder, name in ((self.in_host, f"cmd.{n - 1}"), (self.out_host, f"out.{n - 1}"), (self.out_host, f"out.{n}")):
            try:
                (folder / name).unlink()
            except (FileNotFoundError, IsADirectoryError):
                pass


class DockerShell:
    """Runs commands one at a time in a long-lived bash inside the container."""

    def __init__(
        self,
        host: ShellHost,
        files: ControlFiles,
        in_inside: str,
        out_inside: str,
        workdir: str,
        output_cap: int,
        kill_grace_s: float = 2.0,
    ) -> None:
        self._host = host
        self.files = files
        self._in_inside, self._out_inside = in_inside, out_inside
        self._workdir = workdir
        self._cap = output_cap
        self._grace = kill_grace_s
        self._counter = 0
        self._stream: ExecStream | None = None
        self._buffer = b""
        self._token = ""
        self.shell_pid: int | None = None
        self.restarts = 0

    @property
    def running(self) -> bool:
        return self._stream is not None

    # -- lifecycle -------------------------------------------------------------------
    def start(self, restore: bool = False) -> None:
        self._stream = self._host.open_exec(["bash", "--noprofile", "--norc"])
        self._buffer = b""
        self._token = "__TERMRL_DONE_" + secrets.token_hex(8)
        self.files.write("init.sh", INIT_SCRIPT)
        out = self._out_inside
        lines = [
            f"__TERMRL_CTL={out}; __TERMRL_TOKEN={self._token}",
            f". {self._in_inside}/init.sh",
            f"cd {self._workdir}",
        ]
        if restore:
            lines.append(f". {out}/state.sh >/dev/null 2>&1")
            lines.append(f'cd -- "$(cat {out}/state.cwd 2>/dev/null || echo {self._workdir})" 2>/dev/null')
        lines.append("__termrl_done 0 $$")
        self._stream.send(("\n".join(lines) + "\n").encode())
        pid = self._wait_for(0, time.monotonic() + 30)
        if pid is None:
            tail = self._buffer.decode(errors="replace")[-500:]
            self.stop()
            raise RuntimeError("the sandbox shell did not start: " + tail)
        self.shell_pid = pid

    def stop(self) -> None:
        """Kill the shell and every process of the agent; the container stays."""
        stream, self._stream = self._stream, None
        self.shell_pid = None
        if stream is None:
            return
        self._host.kill_agent(spare=set())
        stream.close()

    # -- commands --------------------------------------------------------------------
    def run(self, command: str, timeout_s: float) -> CommandResult:
        if self._stream is None:
            self.start()
        self._counter += 1
        n = self._counter
        self.files.discard(n)
        self.files.write(f"cmd.{n}", command if command.endswith("\n") else command + "\n")
        started = time.monotonic()
        cmd_in, out = f"{self._in_inside}/cmd.{n}", f"{self._out_inside}/out.{n}"
        self._stream.send(f"{{ . {cmd_in}; }} </dev/null >{out} 2>&1; __termrl_done {n} $?\n".encode())
        rc = self._wait_for(n, started + timeout_s)
        timed_out = rc is None and time.monotonic() >= started + timeout_s
        restarted = False
        if rc is None:
            # Timed out (the whole command must stop, not only its children: every process
            # goes), or the shell died (exit, exec, killed): resume in a new shell where the
            # last finished command left it, as the bwrap backend does.
            if not timed_out:
                rc = self._stream.exit_code(wait_s=self._grace)
            self.stop()
            self.start(restore=True)
            self.restarts += 1
            restarted = True
        if timed_out:
            rc = TIMEOUT_EXIT_CODE
        output, truncated = self.files.read_output(f"out.{n}", self._cap)
        return CommandResult(
            output=output,
            exit_code=rc,
            timed_out=timed_out,
            shell_restarted=restarted,
            output_truncated=truncated,
            duration_s=time.monotonic() - started,
        )

    # -- internals -------------------------------------------------------------------
    def _wait_for(self, n: int, deadline: float) -> int | None:
        """Read the shell's stream until the done line of command n; None if it never comes."""
        marker = f"{self._token} {n} ".encode()
        while True:
            index = self._buffer.find(marker)
            if index >= 0:
                end = self._buffer.find(b"\n", index)
                if end >= 0:
                    value = self._buffer[index + len(marker) : end].strip()
                    self._buffer = self._buffer[end + 1 :]
                    try:
                        return int(value)
                    except ValueError:
                        return None
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self._stream.eof:
                return None
            for _, data in self._stream.read(min(remaining, 0.5)):
                self._buffer = (self._buffer + data)[-65536:]
