"""A persistent bash that runs one command at a time, each command's text and output in files.

The harness writes command N to ``<ctl>/cmd.N`` (a folder the agent can only read) and asks
the shell to source it with stdin closed and output sent to ``<io>/out.N`` (a folder of the
agent's). Sourcing at top level keeps cwd, variables and functions; a syntax error stays
inside the command. The shell then prints a done line with a random token and the exit
code, and saves its state, so that when a command times out or kills or wedges the shell
(``exit``, ``exec``, a builtin loop, a read from a FIFO), every process is killed and a new
shell resumes where the last finished command left it.

Every backend speaks this one protocol. What differs is how bytes reach the shell (a
:class:`.base.ShellChannel`: pipes to a local process, an exec over an engine's API) and where the
command and output files live (a :class:`.base.ControlFiles`: host folders, volumes on an engine).
"""

from __future__ import annotations

import secrets
import time
from typing import Callable

from .base import CommandResult, ControlFiles, ShellChannel

TIMEOUT_EXIT_CODE = 124
"""The exit code reported for a command killed at its timeout, as GNU timeout does."""

INIT_SCRIPT = r"""
__termrl_save() {
  compgen -v >| "$__TERMRL_CTL/state.vars" 2>/dev/null
  {
    local __v
    while IFS= read -r __v; do
      case $__v in
        BASH*|FUNCNAME|GROUPS|EUID|UID|PPID|SHELLOPTS|HIST*|PIPESTATUS|RANDOM|SRANDOM|SECONDS|LINENO|OPTIND|OPTERR|OPTARG|DIRSTACK|COMP_*|EPOCH*|_|__termrl*|__TERMRL*|__v|PWD|OLDPWD|SHLVL|COLUMNS|LINES) ;;
        *) declare -p "$__v" 2>/dev/null ;;
      esac
    done < "$__TERMRL_CTL/state.vars"
    declare -f
    umask -p
  } >| "$__TERMRL_CTL/state.sh" 2>/dev/null
  export -p >| "$__TERMRL_CTL/state.env" 2>/dev/null
  printf '%s' "$PWD" >| "$__TERMRL_CTL/state.cwd" 2>/dev/null
}
__termrl_done() {
  __termrl_save
  printf '\n%s %s %s\n' "$__TERMRL_TOKEN" "$1" "$2"
}
"""

_BUFFER_KEEP = 65536
"""Bytes of the shell's own output kept while looking for a done line (commands' output goes to files)."""


class PersistentShell:
    """Runs commands one at a time in a long-lived bash, restarting it when it dies or wedges."""

    def __init__(
        self,
        open_channel: Callable[[], ShellChannel],
        files: ControlFiles,
        ctl_inside: str,
        io_inside: str,
        workdir: str,
        output_cap_chars: int,
        exit_grace_s: float = 2.0,
    ) -> None:
        self._open_channel = open_channel
        self.files = files
        self._ctl_inside, self._io_inside = ctl_inside, io_inside
        self.workdir = workdir
        self._cap = output_cap_chars
        self._grace = exit_grace_s
        self._counter = 0
        self._channel: ShellChannel | None = None
        self._buffer = b""
        self._token = ""
        self._starting = False
        self.restarts = 0

    @property
    def running(self) -> bool:
        return self._channel is not None

    # -- lifecycle -------------------------------------------------------------------
    def start(self, restore: bool = False, wait: bool = True) -> None:
        """Open a shell and hand it the protocol; ``wait=False`` returns before it answers (:meth:`wait_started`)."""
        self._channel = self._open_channel()
        self._buffer = b""
        self._token = "__TERMRL_DONE_" + secrets.token_hex(8)
        self.files.write("init.sh", INIT_SCRIPT)
        io = self._io_inside
        lines = [
            f"__TERMRL_CTL={io}; __TERMRL_TOKEN={self._token}",
            f". {self._ctl_inside}/init.sh",
            f"cd {self.workdir}",
        ]
        if restore:
            lines.append(f". {io}/state.sh >/dev/null 2>&1")
            lines.append(f'cd -- "$(cat {io}/state.cwd 2>/dev/null || echo {self.workdir})" 2>/dev/null')
        lines.append("__termrl_done 0 0")
        self._channel.send(("\n".join(lines) + "\n").encode())
        self._starting = True
        if wait:
            self.wait_started()

    def wait_started(self) -> None:
        """Wait for a started shell's first done line (at once if it has answered, or if none is starting)."""
        channel = self._channel
        if not self._starting or channel is None:
            return
        self._starting = False
        if self._wait_for(channel, 0, time.monotonic() + 30) is None:
            tail = self._buffer.decode(errors="replace")[-500:]
            self.stop()
            raise RuntimeError("the sandbox shell did not start: " + tail)

    def stop(self) -> None:
        """Kill the shell and every process of the agent; the sandbox stays."""
        channel, self._channel = self._channel, None
        self._starting = False
        if channel is None:
            return
        try:
            channel.kill()
        finally:
            channel.release()

    def abandon(self) -> None:
        """Let go of the shell without killing anything: its sandbox is about to be removed whole."""
        channel, self._channel = self._channel, None
        if channel is not None:
            channel.release()

    # -- commands --------------------------------------------------------------------
    def run(self, command: str, timeout_s: float) -> CommandResult:
        if self._channel is None:
            self.start()
        self.wait_started()
        channel = self._channel
        if channel is None:  # start() opened it
            raise RuntimeError("the sandbox shell is not running")
        self._counter += 1
        n = self._counter
        clear_first = self.files.discard(n)
        self.files.write(f"cmd.{n}", command if command.endswith("\n") else command + "\n")
        started = time.monotonic()
        cmd, out = f"{self._ctl_inside}/cmd.{n}", f"{self._io_inside}/out.{n}"
        channel.send(f"{clear_first}{{ . {cmd}; }} </dev/null >{out} 2>&1; __termrl_done {n} $?\n".encode())
        rc = self._wait_for(channel, n, started + timeout_s)
        timed_out = rc is None and time.monotonic() >= started + timeout_s
        restarted = False
        if rc is None:
            # Timed out (the whole command must stop, not only its children: every process
            # goes), or the shell died (exit, exec, killed) or is wedged in a builtin: resume
            # in a new shell where the last finished command left it.
            if not timed_out:
                rc = channel.exit_code(wait_s=self._grace)
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
    def _wait_for(self, channel: ShellChannel, n: int, deadline: float) -> int | None:
        """Read the shell's output until the done line of command n; None if it never comes."""
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
            if remaining <= 0:
                return None
            chunk = channel.receive(min(remaining, 0.5))
            if chunk is None:
                return None
            self._buffer = (self._buffer + chunk)[-_BUFFER_KEEP:]
