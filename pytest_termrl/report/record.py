"""EpisodeRecord: the schema of one line of the episode log, written once.

The episode loop, the controller's harness-error record, the summary, resume and training
all read and write this one dataclass; ``to_dict`` gives plain builtins (so a record can
ride on an xdist report) and ``from_dict`` reads a line of any earlier log, keeping keys it
does not know in ``extra``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from ..settings import CLEAN
from .verdict_record import VerdictRecord, unknown_keys


class EndReason(StrEnum):
    """Why an episode (or one phase of it) stopped; written to the log as its plain string value."""

    AGENT_DONE = "agent_done"
    NO_TOOL_CALL = "no_tool_call"
    TOKEN_LIMIT = "token_limit"
    TOOL_CALL_LIMIT = "tool_call_limit"
    MALFORMED_TOOL_CALL = "malformed_tool_call"
    BUDGET_EXHAUSTED = "budget_exhausted"
    TIMEOUT = "timeout"
    STORAGE_LIMIT = "storage_limit"
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


OMITTED_WHEN_NONE = ("contract", "replay")
"""Fields a log line leaves out when they are None: the lines of ordinary episodes keep the shape earlier releases wrote."""


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
    contract: str | None = None
    """``inferred`` when no frozen contract judged the episode (a task played with ``--termrl-unfrozen``, or
    regraded without one): the oracle used the policy inferred from the task; None or ``frozen`` otherwise."""
    replay: dict | None = None
    """A replayed episode's trial: ``trial``, ``source``, ``format``, ``recorded_reward``, ``calls``, ``played``,
    ``divergences`` (each with its ``step``, ``call``, ``kind``, ``expected``, ``got``, ``similarity``) and ``unplayed``."""
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
            if f.name in OMITTED_WHEN_NONE and value is None:
                continue  # a line of an episode that was not replayed, and was judged by its contract, reads as before
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
        return known, unknown_keys(data, names)


def key_of(record: dict | EpisodeRecord) -> EpisodeKey:
    """The episode key of a record, typed or as read from a log line."""
    if isinstance(record, EpisodeRecord):
        return record.key
    return episode_key(record.get("suite", ""), record["episode_id"], record.get("agent", ""), record.get("model"))
