"""What a run mode is: the items it collects, the test they run, what it logs and summarises.

A mode is one module of this package holding one :class:`Mode` object and the fixture its
test asks for; :mod:`pytest_termrl.modes` lists them. The plugin collects, logs and
summarises by asking the run's mode, never by comparing mode names. What a mode needs of
the plugin lives here (the stash keys it reads) or comes as an argument (the controller,
seen through :class:`~.protocol.ControllerView`): no mode imports the plugin.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Callable

import pytest

from ..episode import EpisodeSpec
from ..faults import CLEAN
from ..report.record import EndReason
from ..settings import TermrlOptions
from ..tasks.model import Task
from ..tasks.suite import LoadedTask
from .protocol import ControllerView

RECORD_KEY = pytest.StashKey[dict]()
"""item.stash: the plain-builtins record a mode's fixture made; it rides on the call report."""

OPTIONS_KEY = pytest.StashKey[TermrlOptions]()
"""config.stash: the run's options, read once at configure by the plugin; modes read them here."""


def run_options(config: pytest.Config) -> TermrlOptions:
    """The run's options, as the plugin stashed them at configure."""
    return config.stash[OPTIONS_KEY]


class Mode:
    name: str = ""
    flag: str | None = None
    """The command-line flag that selects this mode (None: the default mode)."""
    flag_help: str = ""
    test_name: str = "test_episode"
    test: Callable = staticmethod(lambda termrl_spec: None)
    """The test function every item of this mode runs (it asks for the mode's fixture)."""
    require_contracts: bool = True
    """Whether a suite without a frozen contract per task is a collection error."""
    plays_agent: bool = False
    """Whether items are played by the run's agent (so the model server and --termrl-agent matter)."""
    resumable: bool = False
    """Whether --termrl-resume skips items whose key the log already holds."""
    makes_suites: bool = False
    """Whether a folder of task directories without contracts.jsonl is collected as a new suite."""

    def log_file(self, options: TermrlOptions) -> Path | None:
        """The JSONL this mode appends a line to for every finished item (None: no log)."""
        return None

    def specs(self, suite_id: str, loaded: LoadedTask, options: TermrlOptions) -> list[tuple[EpisodeSpec, str]]:
        """The items of one task: (spec, the fault family its markers name)."""
        raise NotImplementedError

    def output_paths(self, options: TermrlOptions) -> list[tuple[str, Path]]:
        """(what, path) of every file the run writes, checked writable at configure, before any item runs."""
        log = self.log_file(options)
        return [(f"{self.name} log", log)] if log is not None else []

    def log_line(self, record: dict) -> dict | None:
        """The line the log gets for an item's record (None: nothing logged)."""
        return None

    def failure_record(
        self, spec: EpisodeSpec, options: TermrlOptions, message: str, *, end_reason: EndReason = EndReason.HARNESS_ERROR,
        model: str | None = None, task: Task | None = None,
    ) -> dict | None:
        """The record of an item that never finished: its setup failed, or its worker died
        (``end_reason`` :attr:`EndReason.WORKER_CRASHED`). None: the failure is only pytest's."""
        return None

    def finish(self, controller: ControllerView, config: pytest.Config) -> dict | None:
        """At the end of the session, on the controller: write what the records add up to.

        Returns what :meth:`summary` then shows (None: nothing beyond the records).
        """
        return None

    def summary(self, terminalreporter: pytest.TerminalReporter, controller: ControllerView, finished: dict | None) -> None:
        """The mode's section of the terminal summary, on the controller (``finished``: what :meth:`finish` returned)."""


def clean_specs(suite_id: str, loaded: LoadedTask, names: Iterable[str], prompt: str) -> list[tuple[EpisodeSpec, str]]:
    """One clean item per name, labelled '<task>-<name>' (the validity modes' grid)."""
    task_id = loaded.task.id
    return [(EpisodeSpec(suite_id, task_id, name, prompt, 0, label=f"{task_id}-{name}"), CLEAN) for name in names]


def keep_record(request: pytest.FixtureRequest, spec: EpisodeSpec, result: dict) -> dict:
    """An item's result with its suite, stashed for its report; what the mode's test then judges."""
    record = {**result, "suite": spec.suite}
    request.node.stash[RECORD_KEY] = record
    return record
