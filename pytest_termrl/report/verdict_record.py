"""The log's typed verdict: each graded test, and the parts a script, parsed or multi-step grader adds.

Built by the verifier's verdicts (``Verdict.to_record``), held by :class:`.record.EpisodeRecord`,
written back to a log line's ``verdict`` exactly as it was read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar


def unknown_keys(data: Mapping[str, Any], names: Iterable[str]) -> dict:
    """The keys of ``data`` a record does not name: kept in its ``extra``, written back as they were."""
    known = set(names)
    return {k: v for k, v in data.items() if k not in known}


@dataclass
class GradedTest:
    """One test of a verdict as the log keeps it: its outcome, and the start of its message when it did not pass."""

    nodeid: str
    outcome: str
    message: str = ""


@dataclass
class VerdictRecord:
    """A grader's verdict as the episode log keeps it (the line's ``verdict``): its tests, problems and error.

    Built once from the grader's ``Verdict`` (``Verdict.to_record``) or read back from a log
    line; ``to_dict`` is the line's nested JSON. The counts are kept as the grader made them.
    A grader that says more (a script's reward, a parser's statuses, a multi-step task's
    steps) has its subclass, named by the JSON's ``grader``; keys no class names are kept in
    ``extra`` and written back.
    """

    passed: int = 0
    total: int = 0
    complete: bool = False
    tests: list[GradedTest] = field(default_factory=list)
    """Every test the grader judged, in its order: ``outcomes`` (test -> outcome) and ``messages`` in the JSON."""
    problems: list[str] = field(default_factory=list)
    """Why the run does not count as complete beyond failed tests: missing, extra, skipped..."""
    error: str | None = None
    """The grader's own failure (a harness error), None when it judged."""
    duration_s: float = 0.0
    artifacts: dict[str, Any] = field(default_factory=dict)
    """Files the grader left: relative path -> base64 on the worker's record, -> manifest entry
    (``{"bytes", "path"}`` or ``{"error"}``) once the controller wrote them into the run directory."""
    artifacts_left_out: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    grader: ClassVar[str | None] = None
    """The JSON's ``grader``: absent for the trusted pytest grader."""

    def to_dict(self) -> dict:
        out: dict = {
            "passed": self.passed,
            "total": self.total,
            "complete": self.complete,
            "problems": list(self.problems),
            "error": self.error,
            "outcomes": {t.nodeid: t.outcome for t in self.tests},
            "messages": {t.nodeid: t.message for t in self.tests if t.outcome != "passed" and t.message},
            "duration_s": self.duration_s,
        }
        if self.artifacts:
            out["artifacts"] = dict(self.artifacts)
        if self.artifacts_left_out:
            out["artifacts_left_out"] = list(self.artifacts_left_out)
        if self.grader is not None:
            out["grader"] = self.grader
        out.update(self.grader_fields())
        out.update(self.extra)
        return out

    def grader_fields(self) -> dict:
        """What this grader's kind adds to the JSON (after ``grader``)."""
        return {}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "VerdictRecord":
        """The record of a line's ``verdict``, of the class its ``grader`` names (an unknown one: this class, the key in ``extra``)."""
        kind = _GRADERS.get(data.get("grader")) if cls is VerdictRecord else cls
        return (kind or VerdictRecord)._read(data)

    @classmethod
    def _read(cls, data: Mapping[str, Any]) -> "VerdictRecord":
        messages = data.get("messages") or {}
        base = {
            "passed": data.get("passed", 0),
            "total": data.get("total", 0),
            "complete": data.get("complete", False),
            "tests": [GradedTest(str(k), v, messages.get(k, "")) for k, v in (data.get("outcomes") or {}).items()],
            "problems": list(data.get("problems") or []),
            "error": data.get("error"),
            "duration_s": data.get("duration_s", 0.0),
            "artifacts": dict(data.get("artifacts") or {}),
            "artifacts_left_out": list(data.get("artifacts_left_out") or []),
        }
        names = {"passed", "total", "complete", "outcomes", "messages", "problems", "error", "duration_s", "artifacts", "artifacts_left_out"}
        own = cls._read_grader_fields(data)
        if cls.grader is not None:
            names.add("grader")
        return cls(**base, **own, extra=unknown_keys(data, names | set(cls._grader_keys())))

    @classmethod
    def _grader_keys(cls) -> tuple[str, ...]:
        return ()

    @classmethod
    def _read_grader_fields(cls, data: Mapping[str, Any]) -> dict:
        return {}


