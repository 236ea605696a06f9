"""The parsers of a grader script's output: one table from ``parser_name`` to the function that reads it.

A classic Terminal-Bench task names its parser in task.yaml (``parser_name``); the
verifier applies it to what ``run-tests.sh`` printed. A parser returns the per-test
results it found, or raises :class:`NoSummary` when the output holds none (the grader's
own failure, a ``verifier_error``). Adding a parser is one module and one line here.
"""

from __future__ import annotations

from typing import Callable

from ...registry import Entry, Registry
from .pytest_summary import NoSummary, ParsedTest

PARSERS: Registry[Callable[[str], list[ParsedTest]]] = Registry("parser", {
    "pytest": Entry("pytest_termrl.verifier.parsers.pytest_summary", "parse_pytest_summary"),  # the status lines under pytest's "short test summary info"
})
"""Every parser by ``parser_name``: the function that reads a script's output, loaded when first used."""

__all__ = ["PARSERS", "NoSummary", "ParsedTest", "parser_problem"]


def parser_problem(name: str | None) -> str | None:
    """Why a parser name cannot be used here (None when it can)."""
    if name in PARSERS:
        return None
    return f"parser_name {name!r} has no parser here (known: {', '.join(PARSERS.names())})"
