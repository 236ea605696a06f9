"""The verifier: hidden tests in a fresh sandbox, authenticated per-test results."""

from .verdict import TestOutcome, Verdict
from .verify import run_hidden_tests, trusted_toolchain

__all__ = ["TestOutcome", "Verdict", "run_hidden_tests", "trusted_toolchain"]
