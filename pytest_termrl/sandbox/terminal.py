"""The agent's terminal session: an interactive bash on a pseudo-terminal inside its sandbox, keystrokes in, screen out.

The session lives in the same sandbox as the agent's persistent shell (:mod:`.shell`), as a
child of it: the harness runs a short launcher through the shell's protocol (not one of the
agent's commands) that starts, in a session of its own, util-linux ``script`` (or Python's
``pty`` module where ``script`` is missing) running ``bash -i``. Its input and output are two
FIFOs in the shell's output folder, which the harness opens from the host and keeps open:
``term.in`` read-write, so that the session never sees the end of its input, and ``term.out``
without blocking. Being the shell's child, the session starts in the shell's working
directory with its exported variables, lies in the sandbox's namespaces and cgroup, and dies
with the shell: whatever kills every process of the agent's kills it too.

Its rcfile sets the window size, sources the bashrc files, and prints an invisible OSC
marker with a random token before each prompt, so that a wait can end as soon as the
prompt is back. What the session prints is rendered by :class:`.screen.Screen`.
"""

from __future__ import annotations

import os
import secrets
import stat
import time
from pathlib import Path

from .base import CommandResult, KeystrokeBatch
from .control_files import remove_entry
from .keys import to_bytes
from .output import join_head_tail
from .polling import readable
from .screen import Screen
from .shell import PersistentShell

QUIET_S = 0.5
"""A wait that settles ends when the session printed nothing for this long."""
PROMPT_QUIET_S = 0.05
"""Once the prompt's marker came, how long the output may pause before the prompt counts as drawn."""
START_TIMEOUT_S = 10.0
"""How long a new session has to show its first prompt (its bashrc files run first)."""
LAUNCH_TIMEOUT_S = 10.0
"""The launcher's timeout as a command of the persistent shell (it only starts the session)."""
RESTARTED = "[the terminal session was restarted]"
"""The first line of the output when the session had ended (``exit``, or killed with every process) and a new one began."""

IN_FIFO, OUT_FIFO = "term.in", "term.out"
RCFILE, LAUNCHER = "term.rc", "term.sh"

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

_RCFILE = """\
stty rows {rows} cols {columns} 2>/dev/null
[ -f /etc/bash.bashrc ] && . /etc/bash.bashrc
[ -f ~/.bashrc ] && . ~/.bashrc
unset HISTFILE
export LESSHISTFILE=-
__termrl_prompt() {{ local s=$?; printf '\\033]777;termrl-{token}\\007'; return $s; }}
PROMPT_COMMAND="${{PROMPT_COMMAND:+$PROMPT_COMMAND
}}__termrl_prompt"
"""
"""The session's bashrc: the window size (the pty's, as ``script``'s stdin is no terminal), the
machine's and the user's bashrc, no history file written, and the prompt's marker."""


