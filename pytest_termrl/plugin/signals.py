"""SIGTERM ends a run the way Ctrl-C does: sandboxes torn down, finished episodes and the summary kept.

Python's default for SIGTERM is to die on the spot, which would leave the episode's
processes, mounts, cgroups and containers behind. Turned into KeyboardInterrupt, it takes
pytest's own interrupt path: fixture teardown closes the sandbox, the controller prints the
summary of what was recorded, the exit status says "interrupted". The controller passes a
SIGTERM on to its local xdist workers (a SIGTERM sent to it alone would otherwise leave
them to be killed), and a second SIGTERM is not caught.
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType


class TerminateAsInterrupt:
    """The SIGTERM handler of one pytest process; ``forward_to`` holds local worker pids (controller only)."""

    def __init__(self) -> None:
        self.forward_to: set[int] = set()
        self.installed = False

    def install(self) -> None:
        """Take SIGTERM over, unless something else already did or this is not the main thread."""
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return
        signal.signal(signal.SIGTERM, self._handle)
        self.installed = True

    def uninstall(self) -> None:
        if self.installed and signal.getsignal(signal.SIGTERM) == self._handle:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        self.installed = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
        for pid in sorted(self.forward_to):
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass  # already gone
        raise KeyboardInterrupt("SIGTERM")
