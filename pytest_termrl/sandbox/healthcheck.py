"""A task's healthcheck, tried in its prepared sandbox until it passes or the environment is unhealthy.

It runs in the agent's shell (as the agent's user; Harbor runs it as the image's user,
usually root, so a check that needs root fails here and says so), in a child bash so that
it cannot change the shell the agent gets.
"""

from __future__ import annotations

import shlex
import time
from typing import Callable, Protocol

from ..errors import SetupFailed
from ..tasks.model import Healthcheck


class _Result(Protocol):
    """What a try needs of a command's result (``CommandResult`` has it; named here so the sandbox's base can import this)."""

    @property
    def output(self) -> str: ...

    @property
    def exit_code(self) -> int | None: ...

    @property
    def timed_out(self) -> bool: ...


def wait_healthy(
    run: Callable[[str, float], _Result],
    check: Healthcheck,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Try ``check`` until it passes: the number of tries; SetupFailed (stage 'healthcheck') when it never does."""
    command = f"bash -c {shlex.quote(check.command)}"
    start_ends = clock() + check.start_period_s
    tries = failures = 0
    while True:
        tries += 1
        result = run(command, check.timeout_s)
        if result.exit_code == 0 and not result.timed_out:
            return tries
        if clock() < start_ends:  # the start period: a failure does not count
            sleep(check.start_interval_s)
            continue
        failures += 1
        if failures >= check.retries:
            raise SetupFailed(
                f"{check.source} command {check.command!r}", result.exit_code, check.timeout_s if result.timed_out else None,
                result.output, stage="healthcheck", tries=tries,
            )
        sleep(check.interval_s)
