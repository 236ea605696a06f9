"""The ``pytest`` parser: per-test results from the status lines of pytest's "short test summary info".

pytest prints one line per test under that header: ``PASSED path::test`` (with ``-rA``;
without it only the failures, errors, skips and xfails are listed), ``FAILED path::test -
message``, ``ERROR path[::test] - message``, ``SKIPPED [N] path:line: reason``,
``XFAIL path::test - reason`` and ``XPASS path::test reason``. As Terminal-Bench reads
them, PASSED, SKIPPED and XFAIL count as passed; FAILED, ERROR and XPASS as failed. Every
line under the first header is read, so a script that runs pytest twice is read whole;
lines that are no status line are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADER = re.compile(r"=+\s*short test summary info\s*=+", re.IGNORECASE)
STATUSES = {
    "PASSED": "passed", "SKIPPED": "passed", "XFAIL": "passed",
    "FAILED": "failed", "ERROR": "failed", "XPASS": "failed",
}
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SKIP = re.compile(r"^\[\d+\]\s+(?P<where>.+?:\d+):?\s*(?P<reason>.*)$")


class NoSummary(ValueError):
    """The output holds no "short test summary info" header: nothing to read a verdict from."""


@dataclass(frozen=True)
class ParsedTest:
    nodeid: str
    status: str
    """The status word pytest printed: PASSED, FAILED, ERROR, SKIPPED, XFAIL or XPASS."""
    message: str = ""

    @property
    def outcome(self) -> str:
        """'passed' or 'failed', as Terminal-Bench counts the status."""
        return STATUSES[self.status]


def _split_message(rest: str) -> tuple[str, str]:
    """(nodeid, message) of 'path::test - message' (a message follows the last ' - ' after the id)."""
    head, sep, tail = rest.partition(" - ")
    if sep and "::" not in tail.split(" ")[0]:
        return head.strip(), tail.strip()
    return rest.strip(), ""


def parse_line(line: str) -> ParsedTest | None:
    """The result one summary line states, or None for a line that is no status line."""
    word, _, rest = _ANSI.sub("", line).strip().partition(" ")
    status = word.rstrip(":")
    rest = rest.strip()
    if status not in STATUSES or not rest:
        return None
    if status == "SKIPPED":
        match = _SKIP.match(rest)
        if match:
            return ParsedTest(match.group("where"), status, match.group("reason"))
        nodeid, message = _split_message(rest)
        return ParsedTest(nodeid, status, message)
    if status == "XPASS":
        nodeid, _, message = rest.partition(" ")
        return ParsedTest(nodeid, status, message.strip())
    nodeid, message = _split_message(rest)
    return ParsedTest(nodeid, status, message) if nodeid else None


def parse_pytest_summary(output: str) -> list[ParsedTest]:
    """Every test the summary lists, in order; a test listed twice (a failure and a teardown error) keeps its failure.

    Raises NoSummary when the output has no header.
    """
    parts = HEADER.split(output, maxsplit=1)
    if len(parts) < 2:
        raise NoSummary("no \"short test summary info\" header in the output")
    found: dict[str, ParsedTest] = {}
    for line in parts[1].splitlines():
        result = parse_line(line)
        if result is not None:
            earlier = found.get(result.nodeid)
            if earlier is None or earlier.outcome == "passed":
                found[result.nodeid] = result
    return list(found.values())
