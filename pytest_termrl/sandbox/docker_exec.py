"""Processes in a container over the engine's API: attached execs, and the shell's channel.

An exec started with stdin attached hands back the engine's hijacked connection: stdin goes
in raw, stdout and stderr come back multiplexed in frames with an 8-byte header; EOF on it
means the process is gone. The agent's shell (:mod:`.shell`) speaks its protocol over one
such exec (:class:`ExecChannel`); killing it means killing every process of the agent, which
the sandbox does from the host through the container's cgroup on a local engine, or with a
killer inside the container otherwise.
"""

from __future__ import annotations

import socket
import struct
import time
from typing import Callable

from .polling import readable


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
        if not readable([self._sock], timeout_s):
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


class ExecChannel:
    """The shell's channel over an attached exec; ``kill_agent`` stops every process of the agent."""

    def __init__(self, stream: ExecStream, kill_agent: Callable[[], None]) -> None:
        self.stream = stream
        self._kill_agent = kill_agent

    def send(self, data: bytes) -> None:
        self.stream.send(data)

    def receive(self, timeout_s: float) -> bytes | None:
        if self.stream.eof:
            return None
        return b"".join(data for _, data in self.stream.read(timeout_s))

    def exit_code(self, wait_s: float) -> int | None:
        return self.stream.exit_code(wait_s=wait_s)

    def kill(self) -> None:
        self._kill_agent()

    def release(self) -> None:
        self.stream.close()
