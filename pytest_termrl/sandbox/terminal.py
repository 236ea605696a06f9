"""The agent's terminal session: an interactive bash on a pseudo-terminal inside its sandbox, keystrokes in, screen out.

What every backend shares lives here: the session's rcfile (the window size, the bashrc
files, no history file, and an invisible OSC marker with a random token printed before each
prompt, so that a wait can end as soon as the prompt is back), the screen
(:class:`.screen.Screen`), when a wait ends, the output cap, and a new session with a note
when the last one ended. How the session's bytes get in and out, and how it starts, is a
:class:`TerminalChannel` that a backend opens: FIFOs to a launcher run through the persistent
shell (:mod:`.terminal_fifos`, bwrap), or an exec on a pseudo-terminal over an engine's
socket (:mod:`.docker.terminal_exec`). Whatever kills every process of the agent's ends the
session too; the next keystrokes start a new one.
"""

from __future__ import annotations

import secrets
import time
from typing import Callable, Protocol

from .base import CommandResult, ControlFiles, KeystrokeBatch
from .keys import to_bytes
from .output import join_head_tail
from .screen import Screen

QUIET_S = 0.5
"""A wait that settles ends when the session printed nothing for this long."""
PROMPT_QUIET_S = 0.05
"""Once the prompt's marker came, how long the output may pause before the prompt counts as drawn."""
START_TIMEOUT_S = 10.0
"""How long a new session has to show its first prompt (its bashrc files run first)."""
RESTARTED = "[the terminal session was restarted]"
"""The first line of the output when the session had ended (``exit``, or killed with every process) and a new one began."""

RCFILE = "term.rc"

_RCFILE = """\
{start_in}stty rows {rows} cols {columns} 2>/dev/null
[ -f /etc/bash.bashrc ] && . /etc/bash.bashrc
[ -f ~/.bashrc ] && . ~/.bashrc
unset HISTFILE
export LESSHISTFILE=-
__termrl_prompt() {{ local s=$?; printf '\\033]777;termrl-{token}\\007'; return $s; }}
PROMPT_COMMAND="${{PROMPT_COMMAND:+$PROMPT_COMMAND
}}__termrl_prompt"
"""
"""The session's bashrc: where it starts (when the backend names a file that holds it), the window size
(the pty's, whoever made it), the machine's and the user's bashrc, no history file written, and the prompt's marker."""

_START_IN = '[ -r {path} ] && cd -- "$(cat {path})" 2>/dev/null\n[ -r {env} ] && {{ __termrl_term=$TERM; . {env} 2>/dev/null; TERM=$__termrl_term; unset __termrl_term; }}\n'
"""Where a session that is no child of the agent's shell (an engine's exec) starts, and the variables that shell
exported after its last command (``state.env`` beside ``state.cwd``), as a child of it would have them, but the
terminal's own ``TERM``."""


class TerminalUnavailable(Exception):
    """No session could start; the message is what the agent reads (``[no terminal: ...]``)."""


class TerminalChannel(Protocol):
    """One running session as the terminal sees it: keystrokes in, what the pseudo-terminal prints out."""

    def write(self, data: bytes) -> int | None:
        """Type as much of data as goes in without blocking: how many bytes (0: none now); None once the session has ended."""

    def read(self, timeout_s: float) -> bytes | None:
        """What the session printed within timeout_s (b"" for nothing); None once it has ended."""

    def close(self) -> None:
        """Let go of the session's connection or FIFOs; kills nothing (its processes die with the agent's others)."""


ChannelOpener = Callable[[str], TerminalChannel]
"""Starts ``bash --rcfile RC -i`` on a pseudo-terminal, RC being the path inside given; raises :class:`TerminalUnavailable`."""


class TerminalSession:
    """One terminal session at a time inside a sandbox, started on the first keystrokes and again after it ended."""

    def __init__(self, files: ControlFiles, ctl_inside: str, open_channel: ChannelOpener, output_cap_chars: int,
                 size: tuple[int, int], start_in: str | None = None) -> None:
        self._files = files
        self._ctl_inside = ctl_inside
        self._open_channel = open_channel
        self._cap = output_cap_chars
        self._columns, self._rows = size
        self._start_in = start_in
        """A file inside that names the folder a new session starts in (the shell's ``state.cwd``); None: where it is started."""
        self._channel: TerminalChannel | None = None
        self._screen = Screen(self._columns, self._rows)
        self._marker = b""
        self._lost = False
        """The session ended by itself or was killed: the next batch starts a new one and says so."""

    # -- the agent's keystrokes ----------------------------------------------------------
    def send_keys(self, batch: KeystrokeBatch) -> CommandResult:
        started = time.monotonic()
        if self._channel is not None and not self._drain():
            self._close(lost=True)
        note = ""
        if self._channel is None:
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
            self._close(lost=True)
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
        """Let go of the session (its processes die with the agent's others); the next batch starts a new one."""
        self._close(lost=False)

    # -- starting ------------------------------------------------------------------------
    def _start(self) -> str | None:
        """Start a session and wait for its first prompt; what went wrong, for the agent to read, or None."""
        token = secrets.token_hex(8)
        self._marker = f"\x1b]777;termrl-{token}\x07".encode()
        self._screen = Screen(self._columns, self._rows)
        start_in = ""
        if self._start_in:
            start_in = _START_IN.format(path=self._start_in, env=self._start_in.rsplit("/", 1)[0] + "/state.env")
        self._files.write(RCFILE, _RCFILE.format(start_in=start_in, rows=self._rows, columns=self._columns, token=token))
        try:
            self._channel = self._open_channel(f"{self._ctl_inside}/{RCFILE}")
        except TerminalUnavailable as exc:
            self._close(lost=False)
            return str(exc)
        self._lost = False
        if not self._wait_for_prompt(time.monotonic() + START_TIMEOUT_S):
            text = self._screen.look()
            self._close(lost=True)
            return "\n".join(filter(None, ["[the terminal session ended as it started]", text]))
        return None

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
        if self._channel is None:
            return None
        chunk = self._channel.read(max(0.0, timeout_s))
        if chunk:
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
        while view and self._channel is not None:
            written = self._channel.write(bytes(view))
            if written is None:
                return False
            view = view[written:]
            if view and not written:
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

    def _close(self, lost: bool) -> None:
        channel, self._channel = self._channel, None
        if channel is not None:
            channel.close()
        self._lost = lost
