"""Processes in a container over the engine's API: attached execs, the shell's channel, one-shot runs.

An exec started with stdin attached hands back the engine's hijacked connection: stdin goes
in raw, stdout and stderr come back multiplexed in frames with an 8-byte header; EOF on it
means the process is gone. The agent's shell (:mod:`..shell`) speaks its protocol over one
such exec (:class:`ExecChannel`); killing it means killing every process of the agent
(:mod:`.kill`). The verifier's process, and the harness's own root commands, are one-shot
execs (:func:`exec_verifier`, :func:`exec_stdout`, :func:`root_exec`).
"""

from __future__ import annotations

import socket
import struct
import time
from typing import Callable

from ...errors import SandboxError
from ..base import IsolatedRun
from ..layout import AGENT_ENV
from ..polling import readable

FETCH_DEADLINE_S = 600.0
ROOT_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}
"""The harness's own root commands in a container: the image's full PATH, the C locale."""

# The verifier's process: the secret arrives on the exec's stdin and moves to fd 3; the
# exec's stdout moves to fd 4 and carries only the signed result; everything the runner and
# the tests print goes to the exec's stderr (the log).
VERIFY_WRAPPER = (
    'exec 3<&0 4>&1 </dev/null >&2; export TERMRL_SECRET_FD=3 TERMRL_RESULT_FD=4; exec "$@"'
)


class ExecStream:
    """An exec started with its stdin, stdout and stderr attached to one hijacked connection."""

    def __init__(self, api, container_id: str, cmd: list[str], user: str, workdir: str, environment: dict[str, str]) -> None:
        self.api = api
        self.exec_id, self._raw, self._sock = attach(api, container_id, cmd, user, workdir, environment, tty=False)
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


def attach(api, container_id: str, cmd: list[str], user: str, workdir: str, environment: dict[str, str], *, tty: bool):
    """Create and start an exec with stdin, stdout and stderr on one hijacked connection: (its id, the connection, its socket)."""
    exec_id = api.exec_create(
        container_id, cmd, stdin=True, stdout=True, stderr=True, tty=tty, user=user, workdir=workdir, environment=environment,
    )["Id"]
    raw = api.exec_start(exec_id, socket=True, tty=tty)
    sock = getattr(raw, "_sock", raw)
    if hasattr(sock, "settimeout"):
        sock.settimeout(None)  # reads are bounded by select or poll, not by the client's timeout
    return exec_id, raw, sock


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


def exec_verifier(
    api, container_id: str, user: str, argv: list[str], secret: bytes, timeout_s: float, cwd: str,
    environment: dict[str, str] | None = None,
) -> IsolatedRun:
    """Run the verifier's process in a started container: secret in, signed result and log out (``environment``: the agent's by default)."""
    payload, log = bytearray(), bytearray()
    stream = ExecStream(
        api, container_id, ["/bin/sh", "-c", VERIFY_WRAPPER, "termrl-verify", *argv],
        user=user, workdir=cwd, environment=environment or AGENT_ENV,
    )
    try:
        stream.send(secret)
        stream.close_stdin()
        for kind, data in stream.frames(time.monotonic() + timeout_s):
            target = payload if kind == 1 else log
            if len(target) < 16 * 1024 * 1024:
                target += data
        timed_out = stream.timed_out
        rc = None if timed_out else stream.exit_code()
    finally:
        stream.close()
    return IsolatedRun(rc, bytes(payload), bytes(log[-20000:]).decode(errors="replace"), timed_out)


def exec_stdout(container, cmd: list[str]):
    """Run cmd as root in the container; yield its stdout as it comes, then check its exit.

    The process waits for a line on its stdin before it starts: the SDK reads an exec's
    frames from the raw socket, and output that arrived with the response headers would sit
    in the HTTP reader's buffer and be lost (over tcp that happens). Raises SandboxError
    when it cannot start, fails or outlives FETCH_DEADLINE_S (the caller falls back).
    """
    gated = ["sh", "-c", 'read -r _ || exit 125; exec "$@"', "termrl-fetch", *cmd]
    try:
        stream = ExecStream(container.client.api, container.id, gated, "0:0", "/", ROOT_ENV)
    except Exception as exc:  # noqa: BLE001 - a full process table, a gone container
        raise SandboxError(f"{cmd[0]} could not start in {container.name}: {exc}") from exc
    errors = bytearray()
    try:
        stream.send(b"go\n")
        for kind, data in stream.frames(time.monotonic() + FETCH_DEADLINE_S):
            if kind == 1:
                yield data
            elif len(errors) < 4096:
                errors += data
        if stream.timed_out:
            raise SandboxError(f"{cmd[0]} in {container.name} ran past {FETCH_DEADLINE_S:g} s")
        code = stream.exit_code()
    finally:
        stream.close()
    if code != 0:
        raise SandboxError(f"{cmd[0]} in {container.name} exited {code}: {errors.decode(errors='replace')[-300:]}")


def root_exec(container, script: str) -> None:
    """Run a harness command as root in the agent's container (no agent process is involved)."""
    try:
        result = container.exec_run(["sh", "-c", script], user="0:0", environment=ROOT_ENV)
    except Exception as exc:  # noqa: BLE001 - whatever the SDK raised, the command did not run as asked
        raise SandboxError(f"`{script}` could not run in {container.name}: {exc}") from exc
    if result.exit_code != 0:
        raise SandboxError(f"`{script}` in {container.name} failed: {result.output.decode(errors='replace')[-500:]}")
