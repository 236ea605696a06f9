"""How close a replay's output is to the recorded observation, after what always differs is taken out.

Two runs of the same command differ in what no task asks about: the shell's prompt and the
machine's name, timings and dates, colour codes, the harness's own framing ("New Terminal
Output:", "[exit code: 0]", Terminus' warnings and its "are you sure" confirmation), a
folder's link count and size in ``ls -l`` (they depend on the file system), blank lines and
spacing. :func:`normalise` removes those;
:func:`similarity` is the share of the recorded observation's remaining lines that the
replay's output also shows (a terminal screen holds earlier lines too, so the replay may
show more, never less). A call whose similarity falls below :data:`DIVERGENCE_BELOW` is a
divergence.
"""

from __future__ import annotations

import re

DIVERGENCE_BELOW = 0.5
"""A replayed call diverges when under half of the recorded observation's lines reappear."""

_ESCAPES = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]|[\x00-\x08\x0b-\x1f\x7f]")
_FRAMING = re.compile(
    r"^(?:new terminal output:|current terminal screen:|current terminal state:|previous response had (?:warnings|parsing errors):"
    r"|\[exit code: [^\]]*\]|\[commands left: [^\]]*\]|exit code: -?\d+|output:|stdout:|stderr:)\s*$"
    r"|^(?:warnings:|errors:|- extra text detected|are you sure you want to mark the task as complete)",
    re.IGNORECASE,
)
_LS_TOTAL = re.compile(r"^total \d+$")
_LS_FOLDER = re.compile(r"^(d[rwxsStT-]{9}[.+@]?)\s+\d+(\s+\S+\s+\S+)\s+\d+")
"""A folder's line of ``ls -l``: its link count and size depend on the file system (overlay, tmpfs), not on the task."""
_PROMPT = re.compile(r"^(?:\([^)]*\)\s*)?(?:[\w.-]+@[\w.-]+:[^\s#$]*\s*[#$]|bash-[\d.]+[#$]|sh-[\d.]+[#$])\s?")
_TIMING = re.compile(r"\b\d+(?:\.\d+)?\s*(?:ms|µs|us|ns|s|sec|secs|seconds?|minutes?|m)\b", re.IGNORECASE)
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\S*)?|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+\d{1,2}(?:\s+\d{4}\b)?"
                   r"|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b")
_HEX_ID = re.compile(r"\b[0-9a-f]{12,64}\b")
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> list[str]:
    """The observation's lines with escapes, framing, prompts, timings, dates and ids taken out; blank lines dropped."""
    lines = []
    for raw in _ESCAPES.sub("", text.replace("\r\n", "\n").replace("\r", "\n")).split("\n"):
        line = raw.strip()
        if not line or _FRAMING.match(line):
            continue
        line = _PROMPT.sub("", line)
        if _LS_TOTAL.match(line):
            continue
        line = _LS_FOLDER.sub(r"\1 <n>\2 <n>", line)
        line = _HEX_ID.sub("<id>", _DATE.sub("<date>", _CLOCK.sub("<time>", _TIMING.sub("<dur>", line))))
        line = _SPACE.sub(" ", line).strip()
        if line:
            lines.append(line)
    return lines


def similarity(expected: str, got: str) -> float:
    """The share of ``expected``'s normalised lines that ``got`` shows too (1.0 when nothing is left to compare)."""
    wanted = normalise(expected)
    if not wanted:
        return 1.0
    shown = normalise(got)
    present = set(shown)
    joined = "\n".join(shown)
    found = sum(1 for line in wanted if line in present or line in joined)
    return found / len(wanted)
