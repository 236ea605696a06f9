"""The terminal session's channel over two FIFOs, started by a launcher through the persistent shell (the bwrap sandboxes).

The session lives in the same sandbox as the agent's persistent shell (:mod:`.shell`), as a
child of it: the harness runs a short launcher through the shell's protocol (not one of the
agent's commands) that starts, in a session of its own, util-linux ``script`` (or Python's
``pty`` module where ``script`` is missing) running ``bash -i``. Its input and output are two
FIFOs in the shell's output folder, which the harness opens from the host and keeps open:
``term.in`` read-write, so that the session never sees the end of its input, and ``term.out``
without blocking. Being the shell's child, the session starts in the shell's working
directory with its exported variables, lies in the sandbox's namespaces and cgroup, and dies
with the shell: whatever kills every process of the agent's kills it too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .control_files import remove_entry
from .polling import readable
from .shell import PersistentShell
from .terminal import TerminalSession, TerminalUnavailable

LAUNCH_TIMEOUT_S = 10.0
"""The launcher's timeout as a command of the persistent shell (it only starts the session)."""

IN_FIFO, OUT_FIFO = "term.in", "term.out"
LAUNCHER = "term.sh"

_LAUNCHER = """\
# The terminal session: bash -i on a pseudo-terminal; this script's stdin and stdout are the FIFOs.
export TERM=xterm
unset COLUMNS LINES
rc={rcfile}
if command -v script >/dev/null 2>&1; then
  set -- script -qfec "exec bash --rcfile $rc -i" /dev/null
elif command -v python3 >/dev/null 2>&1; then
  set -- python3 -c 'import pty, sys; pty.spawn(sys.argv[1:])' bash --rcfile "$rc" -i
else
  echo "[no terminal: neither script (util-linux) nor python3 is installed]"
  exit 127
fi
if command -v setsid >/dev/null 2>&1; then
  exec setsid "$@"  # a session of its own; from its process group's leader setsid forks, its child stays in the sandbox
fi
exec "$@"
"""

_LAUNCH = """\
__termrl_m=$-; set -m
command bash {launcher} <{fifo_in} >{fifo_out} 2>&1 & disown $!
case $__termrl_m in *m*) ;; *) set +m ;; esac; unset __termrl_m
"""
"""Run in the persistent shell: the launcher in the background, with job control on while it starts, so
that it runs in a process group of its own with SIGINT and SIGQUIT as a terminal's programs expect them
(a background job without job control ignores both, and ignored signals stay ignored across exec)."""


class FifoChannel:
    """The session's two FIFOs, held open from the host."""

    def __init__(self, in_fd: int, out_fd: int) -> None:
        self._in_fd: int | None = in_fd
        self._out_fd: int | None = out_fd

    def write(self, data: bytes) -> int | None:
        if self._in_fd is None:
            return None
        try:
            return os.write(self._in_fd, data)
        except BlockingIOError:
            return 0

    def read(self, timeout_s: float) -> bytes | None:
        fd = self._out_fd
        if fd is None:
            return None
        if not readable([fd], max(0.0, timeout_s)):
            return b""
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return b""
        if not chunk:  # every writer gone (poll says so only once one had opened it): the session ended
            return None
        return chunk

    def close(self) -> None:
        for fd in (self._in_fd, self._out_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._in_fd = self._out_fd = None


class FifoOpener:
    """Starts a session through the persistent shell, its FIFOs in the output folder (``io_host`` here, ``io_inside`` there)."""

    def __init__(self, shell: PersistentShell, io_host: Path, ctl_inside: str, io_inside: str) -> None:
        self._shell = shell
        self._io_host = io_host
        self._ctl_inside, self._io_inside = ctl_inside, io_inside

    def __call__(self, rcfile: str) -> FifoChannel:
        self._shell.files.write(LAUNCHER, _LAUNCHER.format(rcfile=rcfile))
        out_fd = in_fd = None
        try:
            out_fd = self._make_fifo(OUT_FIFO, os.O_RDONLY)
            in_fd = self._make_fifo(IN_FIFO, os.O_RDWR)
        except OSError as exc:
            _close(out_fd)
            raise TerminalUnavailable(f"[no terminal: its FIFOs could not be made: {exc}]") from exc
        channel = FifoChannel(in_fd, out_fd)
        io = self._io_inside
        launched = self._shell.run(_LAUNCH.format(launcher=f"{self._ctl_inside}/{LAUNCHER}", fifo_in=f"{io}/{IN_FIFO}",
                                                  fifo_out=f"{io}/{OUT_FIFO}"), timeout_s=LAUNCH_TIMEOUT_S)
        if launched.exit_code != 0:
            channel.close()
            raise TerminalUnavailable(f"[no terminal: its launcher failed (exit code {launched.exit_code}): {launched.output.strip()}]")
        return channel

    def _make_fifo(self, name: str, mode: int) -> int:
        """A new FIFO in the output folder, owned like the folder (the agent's), opened without blocking nor following a link."""
        path = self._io_host / name
        remove_entry(path)
        os.mkfifo(path, 0o600)
        folder = os.stat(self._io_host)
        if os.geteuid() == 0:
            os.chown(path, folder.st_uid, folder.st_gid)
        fd = os.open(path, mode | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):  # replaced between mkfifo and open
            os.close(fd)
            raise OSError(f"{path} is not the FIFO made there")
        return fd


def _close(fd: int | None) -> None:
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass


def fifo_terminal(shell: PersistentShell, io_host: Path, ctl_inside: str, io_inside: str, output_cap_chars: int,
                  size: tuple[int, int]) -> TerminalSession:
    """A terminal session whose channel is :class:`FifoChannel`, started as the shell's child (in its folder, with its exports)."""
    return TerminalSession(shell.files, ctl_inside, FifoOpener(shell, io_host, ctl_inside, io_inside), output_cap_chars, size)
