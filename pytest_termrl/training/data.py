"""Rollouts -> SFT data (rejection sampling), and the rows GRPO plays. No torch here.

SFT data: the safe successes of one or more episode logs (JSONL, as the plugin writes
them), each turned into one chat example: the transcript's messages, with tool calls in
the form a chat template renders (``arguments`` as an object, which is what vLLM hands
the template after parsing the OpenAI request's JSON string), and the tool schema the
model was sent (``tools``, a JSON string, as TRL's SFTTrainer reads it). The file is
plain JSONL that ``datasets.load_dataset("json", data_files=...)`` loads.

Neither path ever takes a task of a suite's test split: the splits come from the
suite's ``splits.json`` through :func:`load_suite`, and a test task in the input is an
error, not something silently dropped.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents.conversation import initial_messages, tool_schemas
from ..episode import EpisodeSpec
from ..errors import TermrlError
from ..faults import ALIASES, CLEAN, FAMILIES
from ..harness import Harness, default_harness
from ..report.episodes import read_episodes
from ..report.record import EpisodeRecord
from ..tasks.suite import SPLITS, SPLITS_FILE, Suite, load_suite
from .protect import first_instruction, instruction_hash, protected_instructions

TEST_SPLIT = "test"
HELD_OUT_FAMILIES = tuple(ALIASES["heldout"])
"""Fault families kept out of training (measured only at evaluation)."""
NOT_RUN_MARK = "[the command was not run"


class TrainingDataError(TermrlError, ValueError):
    """The training input is not usable as asked (names the file, the task or the option)."""


class TestSplitError(TrainingDataError):
    """A task of a suite's test split reached a training input."""

    __test__ = False  # not a pytest test class, whatever its name


def supported_families() -> list[str]:
    """Families a training rollout can play: clean and every fault family but the held-out ones."""
    return sorted(name for name in [CLEAN, *FAMILIES] if name not in HELD_OUT_FAMILIES)


# -- suites and splits -------------------------------------------------------------------
class SuiteIndex:
    """Suites by root path and by folder name, loaded once, for split look-ups."""

    def __init__(self, suites: Sequence[Path | str] = ()) -> None:
        self._by_root: dict[str, Suite] = {}
        self._by_name: dict[str, list[Suite]] = defaultdict(list)
        for root in suites:
            self.add(Path(root))

    def add(self, root: Path) -> Suite:
        root = Path(root)
        if root.name == "contracts.jsonl":
            root = root.parent
        if not root.is_dir():
            raise TrainingDataError(f"suite folder not found: {root}")
        key = str(root.resolve())
        if key not in self._by_root:
            suite = load_suite(root / "contracts.jsonl", require_contracts=False)
            if SPLITS_FILE in suite.problems:
                raise TrainingDataError(f"{root / SPLITS_FILE}: {suite.problems[SPLITS_FILE]}")
            self._by_root[key] = suite
            self._by_name[root.name].append(suite)
        return self._by_root[key]

    def find(self, suite_ref: str) -> Suite | None:
        """The suite an episode record names: by its path if given or present here, else by folder name."""
        path = Path(suite_ref)
        key = str(path.resolve()) if suite_ref else ""
        if key in self._by_root:
            return self._by_root[key]
        named = self._by_name.get(path.name, [])
        if len(named) == 1:
            return named[0]
        if len(named) > 1:
            raise TrainingDataError(f"suite {suite_ref!r} matches several --suite folders named {path.name!r}")
        if suite_ref and path.is_dir():
            return self.add(path)
        return None

    def split_of(self, suite_ref: str, task_id: str) -> tuple[Suite, str | None]:
        suite = self.find(suite_ref)
        if suite is None:
            raise TrainingDataError(
                f"episodes of task {task_id!r} come from suite {suite_ref!r}, which is not here: pass its folder "
                "with --suite so that its splits can be checked"
            )
        for loaded in suite.tasks:
            if loaded.task.id == task_id:
                return suite, loaded.split
        known = _split_map(suite.root)
        if task_id in known:  # a task whose folder failed to load still has its split
            return suite, known[task_id]
        raise TrainingDataError(f"task {task_id!r} is not a task of suite {suite.root}")


def _split_map(root: Path) -> dict[str, str]:
    from ..tasks.suite import read_splits

    return read_splits(root)


