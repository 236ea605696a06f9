"""The shell's channel to a bash started on this machine: pipes in and out, the agent its process tree, found by cgroup or tree."""

from __future__ import annotations

import os
import subprocess

from ..polling import readable
from ..limits import ResourceLimits
from ..proctree import descendants, kill_process_tree


def agent_pids(limits: ResourceLimits, process: subprocess.Popen | None) -> list[int]:
    """Every process of the agent's now: its cgroup's, else the shell's process tree (for the oracle)."""
    if limits.cgroup_dirs:
        return limits.pids()
    return [process.pid, *descendants(process.pid)] if process is not None else []


def agents_network(pids: list[int]) -> str | None:
    """The network namespace of one of ``pids`` that is not the harness's own (``/proc/PID/ns/net``), while one is alive."""
    mine = os.readlink("/proc/self/ns/net")
    for pid in pids:
        path = f"/proc/{pid}/ns/net"
        try:
            if os.readlink(path) != mine:
                return path
        except OSError:
            continue
    return None


class ProcessChannel:
    """The shell's channel to a bash started here: pipes in and out; the agent is its process tree."""

    def __init__(self, process: subprocess.Popen) -> None:
        if process.stdin is None or process.stdout is None:
            raise ValueError("the shell's process needs pipes for stdin and stdout")
        self.process = process
        self._stdin, self._stdout = process.stdin, process.stdout

    def send(self, data: bytes) -> None:
        try:
            self._stdin.write(data)
            self._stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def receive(self, timeout_s: float) -> bytes | None:
        stdout = self._stdout
        if not readable([stdout], timeout_s):
            return b""
        return os.read(stdout.fileno(), 65536) or None

    def exit_code(self, wait_s: float) -> int | None:
        try:
            return self.process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        kill_process_tree(self.process)

    def release(self) -> None:
        for stream in (self._stdin, self._stdout):
            try:
                stream.close()
            except OSError:
                pass
