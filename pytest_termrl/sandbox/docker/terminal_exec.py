"""The terminal session's channel in a container: ``bash -i`` in an exec on a pseudo-terminal, over the engine's socket.

The exec is created with ``tty=True, stdin=True`` and started attached: the engine makes the
pseudo-terminal inside the container and hands back its hijacked connection, keystrokes in
and the terminal's output out, raw (a terminal's exec is not multiplexed in frames). It
runs as the agent's user with the agent's environment and ``TERM=xterm``; its rcfile
(:mod:`..terminal`) sets the window size with ``stty`` and moves to the folder the persistent
shell saved as its last one. The same socket serves a local engine, a remote one and the
whole-machine sandbox alike: nothing on this machine's disk is involved.

Output that came with the engine's response headers would sit in the HTTP reader's buffer
and be lost, so the exec waits for one carriage return before it starts bash (the
terminal echoes it as a line break, and the cursor goes home again). The session ends with
its bash: ``exit``, or the kill of every process of the agent's (:mod:`.kill`); letting go
of the connection kills nothing.
"""

from __future__ import annotations

import select
import socket

from ..polling import readable
from ..terminal import TerminalUnavailable
from .exec import attach

GATE = r'IFS= read -r _ || exit 125; printf "\033[H"; exec "$@"'
"""Waits for the harness's carriage return (read after the connection is the harness's), then starts the session."""


class TtyExecChannel:
    """One attached exec on a pseudo-terminal: its connection, with :class:`..terminal.TerminalChannel`'s calls."""

    def __init__(self, api, container_id: str, cmd: list[str], user: str, workdir: str, environment: dict[str, str]) -> None:
        self.exec_id, self._raw, self._sock = attach(api, container_id, cmd, user, workdir, environment, tty=True)
        self._ended = False

    def write(self, data: bytes) -> int | None:
        if self._ended:
            return None
        sock = self._sock
        ready = getattr(sock, "send_ready", None)  # a paramiko channel (ssh://): its fileno tells reads only
        if not (ready() if ready is not None else _writable(sock)):
            return 0
        try:
            return sock.send(data)
        except (BlockingIOError, InterruptedError, socket.timeout):
            return 0
        except (OSError, AttributeError):
            self._ended = True
            return None

    def read(self, timeout_s: float) -> bytes | None:
        if self._ended:
            return None
        if not readable([self._sock], timeout_s):
            return b""
        try:
            chunk = self._sock.recv(65536)
        except (BlockingIOError, InterruptedError, socket.timeout):
            return b""
        except OSError:
            chunk = b""
        if not chunk:
            self._ended = True
            return None
        return chunk

    def close(self) -> None:
        self._ended = True
        for thing in (self._sock, self._raw):
            try:
                thing.close()
            except Exception:  # noqa: BLE001 - already closed, or the engine went away
                pass


def _writable(sock) -> bool:
    poller = select.poll()
    poller.register(sock, select.POLLOUT)
    return any(events & select.POLLOUT for _, events in poller.poll(0))


def open_terminal_exec(api, container, rcfile: str, user: str, workdir: str, environment: dict[str, str],
                       api_error: type[Exception]) -> TtyExecChannel:
    """Start ``bash --rcfile RC -i`` on a pseudo-terminal in the running container as ``user`` in ``workdir``; its channel.

    Raises :class:`..terminal.TerminalUnavailable` when the engine refuses the exec.
    """
    env = {key: value for key, value in environment.items() if key not in ("COLUMNS", "LINES")}
    env["TERM"] = "xterm"
    cmd = ["sh", "-c", GATE, "termrl-terminal", "bash", "--rcfile", rcfile, "-i"]
    try:
        channel = TtyExecChannel(api, container.id, cmd, user, workdir, env)
    except api_error as exc:
        raise TerminalUnavailable(f"[no terminal: the engine did not start it in {container.name}: {getattr(exc, 'explanation', None) or exc}]") from exc
    except OSError as exc:
        raise TerminalUnavailable(f"[no terminal: the engine's connection failed: {exc}]") from exc
    if channel.write(b"\r") != 1:
        channel.close()
        raise TerminalUnavailable("[no terminal: its connection closed as it started]")
    return channel