class TerminalSession:
    """One terminal session at a time inside a sandbox, started on the first keystrokes and again after it ended."""

    def __init__(self, shell: PersistentShell, io_host: Path, ctl_inside: str, io_inside: str, output_cap_chars: int,
                 size: tuple[int, int]) -> None:
        self._shell = shell
        self._io_host = io_host
        self._ctl_inside, self._io_inside = ctl_inside, io_inside
        self._cap = output_cap_chars
        self._columns, self._rows = size
        self._in_fd: int | None = None
        self._out_fd: int | None = None
        self._screen = Screen(self._columns, self._rows)
        self._marker = b""
        self._lost = False
        """The session ended by itself or was killed: the next batch starts a new one and says so."""

    # -- the agent's keystrokes ----------------------------------------------------------
    def send_keys(self, batch: KeystrokeBatch) -> CommandResult:
        started = time.monotonic()
        if self._out_fd is not None and not self._drain():
            self._close_fifos(lost=True)
        note = ""
        if self._out_fd is None:
            note = RESTARTED if self._lost else ""
            problem = self._start()
            if problem is not None:
                text = "\n".join(filter(None, [note, problem]))
                return CommandResult(output=text, exit_code=None, duration_s=time.monotonic() - started)
        data = b"".join(to_bytes(key) for key in batch.keys)
        ended = not self._write(data, time.monotonic() + max(batch.max_wait_s, 1.0))
        timed_out = False
        if not ended:
            timed_out, ended = self._wait(batch, time.monotonic())
        if ended:
            self._close_fifos(lost=True)
        text = self._screen.look()
        if note:
            text = f"{note}\n{text}"
        truncated = len(text) > self._cap
        if truncated:
            raw = text.encode(errors="surrogateescape")
            text = join_head_tail(raw[: self._cap * 2], raw[-self._cap * 2 :], len(raw), self._cap)
        return CommandResult(output=text, exit_code=None, timed_out=timed_out, output_truncated=truncated,
                             duration_s=time.monotonic() - started)

    def stop(self) -> None:
        """Let go of the session's FIFOs (its processes die with the agent's others); the next batch starts a new one."""
        self._close_fifos(lost=False)

    # -- starting ------------------------------------------------------------------------
    def _start(self) -> str | None:
        """Start a session and wait for its first prompt; what went wrong, for the agent to read, or None."""
        token = secrets.token_hex(8)
        self._marker = f"\x1b]777;termrl-{token}\x07".encode()
        self._screen = Screen(self._columns, self._rows)
        files = self._shell.files
        files.write(RCFILE, _RCFILE.format(rows=self._rows, columns=self._columns, token=token))
        files.write(LAUNCHER, _LAUNCHER.format(rcfile=f"{self._ctl_inside}/{RCFILE}"))
        try:
            self._out_fd, self._in_fd = self._make_fifo(OUT_FIFO, os.O_RDONLY), self._make_fifo(IN_FIFO, os.O_RDWR)
        except OSError as exc:
            self._close_fifos(lost=False)
            return f"[no terminal: its FIFOs could not be made: {exc}]"
        io = self._io_inside
        launched = self._shell.run(_LAUNCH.format(launcher=f"{self._ctl_inside}/{LAUNCHER}", fifo_in=f"{io}/{IN_FIFO}",
                                                  fifo_out=f"{io}/{OUT_FIFO}"), timeout_s=LAUNCH_TIMEOUT_S)
        if launched.exit_code != 0:
            self._close_fifos(lost=False)
            return f"[no terminal: its launcher failed (exit code {launched.exit_code}): {launched.output.strip()}]"
        self._lost = False
        if not self._wait_for_prompt(time.monotonic() + START_TIMEOUT_S):
            text = self._screen.look()
            self._close_fifos(lost=True)
            return "\n".join(filter(None, ["[the terminal session ended as it started]", text]))
        return None

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

    def _wait_for_prompt(self, deadline: float) -> bool:
        """Read until the first prompt is drawn (or the deadline: a slow bashrc); False when the session ended."""
        seen, tail = False, b""
        last = time.monotonic()
        while True:
            now = time.monotonic()
            if now >= deadline or (seen and now - last >= PROMPT_QUIET_S):
                return True
            chunk = self._read(min(deadline, last + PROMPT_QUIET_S) - now if seen else deadline - now)
            if chunk is None:
                return False
            if chunk:
                last = time.monotonic()
                seen = seen or self._marker in tail + chunk
                tail = chunk[-len(self._marker):]

    # -- input and output ----------------------------------------------------------------
    def _read(self, timeout_s: float) -> bytes | None:
        """What the session printed within timeout_s, fed to the screen (b"" for nothing); None once it has ended."""
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
        self._screen.feed(chunk)
        return chunk

    def _drain(self) -> bool:
        """Read what the session printed since the last batch (for QUIET_S at most); False when it has ended meanwhile."""
        deadline = time.monotonic() + QUIET_S
        while time.monotonic() < deadline:
            chunk = self._read(0)
            if chunk is None:
                return False
            if not chunk:
                break
        return True

    def _write(self, data: bytes, deadline: float) -> bool:
        """Type ``data``, reading the output while the session catches up; False when the session ended."""
        view = memoryview(data)
        while view and self._in_fd is not None:
            try:
                view = view[os.write(self._in_fd, view):]
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    break  # the session reads no more input: the rest is not typed
                if self._read(0.05) is None:
                    return False
        return True

    def _wait(self, batch: KeystrokeBatch, sent: float) -> tuple[bool, bool]:
        """Read the screen after the keys: (timed out with output still coming, the session ended)."""
        deadline = sent + batch.max_wait_s
        last: float | None = None
        prompt, tail = False, b""
        while True:
            now = time.monotonic()
            if now >= deadline:
                return last is not None and now - last < QUIET_S, False
            until = deadline
            if batch.settle:
                until = min(deadline, (last or sent) + (PROMPT_QUIET_S if prompt else QUIET_S))
                if now >= until:
                    return False, False
            chunk = self._read(until - now)
            if chunk is None:
                return False, True
            if chunk:
                last = time.monotonic()
                prompt = prompt or self._marker in tail + chunk
                tail = chunk[-len(self._marker):]

    def _close_fifos(self, lost: bool) -> None:
        for fd in (self._in_fd, self._out_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._in_fd = self._out_fd = None
        self._lost = lost