@dataclass
class ScriptVerdictRecord(VerdictRecord):
    """A script grader's verdict (test.sh writing a reward): its one test and the native reward."""

    native_reward: float | None = None
    threshold: float = 1.0
    reward_source: str | None = None
    reward_detail: dict[str, Any] = field(default_factory=dict)
    exit_code: int | None = None
    output_tail: str = ""
    stood_in: list[str] = field(default_factory=list)

    grader: ClassVar[str | None] = "script"

    def grader_fields(self) -> dict:
        return {
            "native_reward": self.native_reward,
            "threshold": self.threshold,
            "reward_source": self.reward_source,
            "reward_detail": dict(self.reward_detail),
            "exit_code": self.exit_code,
            "output_tail": self.output_tail,
            "stood_in": list(self.stood_in),
        }

    @classmethod
    def _grader_keys(cls) -> tuple[str, ...]:
        return ("native_reward", "threshold", "reward_source", "reward_detail", "exit_code", "output_tail", "stood_in")

    @classmethod
    def _read_grader_fields(cls, data: Mapping[str, Any]) -> dict:
        return {
            "native_reward": data.get("native_reward"),
            "threshold": data.get("threshold", 1.0),
            "reward_source": data.get("reward_source"),
            "reward_detail": dict(data.get("reward_detail") or {}),
            "exit_code": data.get("exit_code"),
            "output_tail": data.get("output_tail") or "",
            "stood_in": list(data.get("stood_in") or []),
        }


@dataclass
class ParsedVerdictRecord(VerdictRecord):
    """A parsed grader's verdict (Terminal-Bench's run-tests.sh): the tests its parser read, and their status words."""

    parser: str = "pytest"
    script: str = ""
    statuses: dict[str, str] = field(default_factory=dict)
    exit_code: int | None = None
    output_tail: str = ""
    stood_in: list[str] = field(default_factory=list)

    grader: ClassVar[str | None] = "parsed"

    def grader_fields(self) -> dict:
        return {
            "parser": self.parser,
            "script": self.script,
            "statuses": dict(self.statuses),
            "exit_code": self.exit_code,
            "output_tail": self.output_tail,
            "stood_in": list(self.stood_in),
        }

    @classmethod
    def _grader_keys(cls) -> tuple[str, ...]:
        return ("parser", "script", "statuses", "exit_code", "output_tail", "stood_in")

    @classmethod
    def _read_grader_fields(cls, data: Mapping[str, Any]) -> dict:
        return {
            "parser": data.get("parser", "pytest"),
            "script": data.get("script", ""),
            "statuses": dict(data.get("statuses") or {}),
            "exit_code": data.get("exit_code"),
            "output_tail": data.get("output_tail") or "",
            "stood_in": list(data.get("stood_in") or []),
        }


@dataclass
class StepRecord:
    """One step of a multi-step task as it went: how the agent ended it, its reward and its checks' verdict."""

    step: int
    """1-based, as the step's tests are prefixed (``step-1::``)."""
    name: str
    end_reason: str | None = None
    """How the agent ended the step (None: the step never began)."""
    commands: int = 0
    reward: float | None = None
    passed: int = 0
    total: int = 0
    complete: bool = False
    stopped: str | None = None
    """Why the episode ended after this step; None if it went on."""
    verdict: VerdictRecord | None = None
    extra: dict = field(default_factory=dict)

    _KEYS: ClassVar[tuple[str, ...]] = ("step", "name", "end_reason", "commands", "reward", "passed", "total", "complete", "stopped", "verdict")

    def to_dict(self) -> dict:
        out = {
            "step": self.step,
            "name": self.name,
            "end_reason": None if self.end_reason is None else str(self.end_reason),
            "commands": self.commands,
            "reward": self.reward,
            "passed": self.passed,
            "total": self.total,
            "complete": self.complete,
            "stopped": self.stopped,
            "verdict": self.verdict.to_dict() if self.verdict is not None else None,
        }
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "StepRecord":
        verdict = data.get("verdict")
        return cls(
            step=data.get("step", 0),
            name=data.get("name", ""),
            end_reason=data.get("end_reason"),
            commands=data.get("commands", 0),
            reward=data.get("reward"),
            passed=data.get("passed", 0),
            total=data.get("total", 0),
            complete=data.get("complete", False),
            stopped=data.get("stopped"),
            verdict=VerdictRecord.from_dict(verdict) if isinstance(verdict, Mapping) else None,
            extra=unknown_keys(data, cls._KEYS),
        )


@dataclass
class StepsVerdictRecord(VerdictRecord):
    """A multi-step task's verdict: every step's tests (``step-N::``), its steps, and Harbor's rolled-up reward."""

    strategy: str = "mean"
    native_reward: float | None = None
    reward_detail: dict[str, float] = field(default_factory=dict)
    steps: list[StepRecord] = field(default_factory=list)

    grader: ClassVar[str | None] = "steps"

    def grader_fields(self) -> dict:
        return {
            "strategy": self.strategy,
            "native_reward": self.native_reward,
            "reward_detail": dict(self.reward_detail),
            "steps": [step.to_dict() for step in self.steps],
        }

    @classmethod
    def _grader_keys(cls) -> tuple[str, ...]:
        return ("strategy", "native_reward", "reward_detail", "steps")

    @classmethod
    def _read_grader_fields(cls, data: Mapping[str, Any]) -> dict:
        return {
            "strategy": data.get("strategy", "mean"),
            "native_reward": data.get("native_reward"),
            "reward_detail": dict(data.get("reward_detail") or {}),
            "steps": [StepRecord.from_dict(step) for step in data.get("steps") or []],
        }


_GRADERS: dict[Any, type[VerdictRecord]] = {kind.grader: kind for kind in (ScriptVerdictRecord, ParsedVerdictRecord, StepsVerdictRecord)}
"""The verdict record class per JSON ``grader``."""
