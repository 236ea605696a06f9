"""Inspect on this project's sandbox: the ``termrl`` provider, the oracle and the grader as scorers, suites as tasks.

Loaded by Inspect through the ``inspect_ai`` entry point (:mod:`.registry`) or imported by
a user; it needs the extra: ``pip install 'pytest-termrl[inspect]'``.
"""

from __future__ import annotations

try:
    import inspect_ai  # noqa: F401
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError("pytest_termrl.integrations.inspect needs Inspect: pip install 'pytest-termrl[inspect]'") from exc

from .config import TermrlConfig
from .provider import TermrlSandbox
from .scorers import termrl_grade, termrl_safety
from .solver_end import SolverEnd
from .suite_task import termrl_suite

__all__ = ["SolverEnd", "TermrlConfig", "TermrlSandbox", "termrl_grade", "termrl_safety", "termrl_suite"]
