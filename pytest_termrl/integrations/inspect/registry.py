"""The module Inspect's ``inspect_ai`` entry point loads: importing it registers what this project lends Inspect.

The ``termrl`` sandbox provider, the ``termrl_safety`` / ``termrl_grade`` scorers and the
``termrl_suite`` task register themselves with Inspect's registry when their modules load.
"""

from __future__ import annotations

from .provider import TermrlSandbox
from .scorers import termrl_grade, termrl_safety
from .suite_task import termrl_suite

__all__ = ["TermrlSandbox", "termrl_grade", "termrl_safety", "termrl_suite"]
