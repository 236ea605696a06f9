"""The verifier: hidden tests in a fresh sandbox, authenticated per-test results."""

from .verify import TestOutcome, Verdict, run_hidden_tests

__all__ = ["TestOutcome", "Verdict", "run_hidden_tests"]