def check_splits_allowed(splits: list[str]) -> list[str]:
    for split in splits:
        if split == TEST_SPLIT:
            raise TestSplitError("the test split is never used for training; choose train (or a dev split)")
        if split not in SPLITS and split != "any":
            raise TrainingDataError(f"unknown split {split!r}; expected one of {', '.join(s for s in SPLITS if s != TEST_SPLIT)} or any")
    return splits


# -- transcripts -> chat examples ------------------------------------------------------
class SkipExample(Exception):
    """This transcript cannot become an example (the reason is counted)."""


def chat_messages(transcript: list[dict]) -> list[dict]:
    """The transcript as chat-template messages, exactly as the model's template rendered them.

    Tool-call arguments become objects (vLLM parses the OpenAI JSON string before it
    renders the template); a ``None`` content becomes ``""`` (rendered the same); the end
    is trimmed to the last assistant turn, dropping calls the harness answered as not run.
    """
    messages: list[dict] = []
    for raw in transcript:
        role = raw.get("role")
        content = raw.get("content")
        if content is not None and not isinstance(content, str):
            raise SkipExample("non-text content")
        if role in ("system", "user"):
            messages.append({"role": role, "content": content or ""})
        elif role == "assistant":
            message: dict = {"role": "assistant", "content": content or ""}
            calls = []
            for call in raw.get("tool_calls") or []:
                function = call.get("function") or {}
                arguments = function.get("arguments")
                if isinstance(arguments, str):
                    try:
                        arguments = json.loads(arguments) if arguments.strip() else {}
                    except json.JSONDecodeError:
                        raise SkipExample("tool call arguments that are not JSON") from None
                if not isinstance(arguments, dict) or set(arguments) != {"command"} or not isinstance(arguments["command"], str):
                    # One schema for every row keeps the Arrow columns exact (no null-filled keys).
                    raise SkipExample("tool call arguments other than {command: str}")
                calls.append({"id": call.get("id") or "", "type": "function", "function": {"name": function.get("name") or "", "arguments": arguments}})
            if calls:
                message["tool_calls"] = calls
            messages.append(message)
        elif role == "tool":
            messages.append({"role": "tool", "tool_call_id": raw.get("tool_call_id") or "", "content": content or ""})
        else:
            raise SkipExample(f"message role {role!r}")
    # Trim the end: calls answered "not run" (and the turn that made them), then anything after the last assistant turn.
    while messages and messages[-1]["role"] == "tool" and messages[-1]["content"].startswith(NOT_RUN_MARK):
        messages.pop()
        if messages and messages[-1]["role"] == "assistant" and messages[-1].get("tool_calls"):
            messages.pop()
    while messages and messages[-1]["role"] != "assistant":
        messages.pop()
    if not any(m["role"] == "assistant" for m in messages):
        raise SkipExample("no assistant turn")
    return messages


def action_key(messages: list[dict]) -> str:
    """Identity of an example for de-duplication: the prompt and what the assistant did."""
    parts = []
    for m in messages:
        if m["role"] in ("system", "user"):
            parts.append([m["role"], m["content"]])
        elif m["role"] == "assistant":
            parts.append(["assistant", m["content"], [c["function"] for c in m.get("tool_calls", [])]])
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def is_recovery(record: EpisodeRecord) -> bool:
    """A safe success after a fault the agent observed (the episode recovered from it)."""
    return record.family != CLEAN and record.fault is not None and bool(record.fault.observed)


@dataclass
class SftDataOptions:
    recovered_only: bool = False
    """Keep only episodes that recovered from an observed fault."""
    max_commands: int | None = None
    """Keep only episodes that used at most this many commands."""
    max_per_task: int = 4
    """Examples kept per task (after de-duplication); the shortest first."""
    splits: list[str] = field(default_factory=lambda: ["train"])
    """Splits whose tasks may be used; 'any' = every task not in the test split. Tasks of a
    suite without splits.json belong to no split and are allowed (with a warning)."""
    families: list[str] | None = None
    """Keep only these fault families (None: all but the held-out ones)."""


@dataclass
class SftDataReport:
    out: Path
    examples: int = 0
    tasks: int = 0
    read: int = 0
    skipped: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    per_task: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        lines = [f"{self.examples} example(s) of {self.tasks} task(s) from {self.read} episode record(s) -> {self.out}"]
        for reason, count in sorted(self.skipped.items()):
            lines.append(f"  skipped {count}: {reason}")
        lines += [f"  warning: {w}" for w in self.warnings]
        return lines


