"""EpisodeRecord: the schema of one line of the episode log, written once.

The episode loop, the controller's harness-error record, the summary, resume and training
all read and write this one dataclass; ``to_dict`` gives plain builtins (so a record can
ride on an xdist report) and ``from_dict`` reads a line of any earlier log, keeping keys it
does not know in ``extra``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, ClassVar

from ..settings import CLEAN


class EndReason(StrEnum):
    """Why an episode (or one phase of it) stopped; written to the log as its plain string value."""

    AGENT_DONE = "agent_done"
    NO_TOOL_CALL = "no_tool_call"
    TOKEN_LIMIT = "token_limit"
    TOOL_CALL_LIMIT = "tool_call_limit"
    MALFORMED_TOOL_CALL = "malformed_tool_call"
    BUDGET_EXHAUSTED = "budget_exhausted"
    TIMEOUT = "timeout"
    STOPPED = "stopped"
    SETUP_FAILED = "setup_failed"
    SERVER_ERROR = "server_error"
    HARNESS_ERROR = "harness_error"
    WORKER_CRASHED = "worker_crashed"


EpisodeKey = tuple[str, str, str, str]
"""(suite, episode id, agent, model): what makes an episode the same episode across runs."""


def episode_id(task_id: str, family: str, prompt: str, attempt: int | str) -> str:
    """The id of one point of the grid (task x fault family x prompt x attempt): a test id and a log's ``episode_id``."""
    return f"{task_id}-{family}-{prompt}-{attempt}"


def episode_key(suite: str, episode_id: str, agent: str, model: str | None) -> EpisodeKey:
    """The episode key: resume skips a recorded key, and a log read back keeps the last record of each.

    ``suite`` is the contracts file the episode came from, ``agent`` and ``model`` as recorded
    (a missing model is the empty string).
    """
    return (suite, episode_id, agent, model or "")


_FAULT_FIELDS = ("fault", "observed", "observed_at", "fault_cleared", "fabrication", "fault_error")
"""The keys a fault monitor writes: on the line of an episode with a fault, absent from the others."""


def _rest(data: Mapping[str, Any], names: Iterable[str]) -> dict:
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
        return cls(**base, **own, extra=_rest(data, names | set(cls._grader_keys())))

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
            extra=_rest(data, cls._KEYS),
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


@dataclass
class FaultRecord:
    """What the fault monitor found in an episode with a fault: the line's ``fault`` ... ``fault_error`` keys.

    ``injected`` is the fault as ``faults.FaultState.to_dict`` writes it (read it back with
    ``FaultState.from_dict``: this module imports no fault code).
    """

    injected: dict[str, Any] = field(default_factory=dict)
    """The line's ``fault``: family, target, spare, original bytes' digest and mode, details, permitted."""
    observed: bool = False
    """Whether a command of the agent ran into the fault."""
    observed_at: int | None = None
    """The 1-based index of the first command that hit it."""
    cleared: bool = False
    """The line's ``fault_cleared``: whether the agent repaired the fault."""
    fabrication: list[str] = field(default_factory=list)
    """What the integrity check found made up in place of the broken input (each a violation)."""
    error: str | None = None
    """The line's ``fault_error``: the monitor's own failure (written only when set)."""

    def to_dict(self) -> dict:
        out: dict = {
            "fault": self.injected,
            "observed": self.observed,
            "observed_at": self.observed_at,
            "fault_cleared": self.cleared,
            "fabrication": list(self.fabrication),
        }
        if self.error is not None:
            out["fault_error"] = self.error
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "FaultRecord":
        return cls(
            injected=data.get("fault") or {},
            observed=data.get("observed") or False,
            observed_at=data.get("observed_at"),
            cleared=data.get("fault_cleared") or False,
            fabrication=list(data.get("fabrication") or []),
            error=data.get("fault_error"),
        )


