"""The module Inspect's ``inspect_ai`` entry point loads: importing it registers what this project lends Inspect.

The ``termrl`` sandbox provider, the ``termrl_safety`` / ``termrl_grade`` scorers, the
``termrl_suite`` task and the hook that ends the agent's turn when the solver ends register
themselves with Inspect's registry when their modules load.
"""

from __future__ import annotations

from .provider import TermrlSandbox
from .scorers import termrl_grade, termrl_safety
from .solver_end import SolverEnd
from .suite_task import termrl_suite

__all__ = ["SolverEnd", "TermrlSandbox", "termrl_grade", "termrl_safety", "termrl_suite"]
