"""Calls that may start a sandbox's processes, run on threads that live as long as the process.

A bwrap sandbox dies with the thread that started it (``--die-with-parent`` is the parent
*thread*'s death signal), and the worker threads that async harnesses (Harbor, Inspect)
hand blocking calls to exit when idle. So a session is opened, and runs its processes, on
a pool whose threads never exit; the caller's thread only waits.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, TypeVar

T = TypeVar("T")

WORKERS = 64
"""Enough for every exec of a busy run at once (each waits on its process, using no CPU)."""

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def on_lasting_thread(call: Callable[[], T]) -> T:
    """``call()`` on a thread that outlives it (the calling thread blocks until it returns or raises)."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="termrl-lasting")
        pool = _pool
    if threading.current_thread().name.startswith("termrl-lasting"):
        return call()  # already on one: never wait on the pool from inside it
    return pool.submit(call).result()
