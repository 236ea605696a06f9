"""The controller's plugin object: it alone owns the log, the records and the summary.

Registered only on the xdist controller (or in a run without xdist), the way xdist's
``DSession`` and pytest-json-report's ``JSONReport`` are; workers only play items and put
their records on reports.
"""

from __future__ import annotations

from ..modes import Mode
from ..report.episodes import EpisodeLog, episode_key, read_episodes
from .keys import CONTROLLER_KEY, ENDPOINT_KEY
from ..settings import TermrlOptions


class Controller:
    def __init__(self, options: TermrlOptions, mode: Mode) -> None:
        self.options = options
        self.mode = mode
        self.records: list[dict] = []
        """Every record that came back on a report this session, in arrival order."""
        self.summary: dict | None = None
        self.done: set = set()
        """Keys of episodes an earlier run recorded (with --termrl-resume): not run again."""
        path = mode.log_file(options)
        self.log = EpisodeLog(path) if path is not None else None
        if self.log is not None:
            if options.resume:
                self.done = {episode_key(r) for r in read_episodes(path)}
            else:
                self.log.rotate()

    def pytest_runtest_logreport(self, report):
        record = getattr(report, "termrl_episode", None)
        if record is None:
            return
        self.records.append(record)
        line = self.mode.log_line(record)
        if line is not None and self.log is not None:
            self.log.append(line)

    def pytest_sessionfinish(self, session):
        if self.log is not None:
            self.log.close()
        self.mode.finish(self, session.config)

    def pytest_terminal_summary(self, terminalreporter):
        self.mode.summary(terminalreporter, self)


class XdistController:
    """Registered on the controller only when xdist is present: hands its knowledge to each worker."""

    def pytest_configure_node(self, node):
        controller = node.config.stash.get(CONTROLLER_KEY, None)
        node.workerinput["termrl_done"] = [list(k) for k in sorted(controller.done)] if controller else []
        endpoint = node.config.stash.get(ENDPOINT_KEY, None)
        if endpoint is not None:
            node.workerinput["termrl_endpoint"] = list(endpoint)


def done_keys(config) -> set:
    """Episode keys to skip: the controller's own set, or what it handed this worker."""
    if not hasattr(config, "workerinput"):
        controller = config.stash.get(CONTROLLER_KEY, None)
        return controller.done if controller else set()
    return {tuple(k) for k in config.workerinput.get("termrl_done", [])}
