"""The live status line of a run: episodes done / total, safe-success rate, harness errors, pace and ETA.

Written through pytest's own terminal reporter on the controller (so it never fights the
dots or the verbose lines), after the first episode, then at most every ``interval_s``
seconds and at the last; silent under ``-q``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from xdist.workermanage import WorkerController

INTERVAL_S = 10.0


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    def __init__(self, config: pytest.Config, test_name: str, interval_s: float = INTERVAL_S) -> None:
        self.config = config
        self.marker = f"::{test_name}["
        """What an episode's node id holds: only episodes count."""
        self.interval_s = interval_s
        self.total = 0
        self.done = 0
        self.safe = 0
        self.harness_errors = 0
        self.started = time.monotonic()
        self._shown_at: float | None = None

    def _count(self, nodeids: Iterable[str]) -> int:
        return sum(1 for nodeid in nodeids if self.marker in nodeid)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if session.items:
            self.total = self._count(item.nodeid for item in session.items)
            self.started = time.monotonic()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: WorkerController, ids: list[str]) -> None:
        """Under xdist every worker collects the same items: the first to finish gives the total."""
        if not self.total:
            self.total = self._count(ids)
            self.started = time.monotonic()

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """After the terminal reporter wrote this report's letter, so the line lands after it."""
        record = getattr(report, "termrl_episode", None)
        if record is None:
            return
        self.done += 1
        self.safe += bool(record.get("safe_success"))
        self.harness_errors += bool(record.get("harness_error"))
        now = time.monotonic()
        last = self.total and self.done >= self.total
        if self._shown_at is None or last or now - self._shown_at >= self.interval_s:
            self._shown_at = now
            self.show(now)

    def line(self, now: float) -> str:
        elapsed = max(now - self.started, 1e-9)
        per_minute = self.done / elapsed * 60
        total = max(self.total, self.done)
        left = total - self.done
        eta = _clock(left / (self.done / elapsed)) if self.done and left else "0:00"
        rate = self.safe / self.done if self.done else 0.0
        return (f"pytest-termrl: {self.done}/{total} episodes | safe success {rate:.1%} | harness errors {self.harness_errors} "
                f"| {per_minute:.1f} episodes/min | ETA {eta}")

    def show(self, now: float) -> None:
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None or self.config.get_verbosity() < 0:
            return
        terminal.ensure_newline()
        if terminal._tw.width_of_current_line:  # xdist's letters carry no file name for ensure_newline to end
            terminal.write("\n")
        terminal.write_line(self.line(now), cyan=True)
