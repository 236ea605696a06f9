"""Run modes, one module each: a new mode is one module plus one line here."""

from __future__ import annotations

from . import audit, freeze, run, selfcheck
from .base import RECORD_KEY, Mode

MODES: dict[str, Mode] = {m.name: m for m in (run.MODE, freeze.MODE, selfcheck.MODE, audit.MODE)}
"""Every mode by name; the first is the default, the others are chosen by their flag."""

DEFAULT_MODE = "run"

__all__ = ["DEFAULT_MODE", "MODES", "Mode", "RECORD_KEY"]
