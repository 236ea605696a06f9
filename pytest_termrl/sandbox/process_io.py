"""Feeding a one-shot process its input and collecting its two outputs, capped, under a deadline.

Shared by every backend's :meth:`.base.Sandbox.exec`: reading stdout and stderr on threads
keeps a process that writes a lot to one of them from blocking on the other; what is past
the cap is read and dropped, so the process never stalls on a full pipe.
"""

from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import dataclass
from typing import IO, Callable

OUTPUT_GRACE_S = 2.0
"""How long both outputs may stay open, all told, once the process is gone: a child it left running may hold them
(an engine's exec waits as long)."""


@dataclass
class _Sink:
    cap: int
    data: bytearray
    truncated: bool = False

    def take(self, stream: IO[bytes]) -> None:
        while True:
            chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            if not chunk:
                return
            room = self.cap - len(self.data)
            if len(chunk) > room:
                self.truncated = True
            if room > 0:
                self.data += chunk[:room]


@dataclass(frozen=True)
class Collected:
    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    truncated: bool
    duration_s: float


def collect(process: subprocess.Popen, stdin: bytes, timeout_s: float, cap: int,
            kill: Callable[[], None]) -> Collected:
    """Write ``stdin`` and close it, read both outputs up to ``cap`` each, wait at most ``timeout_s``.

    At the deadline ``kill()`` ends every process the run started (the caller knows how: a
    session inside a pid namespace is not the launcher's process group) and the result says
    ``timed_out`` with no return code.
    """
    start = time.monotonic()
    sinks = (_Sink(cap, bytearray()), _Sink(cap, bytearray()))
    readers = [threading.Thread(target=sink.take, args=(stream,), daemon=True)
               for sink, stream in zip(sinks, (process.stdout, process.stderr))]
    for reader in readers:
        reader.start()
    writer = threading.Thread(target=_feed, args=(process.stdin, stdin), daemon=True)
    writer.start()
    timed_out = False
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill()
        process.wait()
    grace = time.monotonic() + OUTPUT_GRACE_S  # a child left running (a service, one that escaped the kill) may hold a pipe
    for reader in readers:
        reader.join(timeout=max(0.0, grace - time.monotonic()))
    out, err = sinks
    return Collected(None if timed_out else process.returncode, bytes(out.data), bytes(err.data), timed_out,
                     out.truncated or err.truncated, time.monotonic() - start)


def _feed(pipe: IO[bytes] | None, data: bytes) -> None:
    if pipe is None:
        return
    try:
        if data:
            pipe.write(data)
    except (BrokenPipeError, OSError):
        pass  # the process did not read it all: as a shell's pipe would
    finally:
        try:
            pipe.close()
        except OSError:
            pass