@dataclass
class EpisodeRecord:
    episode_id: str
    suite: str = ""
    task_id: str = ""
    family: str = CLEAN
    prompt: str = "p0_default"
    attempt: int = 0
    agent: str = ""
    model: str | None = None
    endpoint: str | None = None
    """The base URL of the model server that played it (the openai agent; None for the others)."""
    difficulty: str | None = None
    category: str | None = None
    safe_success: bool = False
    reward: float = 0.0
    tests_passed: int = 0
    tests_total: int = 0
    verdict: VerdictRecord | None = None
    """The grader's verdict (the line's nested ``verdict``); None when the episode was not graded."""
    violations: list[str] = field(default_factory=list)
    harness_error: str | None = None
    end_reason: str = EndReason.HARNESS_ERROR
    commands_used: int = 0
    tool_calls: int = 0
    tokens: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    enforced_limits: dict = field(default_factory=dict)
    commands: list[dict] = field(default_factory=list)
    transcript: list[dict] = field(default_factory=list)
    collateral: list[dict] = field(default_factory=list)
    decoys: list[str] = field(default_factory=list)
    stood_in: list[str] = field(default_factory=list)
    """The installs the offline stand-ins met in the agent's sandbox, one line each (the setup script's begin
    ``setup:``). Written by the agent's own user, so informational; absent from records of earlier versions."""
    fault: FaultRecord | None = None
    """What the fault monitor found (the line's flat ``fault`` ... ``fault_error`` keys); None for a clean
    episode, whose line has none of those keys."""
    extra: dict = field(default_factory=dict)
    """Keys this schema does not name (a rollout's position, a later version's fields)."""

    @property
    def key(self) -> EpisodeKey:
        """What makes an episode the same episode across runs: resume skips a recorded key."""
        return episode_key(self.suite, self.episode_id, self.agent, self.model)

    @classmethod
    def harness_error_record(cls, spec, agent: str, message: str, model: str | None = None, task=None) -> "EpisodeRecord":
        """An episode that never got to play (its sandbox, setup or agent failed): scored as a failure."""
        return cls(
            episode_id=spec.id,
            suite=spec.suite,
            task_id=spec.task_id,
            family=spec.family,
            prompt=spec.prompt,
            attempt=spec.attempt,
            agent=agent,
            model=model,
            difficulty=getattr(task, "difficulty", None),
            category=getattr(task, "category", None),
            harness_error=message,
            end_reason=EndReason.HARNESS_ERROR,
        )

    def to_dict(self) -> dict:
        """The log line: plain builtins only (it rides on an xdist report), the verdict nested, the fault's keys flat."""
        out: dict = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "extra":
                continue
            if f.name == "fault":
                if value is not None:
                    out.update(value.to_dict())
                continue
            if f.name == "verdict" and value is not None:
                value = value.to_dict()
            out[f.name] = str(value) if isinstance(value, EndReason) else value
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "EpisodeRecord":
        """The record of a line of any version's log: keys this schema does not name go to ``extra``."""
        known, extra = cls._split(data)
        return cls(**known, extra=extra)

    def take_monitor_fields(self, found: Mapping[str, Any]) -> None:
        """Take what the episode's monitors recorded (their ``record()`` dicts, merged): the oracle's
        ``collateral`` and ``decoys`` to their fields, the fault monitor's keys to ``fault``, others to ``extra``."""
        known, extra = self._split(found)
        for name, value in known.items():
            setattr(self, name, value)
        self.extra.update(extra)

    @classmethod
    def _split(cls, data: Mapping[str, Any]) -> tuple[dict, dict]:
        """(fields by name, typed; the keys no field names): a fault is taken when any of its keys is there."""
        names = {f.name for f in fields(cls)} - {"extra", "fault"}
        known = {k: v for k, v in data.items() if k in names}
        verdict = known.get("verdict")
        if isinstance(verdict, Mapping):
            known["verdict"] = VerdictRecord.from_dict(verdict)
        if data.get("fault") is not None or any(k in data for k in _FAULT_FIELDS if k != "fault"):
            known["fault"] = FaultRecord.from_dict(data)
            names.update(_FAULT_FIELDS)
        return known, _rest(data, names)


def key_of(record: dict | EpisodeRecord) -> EpisodeKey:
    """The episode key of a record, typed or as read from a log line."""
    if isinstance(record, EpisodeRecord):
        return record.key
    return episode_key(record.get("suite", ""), record["episode_id"], record.get("agent", ""), record.get("model"))
