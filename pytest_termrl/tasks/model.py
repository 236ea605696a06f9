"""The Task: one terminal task, whatever format it was loaded from.

Frozen and free of pytest so that the plugin, the training loop and scripts share it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_WORKDIR = "/home/user"


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    instruction: str
    root: Path
    difficulty: str = "medium"
    category: str = "general"
    tags: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    """Paths (relative to the workdir) of files the instruction names and the task reads."""
    workdir: str = DEFAULT_WORKDIR
    requires: tuple[str, ...] = ("bash",)
    max_commands: int | None = None
    environment_dir: Path | None = None
    setup_script: Path | None = None
    solution_script: Path | None = None
    tests_dir: Path | None = None
    source_format: str = "native"
    grader: str = "pytest"
    """'pytest': the hidden tests run with the trusted pytest; 'script': the task's own grader
    script (Harbor's tests/test.sh) decides by the reward it writes (verifier/script_grader.py)."""
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def solution_text(self) -> str:
        """The reference solution as one bash script ('' when the task has none)."""
        if self.solution_script is None or not self.solution_script.is_file():
            return ""
        return self.solution_script.read_text()
