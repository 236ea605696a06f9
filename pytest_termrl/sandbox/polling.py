"""Waiting for input with poll(2), never select(2).

select(2) refuses any descriptor above 1023, and a long run reaches that: every sandbox's
shell pipes, every pooled engine connection. poll has no such limit.
"""

from __future__ import annotations

import math
import select
from typing import Iterable

_READY = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR


def readable(sources: Iterable, timeout_s: float) -> list[int]:
    """The descriptors among ``sources`` (ints, or objects with ``fileno()``) that can be read
    without blocking (data, or EOF) within timeout_s; [] if none."""
    poller = select.poll()
    for source in sources:
        poller.register(source, select.POLLIN | select.POLLPRI)
    return [fd for fd, events in poller.poll(max(0, math.ceil(timeout_s * 1000))) if events & _READY]
