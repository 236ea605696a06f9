"""Errors that name the file, the field and what was expected."""

from __future__ import annotations

from pathlib import Path


class TermrlError(Exception):
    """Base of every error the harness raises on purpose."""


class TaskFormatError(TermrlError):
    """A task or contract file does not have the shape the loader expects."""

    def __init__(self, path: Path | str, field: str | None, expected: str) -> None:
        self.path = str(path)
        self.field = field
        self.expected = expected
        where = f"{self.path}: field '{field}'" if field else self.path
        super().__init__(f"{where}: {expected}")


class ContractMismatchError(TermrlError):
    """A task's files no longer match the hashes frozen in its contract."""


class SandboxError(TermrlError):
    """The sandbox could not be created or used; a harness error, not an agent failure."""


class VerifierError(TermrlError):
    """The hidden tests could not be run or their results could not be trusted."""
