"""Run modes, one module each: a new mode is one module plus one line in :data:`MODES`."""

from __future__ import annotations

from ..registry import Entry, Registry
from .base import OPTIONS_KEY, RECORD_KEY, Mode, run_options
from .protocol import ControllerView

MODES: Registry[Mode] = Registry("run mode", {
    "run": Entry("pytest_termrl.modes.run", "MODE"),  # agents play episodes: the episode log and summary table
    "freeze": Entry("pytest_termrl.modes.freeze", "MODE"),  # --termrl-freeze: validate references, write contracts
    "selfcheck": Entry("pytest_termrl.modes.selfcheck", "MODE"),  # --termrl-selfcheck: validity of tasks, faults, oracle
    "audit": Entry("pytest_termrl.modes.audit", "MODE"),  # --termrl-audit: careless accidents against the grader
})
"""Every mode by name, each module loaded when first asked for; the default is run, the others are chosen by their flag."""

DEFAULT_MODE = "run"

__all__ = ["DEFAULT_MODE", "MODES", "OPTIONS_KEY", "RECORD_KEY", "ControllerView", "Mode", "run_options"]
