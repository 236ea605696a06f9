"""A persistent bash driven over pipes, with each command's text and output in files.

The harness writes the command to ``<ctl>/cmd.N`` (a folder the agent can only read) and
asks the shell to source it with stdin closed and output sent to ``<io>/out.N``. Sourcing
at top level keeps cwd, variables and functions; a syntax error stays inside the command.
After each command the shell saves its state so that, when a command times out or kills
or wedges the shell (``exit``, ``exec``, a builtin loop, a read from a FIFO), every
process is killed and a new shell resumes where the last finished command left it.
"""

from __future__ import annotations

import os
import secrets
import select
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .base import CommandResult
from .output import read_capped
from .proctree import descendants, kill_descendants

TIMEOUT_EXIT_CODE = 124
"""The exit code reported for a command killed at its timeout, as GNU timeout does."""

INIT_SCRIPT = r"""
__termrl_save() {
  {
    local __v
    for __v in $(compgen -v); do
      case $__v in
        BASH*|FUNCNAME|GROUPS|EUID|UID|PPID|SHELLOPTS|HIST*|PIPESTATUS|RANDOM|SRANDOM|SECONDS|LINENO|OPTIND|OPTERR|OPTARG|DIRSTACK|COMP_*|EPOCH*|_|__termrl*|__TERMRL*|__v|PWD|OLDPWD|SHLVL|COLUMNS|LINES) ;;
        *) declare -p "$__v" 2>/dev/null ;;
      esac
    done
    declare -f | grep -v '^__termrl' >/dev/null 2>&1 && declare -f
    printf 'umask %s\n' "$(umask)"
  } > "$__TERMRL_CTL/state.sh" 2>/dev/null
  printf '%s' "$PWD" > "$__TERMRL_CTL/state.cwd" 2>/dev/null
}
__termrl_done() {
  __termrl_save
  printf '\n%s %s %s\n' "$__TERMRL_TOKEN" "$1" "$2"
}
"""


@dataclass
class ShellProcess:
    """A started shell: its process, and the host pid under which the sandbox's processes live."""

    process: subprocess.Popen
    tree_root: int


class PersistentShell:
    """Runs commands one at a time in a long-lived bash, restarting it when it dies or wedges."""

    def __init__(
        self,
        spawn: Callable[[], ShellProcess],
        ctl_host: Path,
        ctl_inside: str,
        io_host: Path,
        io_inside: str,
        workdir: str,
        output_cap: int,
        exit_grace_s: float = 2.0,
    ) -> None:
        self._spawn = spawn
        self._ctl_host = ctl_host
        self._ctl_inside = ctl_inside
        self._io_host = io_host
        self._io_inside = io_inside
        self._workdir = workdir
        self._cap = output_cap
        self._grace = exit_grace_s
        self._counter = 0
        self._shell: ShellProcess | None = None
        self._buffer = b""
        self._token = ""
        self.restarts = 0

    # -- lifecycle -------------------------------------------------------------------
    def start(self, restore: bool = False) -> None:
        self._shell = self._spawn()
        self._buffer = b""
        self._token = "__TERMRL_DONE_" + secrets.token_hex(8)
        (self._ctl_host / "init.sh").write_text(INIT_SCRIPT)
        lines = [
            f"__TERMRL_CTL={self._io_inside}; __TERMRL_TOKEN={self._token}",
            f". {self._ctl_inside}/init.sh",
            f"cd {self._workdir}",
        ]
        if restore:
            lines.append(f". {self._io_inside}/state.sh >/dev/null 2>&1")
            lines.append(f'cd -- "$(cat {self._io_inside}/state.cwd 2>/dev/null || echo {self._workdir})" 2>/dev/null')
        lines.append("__termrl_done 0 0")
        self._send("\n".join(lines) + "\n")
        if self._wait_for(0, time.monotonic() + 30) is None:
            raise RuntimeError("the sandbox shell did not start: " + self._buffer.decode(errors="replace")[-500:])

    def stop(self) -> None:
        shell, self._shell = self._shell, None
        if shell is None:
            return
        kill_descendants(shell.tree_root, spare=set())
        try:
            shell.process.kill()
        except ProcessLookupError:
            pass
        for stream in (shell.process.stdin, shell.process.stdout):
            try:
                stream.close()
            except (OSError, AttributeError):
                pass
        try:
            shell.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def live_pids(self) -> list[int]:
        return descendants(self._shell.tree_root) if self._shell else []

    # -- commands --------------------------------------------------------------------
    def run(self, command: str, timeout_s: float) -> CommandResult:
        if self._shell is None:
            self.start()
        self._counter += 1
        n = self._counter
        cmd_path = self._ctl_host / f"cmd.{n}"
        cmd_path.write_text(command if command.endswith("\n") else command + "\n")
        os.chmod(cmd_path, 0o644)
        self._remove_old_outputs(n)
        started = time.monotonic()
        ctl = self._ctl_inside
        self._send(f"{{ . {ctl}/cmd.{n}; }} </dev/null >{self._io_inside}/out.{n} 2>&1; __termrl_done {n} $?\n")
        rc = self._wait_for(n, started + timeout_s)
        timed_out = rc is None and time.monotonic() >= started + timeout_s
        restarted = False
        if rc is None:
            # Timed out (the whole command must stop, not only its children), or the shell
            # died (exit, exec) or is wedged in a builtin: resume in a new one.
            if not timed_out:
                try:
                    rc = self._shell.process.wait(timeout=self._grace)
                except subprocess.TimeoutExpired:
                    rc = None
            self.stop()
            self.start(restore=True)
            self.restarts += 1
            restarted = True
        if timed_out:
            rc = TIMEOUT_EXIT_CODE
        output, truncated = read_capped(str(self._io_host / f"out.{n}"), self._cap)
        return CommandResult(
            output=output,
            exit_code=rc,
            timed_out=timed_out,
            shell_restarted=restarted,
            output_truncated=truncated,
            duration_s=time.monotonic() - started,
        )

    # -- internals -------------------------------------------------------------------
    def _send(self, text: str) -> None:
        try:
            self._shell.process.stdin.write(text.encode())
            self._shell.process.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def _wait_for(self, n: int, deadline: float) -> int | None:
        """Read the shell's stdout until the done line of command n; None if it never comes."""
        stdout = self._shell.process.stdout
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
            ready, _, _ = select.select([stdout], [], [], min(remaining, 0.5))
            if not ready:
                continue
            chunk = os.read(stdout.fileno(), 65536)
            if not chunk:
                return None
            self._buffer = (self._buffer + chunk)[-65536:]

    def _remove_old_outputs(self, n: int) -> None:
        for path in (self._ctl_host / f"cmd.{n - 1}", self._io_host / f"out.{n - 1}"):
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except IsADirectoryError:
                shutil.rmtree(path, ignore_errors=True)  # the agent made it a folder