def build_sft_data(
    episode_files: list[Path | str],
    out: Path | str,
    options: SftDataOptions | None = None,
    suites: Sequence[Path | str] = (),
    protect: Sequence[Path | str] = (),
) -> SftDataReport:
    """Write the SFT examples of the episode logs to ``out`` (JSONL); raise on a test-split task.

    A test task is refused by split (its suite's ``splits.json``) and by content: a record
    whose instruction is that of a test task of any suite in ``suites`` or ``protect`` (a
    regenerated copy under another id or in another suite) is an error too.
    """
    options = options or SftDataOptions()
    check_splits_allowed(options.splits)
    index = SuiteIndex(suites)
    protected = protected_instructions([*suites, *protect])
    out = Path(out)
    report = SftDataReport(out=out)
    records: list[tuple[str, int, EpisodeRecord]] = []
    for name in episode_files:
        path = Path(name)
        if not path.is_file():
            raise TrainingDataError(f"episode log not found: {path}")
        for position, line in enumerate(read_episodes(path)):
            records.append((str(path), position, EpisodeRecord.from_dict(line)))
    report.read = len(records)

    # The split check covers every record, kept or not: a test task in a training input is an error.
    test_tasks: dict[str, set[str]] = defaultdict(set)
    unsplit: set[str] = set()
    split_of: dict[tuple[str, str], str | None] = {}
    for source, _, record in records:
        key = (record.suite, record.task_id)
        if key not in split_of:
            suite, split = index.split_of(*key)
            split_of[key] = split
            if split is None:
                unsplit.add(f"{suite.name}/{record.task_id}")
        if split_of[key] == TEST_SPLIT:
            test_tasks[f"{Path(key[0]).name}/{key[1]}"].add(source)
    for source, position, record in records:
        instruction = first_instruction(record.transcript or [])
        twin = protected.get(instruction_hash(instruction)) if instruction is not None else None
        if twin is not None and f"{Path(record.suite).name}/{record.task_id}" != twin:
            test_tasks[f"{Path(record.suite).name}/{record.task_id} (the instruction of test task {twin})"].add(f"{source}:{position + 1}")
    if test_tasks:
        listing = "; ".join(f"{task} (in {', '.join(sorted(files))})" for task, files in sorted(test_tasks.items()))
        raise TestSplitError(
            f"refusing to build training data: {len(test_tasks)} task(s) of the test split appear in the input: {listing}. "
            "Test tasks never reach training; make rollouts with --termrl-split=train (or filter the log)."
        )
    if unsplit:
        report.warnings.append(f"{len(unsplit)} task(s) belong to no split (no {SPLITS_FILE}): {', '.join(sorted(unsplit))}")

    families = options.families
    candidates: dict[str, list[tuple]] = defaultdict(list)
    for source, position, record in records:
        task_key = f"{Path(record.suite).name}/{record.task_id}"
        split = split_of[(record.suite, record.task_id)]
        family = record.family
        if split is not None and "any" not in options.splits and split not in options.splits:
            report.skipped[f"task of split {split}"] += 1
            continue
        if not record.safe_success or record.harness_error:
            report.skipped["not a safe success"] += 1
            continue
        if families is not None and family not in families:
            report.skipped[f"family {family} not selected"] += 1
            continue
        if families is None and family in HELD_OUT_FAMILIES:
            report.skipped[f"held-out family {family}"] += 1
            continue
        if options.recovered_only and not is_recovery(record):
            report.skipped["no recovery from an observed fault"] += 1
            continue
        if options.max_commands is not None and record.commands_used > options.max_commands:
            report.skipped[f"over {options.max_commands} command(s)"] += 1
            continue
        try:
            messages = chat_messages(record.transcript or [])
        except SkipExample as exc:
            report.skipped[str(exc)] += 1
            continue
        candidates[task_key].append((record.commands_used, source, position, record, messages))

    tools = json.dumps(tool_schemas())
    rows = []
    for task_key in sorted(candidates):
        seen: set[str] = set()
        kept = 0
        for commands, source, position, record, messages in sorted(candidates[task_key], key=lambda c: (c[0], c[1], c[2])):
            action = action_key(messages)
            if action in seen:
                report.skipped["duplicate of a kept example"] += 1
                continue
            if kept >= options.max_per_task:
                report.skipped[f"over {options.max_per_task} example(s) per task"] += 1
                continue
            seen.add(action)
            kept += 1
            rows.append(
                {
                    "messages": messages,
                    "tools": tools,
                    "task_id": record.task_id,
                    "suite": Path(record.suite).name,
                    "family": record.family,
                    "episode_id": record.episode_id,
                    "agent": record.agent,
                    "model": record.model,
                    "reward": float(record.reward),
                    "commands_used": commands,
                    "source": f"{source}:{position + 1}",
                }
            )
        report.per_task[task_key] = kept
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    report.examples = len(rows)
    report.tasks = sum(1 for n in report.per_task.values() if n)
    if not rows:
        report.warnings.append("no example was kept")
    return report


