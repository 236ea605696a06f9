"""The verdict a grader returns: per-test outcomes, the problems beyond them, a harness error."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..report.verdict_record import GradedTest, VerdictRecord


MESSAGE_CHARS = 1000
"""How much of a failing test's message the episode record keeps (the report shows it)."""


@dataclass
class TestOutcome:
    nodeid: str
    outcome: str
    message: str = ""


@dataclass
class Verdict:
    outcomes: list[TestOutcome] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Why the run does not count as complete beyond failed tests: missing, extra, skipped..."""
    error: str | None = None
    """Set when the verifier itself failed (a harness error: no trustworthy result), the grader's
    own files or script included (``verifier_error: FILE:LINE ...``)."""
    duration_s: float = 0.0
    artifacts: dict[str, str] = field(default_factory=dict)
    """Files the grader left in /logs/artifacts (Harbor's folder): relative path -> base64 of the
    bytes. The plugin writes them into the run directory and keeps only their names in the log."""
    artifacts_left_out: list[str] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(o.outcome == "passed" for o in self.outcomes)

    @property
    def total(self) -> int:
        return len(self.outcomes)

    @property
    def complete(self) -> bool:
        return self.error is None and not self.problems and self.total > 0 and self.passed == self.total

    @property
    def fraction(self) -> float:
        return self.passed / self.total if self.total else 0.0

    def to_record(self) -> VerdictRecord:
        """The verdict as the episode log keeps it: a failing test's message cut to ``MESSAGE_CHARS``, the duration to ms."""
        return VerdictRecord(**self._record_fields())

    def _record_fields(self) -> dict:
        return {
            "passed": self.passed,
            "total": self.total,
            "complete": self.complete,
            "tests": [GradedTest(o.nodeid, o.outcome, o.message[:MESSAGE_CHARS] if o.outcome != "passed" else "") for o in self.outcomes],
            "problems": list(self.problems),
            "error": self.error,
            "duration_s": round(self.duration_s, 3),
            "artifacts": dict(self.artifacts),
            "artifacts_left_out": list(self.artifacts_left_out),
        }

    def to_dict(self) -> dict:
        """The log line's ``verdict``: :meth:`to_record` as plain builtins."""
        return self.to_record().to_dict()
