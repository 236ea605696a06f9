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


class SetupFailed(SandboxError):
    """A task's setup script failed or ran out of time: one readable block, shown as the episode's failure."""

    def __init__(
        self, script: Path | str, exit_code: int | None, timeout_s: float | None, output: str, lines: int = 15, *, stage: str = "setup",
        tries: int | None = None,
    ) -> None:
        self.script = str(script)
        self.exit_code = exit_code
        self.timeout_s = timeout_s
        self.stage = stage
        """'setup' (the setup script) or 'healthcheck' (the task's healthcheck never passed)."""
        self.tail = output.rstrip().splitlines()[-lines:]
        how = f"did not finish within {timeout_s:g} s" if timeout_s is not None else f"exited with code {exit_code}"
        if tries is not None:
            how = f"never passed in {tries} tries (the last {how})"
        shown = "\n".join(f"  | {line[:300]}" for line in self.tail) if self.tail else "  | (no output)"
        super().__init__(f"{stage} failed: {self.script} {how}; the last lines of its output:\n{shown}")


class VerifierError(TermrlError):
    """The hidden tests could not be run or their results could not be trusted."""
