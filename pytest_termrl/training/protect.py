"""Test tasks recognised by content: instruction hashes, so a regenerated or renamed copy of a test task never trains.

A split file keeps a test task out by its id; a copy under another id or in another
suite keeps the id check blind. The hash of the instruction (whitespace runs made one
space, a command-budget sentence left off) is the same for both.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..errors import TermrlError

TEST_SPLIT = "test"


class ProtectError(TermrlError, ValueError):
    """A suite named to protect is not there."""


BUDGET_TAIL = re.compile(r"\n\nYou may run at most \d+ commands .*\Z", re.S)
"""The sentence the openai agent appends to a task with a command budget (``budget_sentence``)."""


def instruction_hash(text: str) -> str:
    """A task's identity by content: its instruction with runs of whitespace made one space.

    A task regenerated from another seed, or copied under another id, has the same hash
    as the original when its instruction is the same: that is what keeps a test task
    out of training whatever it is called."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


def protected_instructions(suites: list[Path | str], splits: tuple[str, ...] = (TEST_SPLIT,)) -> dict[str, str]:
    """Instruction hash -> ``suite/task`` for every task of these suites' given splits."""
    from ..tasks.suite import read_splits

    out: dict[str, str] = {}
    for root in suites:
        root = Path(root)
        if root.name == "contracts.jsonl":
            root = root.parent
        if not root.is_dir():
            raise ProtectError(f"--protect: suite folder not found: {root}")
        for task_id, split in sorted(read_splits(root).items()):
            instruction = root / task_id / "instruction.md"
            if split in splits and instruction.is_file():
                out[instruction_hash(instruction.read_text(encoding="utf-8", errors="replace"))] = f"{root.name}/{task_id}"
    return out


def first_instruction(transcript: list[dict]) -> str | None:
    """The task as the agent got it: the first user message, less a command-budget sentence."""
    for message in transcript or []:
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return BUDGET_TAIL.sub("", message["content"])
    return None
