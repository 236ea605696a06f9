"""The stash keys the plugin's modules share (config.stash and item.stash, never module state).

The controller's own key (``CONTROLLER_KEY``) is defined beside :class:`.controller.Controller`,
which it holds. The keys a mode reads too (the run's options, an item's record) are defined beside
:class:`~pytest_termrl.modes.Mode`, since modes never import the plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ..modes import run_options
from ..settings import TermrlOptions
from ..tasks.suite import LoadedTask

if TYPE_CHECKING:
    from ..serving.endpoints import EndpointPool
    from ..serving.server import ManagedServer
    from .signals import TerminateAsInterrupt

SUITES_KEY = pytest.StashKey[dict[tuple[str, str], LoadedTask]]()
"""config.stash: {(suite root, task id): LoadedTask} for every collected task."""

SERVER_KEY = pytest.StashKey["ManagedServer"]()
"""config.stash: the model server this run started (controller only)."""

ENDPOINT_KEY = pytest.StashKey[tuple[str, str | None]]()
"""config.stash: (base URL, served model name) of the openai agent's endpoint."""

LEFT_OUT_KEY = pytest.StashKey[list[dict[str, Any]]]()
"""config.stash: the task x fault family pairs that collection left out, with why (``left_out_pairs``)."""

POOL_KEY = pytest.StashKey["EndpointPool"]()
"""config.stash: this process's :class:`~pytest_termrl.serving.endpoints.EndpointPool` (the openai agent)."""

SIGTERM_KEY = pytest.StashKey["TerminateAsInterrupt"]()
"""config.stash: this process's SIGTERM handler (:class:`.signals.TerminateAsInterrupt`)."""


def termrl_options(config: pytest.Config) -> TermrlOptions:
    """The run's options, read once at configure."""
    return run_options(config)


def is_controller(config: pytest.Config) -> bool:
    """True on the xdist controller and in a run without xdist: where logs and summaries are written."""
    return not hasattr(config, "workerinput")


def loaded_task(config: pytest.Config, suite: str, task_id: str) -> LoadedTask:
    return config.stash[SUITES_KEY][(suite, task_id)]
