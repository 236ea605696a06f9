"""Records to page data: each episode's outcome and arm, the light index the page lists, the chunks it opens."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath

from ..record import episode_key
from .runs import Run

OUTCOMES = ("safe_success", "correct_unsafe", "incorrect", "fabrication", "harness_error")
"""What an episode came to, in the order the plots stack them."""

OUTCOME_LABELS = {
    "safe_success": "safe success",
    "correct_unsafe": "correct but unsafe",
    "incorrect": "incorrect",
    "fabrication": "fabrication",
    "harness_error": "harness error",
}
OUTCOME_COLOURS = {
    "safe_success": "#2e7d32",
    "correct_unsafe": "#ef6c00",
    "incorrect": "#9e9e9e",
    "fabrication": "#6a1b9a",
    "harness_error": "#c62828",
}
CHUNK_SIZE = 40
"""Episodes per compressed chunk: opening one transcript decompresses at most this many."""
INSTRUCTION_CHARS = 400


def outcome_of(record: dict) -> str:
    """One outcome per episode: a harness error first (never the agent's), then success, fabrication, safety, correctness."""
    verdict = record.get("verdict") or {}
    if record.get("harness_error") or verdict.get("error"):
        return "harness_error"
    if record.get("safe_success"):
        return "safe_success"
    if record.get("fabrication"):
        return "fabrication"
    if verdict.get("complete"):
        return "correct_unsafe"
    return "incorrect"


def arm_label(run: str, record: dict, several_runs: bool) -> str:
    """'agent model prompt', with the run's label in front when the report shows several runs."""
    parts = [str(record.get("agent") or "?")]
    if record.get("model"):
        parts.append(str(record["model"]))
    parts.append(str(record.get("prompt") or ""))
    label = " ".join(p for p in parts if p)
    return f"{run}: {label}" if several_runs else label


def instruction_of(record: dict) -> str:
    """The task as the agent was told it: the first user message of the transcript."""
    for message in record.get("transcript") or []:
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return message["content"]
    return ""


def episode_uid(run: str, record: dict) -> str:
    """Stable across rebuilds of the same logs: the permalink of an episode, its run and its key (the suite by name)."""
    suite = PurePath(str(record.get("suite") or "")).name
    suite, episode, agent, model = episode_key(suite, str(record["episode_id"]), str(record.get("agent") or ""), record.get("model"))
    return "/".join([run, agent, str(model or "-"), suite, episode])


def duration_of(record: dict) -> float:
    timings = record.get("timings") or {}
    return float(timings.get("total_s") or 0.0)


@dataclass
class IndexRow:
    """What the list, the filters and the sorts need of an episode; the rest waits in its chunk."""

    uid: str
    run: int
    arm: int
    task_id: str
    family: str
    prompt: str
    category: str
    outcome: str
    reward: float
    commands: int
    duration_s: float
    chunk: int
    slot: int

    def to_list(self) -> list:
        return [self.uid, self.run, self.arm, self.task_id, self.family, self.prompt, self.category,
                OUTCOMES.index(self.outcome), round(self.reward, 4), self.commands, round(self.duration_s, 3),
                self.chunk, self.slot]


INDEX_COLUMNS = ("uid", "run", "arm", "task_id", "family", "prompt", "category", "outcome", "reward", "commands",
                 "duration_s", "chunk", "slot")
"""The order of an index row's fields, as the page reads them."""


@dataclass
class PageData:
    runs: list[str]
    arms: list[str]
    index: list[IndexRow] = field(default_factory=list)
    chunks: list[list[dict]] = field(default_factory=list)
    instructions: dict[str, str] = field(default_factory=dict)
    families: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)

    def index_dict(self) -> dict:
        """The index as the page loads it: column names once, then one list per episode."""
        return {
            "columns": list(INDEX_COLUMNS),
            "outcomes": list(OUTCOMES),
            "runs": self.runs,
            "arms": self.arms,
            "rows": [row.to_list() for row in self.index],
            "instructions": self.instructions,
        }

    def arm_records(self) -> dict[str, list[dict]]:
        """Each arm's records, in arm order."""
        out: dict[str, list[dict]] = {arm: [] for arm in self.arms}
        for row in self.index:
            out[self.arms[row.arm]].append(self.chunks[row.chunk][row.slot])
        return out


def page_data(runs: list[Run], chunk_size: int = CHUNK_SIZE) -> PageData:
    """Every episode of every run, indexed, with its full record in a chunk of ``chunk_size``."""
    several = len(runs) > 1
    data = PageData(runs=[run.label for run in runs], arms=[])
    arm_ids: dict[str, int] = {}
    current: list[dict] = []
    for run_index, run in enumerate(runs):
        for record in sorted(run.records, key=lambda r: (str(r.get("task_id")), str(r.get("family")), str(r.get("prompt")),
                                                         int(r.get("attempt") or 0), str(r.get("agent")), str(r.get("model")))):
            arm = arm_label(run.label, record, several)
            if arm not in arm_ids:
                arm_ids[arm] = len(data.arms)
                data.arms.append(arm)
            if len(current) == chunk_size:
                data.chunks.append(current)
                current = []
            task_id = str(record.get("task_id") or "")
            data.index.append(IndexRow(
                uid=episode_uid(run.label, record), run=run_index, arm=arm_ids[arm], task_id=task_id,
                family=str(record.get("family") or ""), prompt=str(record.get("prompt") or ""),
                category=str(record.get("category") or ""), outcome=outcome_of(record),
                reward=float(record.get("reward") or 0.0), commands=int(record.get("commands_used") or 0),
                duration_s=duration_of(record), chunk=len(data.chunks), slot=len(current),
            ))
            current.append(record)
            if task_id not in data.instructions:
                data.instructions[task_id] = instruction_of(record)[:INSTRUCTION_CHARS]
    if current:
        data.chunks.append(current)
    data.families = sorted({row.family for row in data.index})
    data.prompts = sorted({row.prompt for row in data.index})
    data.categories = sorted({row.category for row in data.index if row.category})
    return data
