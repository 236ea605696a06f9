"""Machines opened on threads that live as long as the process.

A bwrap sandbox dies with the thread that started it (``--die-with-parent``), and the
worker threads async code hands blocking calls to exit when idle; so every session is
opened on one of a few threads of a pool that never shrinks, and only its later calls
(execs, which enter the running machine) go to the ordinary worker threads.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, TypeVar

from anyio import to_thread

T = TypeVar("T")

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _starter() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2), thread_name_prefix="termrl-inspect-open")
        return _pool


async def on_lasting_thread(call: Callable[[], T]) -> T:
    """``call()`` on a thread that outlives the sample (awaited without blocking the event loop)."""
    future = _starter().submit(call)
    return await to_thread.run_sync(future.result)