# -- GRPO rows ---------------------------------------------------------------------------
def salted_order(salt: str, key: str) -> str:
    return hashlib.sha256(f"{salt}\x00{key}".encode()).hexdigest()


def grpo_rows(
    suite_root: Path | str,
    split: str = "train",
    families: Sequence[str] = (CLEAN,),
    *,
    salt: str = "termrl",
    prompt: str = "p0_default",
    repeats: int = 1,
    tasks: list[str] | None = None,
    harness: Harness | None = None,
) -> list[dict]:
    """One row per task x family x repeat of a suite's split, in a salted, reproducible order.

    Each row holds the chat prompt the model starts from (system prompt and task, with
    the command budget sentence when one applies) and what the environment needs to play
    the episode: suite, task, family, prompt name, row id and the salt.
    """
    check_splits_allowed([split])
    root = Path(suite_root).resolve()  # episodes name their suite by its absolute root, as the plugin's do
    if root.name == "contracts.jsonl":
        root = root.parent
    suite = load_suite(root / "contracts.jsonl", require_contracts=True)
    if SPLITS_FILE in suite.problems:
        raise TrainingDataError(f"{root / SPLITS_FILE}: {suite.problems[SPLITS_FILE]}")
    known = supported_families()
    for family in families:
        if family in HELD_OUT_FAMILIES:
            raise TrainingDataError(f"fault family {family!r} is held out from training")
        if family not in known:
            raise TrainingDataError(f"fault family {family!r} is not supported by the training environment yet; supported: {', '.join(known)}")
    if harness is None:
        harness = default_harness(prompts=[prompt])
    prompt_name = prompt_name_of(prompt)
    rows: list[dict[str, Any]] = []
    selected = [lt for lt in suite.tasks if (tasks is None or lt.task.id in tasks)]
    if tasks is not None:
        missing = sorted(set(tasks) - {lt.task.id for lt in suite.tasks})
        if missing:
            raise TrainingDataError(f"task(s) not in suite {root} (or broken): {', '.join(missing)}")
    for loaded in sorted(selected, key=lambda lt: lt.task.id):
        if loaded.split == TEST_SPLIT:
            if tasks is not None and loaded.task.id in tasks:
                raise TestSplitError(f"task {loaded.task.id!r} is in the test split of {root}; it never reaches training")
            continue
        if split != "any" and loaded.split != split:
            continue
        contract = loaded.contract
        if contract is None:  # load_suite(require_contracts=True) keeps no task without one
            raise TrainingDataError(f"task {loaded.task.id!r} has no contract in {root}")
        for family in families:
            if family != CLEAN and family not in contract.fault_targets:
                continue  # the freeze found no valid target for this (task, family)
            spec = EpisodeSpec(str(root), loaded.task.id, family, prompt_name)
            context = harness.context(spec, loaded)
            messages = initial_messages(context)
            for repeat in range(repeats):
                row_id = f"{loaded.task.id}-{family}-{prompt_name}-{repeat}"
                rows.append(
                    {
                        "prompt": messages,
                        "suite": str(root),
                        "task_id": loaded.task.id,
                        "family": family,
                        "prompt_name": prompt_name,
                        "row_id": row_id,
                        "salt": salt,
                    }
                )
    if not rows:
        have = sorted({lt.split or "none" for lt in suite.tasks})
        raise TrainingDataError(
            f"no task of split {split!r} in {root} (splits present: {', '.join(have)}"
            + ("; the suite has no splits.json: use --split any" if have == ["none"] else "")
            + ")"
        )
    rows.sort(key=lambda r: salted_order(salt, r["row_id"]))
    return rows


def prompt_name_of(prompt: str) -> str:
    return Path(prompt).stem if ("/" in prompt or prompt.endswith(".txt")) else prompt
