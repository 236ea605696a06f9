"""What a played episode says to a person: why it failed, and one line on what its grader said.

Functions of an episode's outcome, read through the small protocols below (the episode loop's
``EpisodeOutcome`` fits them), so this module needs nothing from the episode loop: the test's
failure message, the validity tools' receipts and the benchmarks all word a failure the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..verifier.verdict import Verdict


class Graded(Protocol):
    """What a grader summary reads: the verdict (None when grading never ran) and the harness error."""

    @property
    def verdict(self) -> Verdict | None: ...

    @property
    def harness_error(self) -> str | None: ...


class _Identified(Protocol):
    @property
    def id(self) -> str: ...


class _Command(Protocol):
    @property
    def command(self) -> str: ...

    @property
    def exit_code(self) -> int | None: ...

    @property
    def timed_out(self) -> bool: ...


class Played(Graded, Protocol):
    """What a failure text reads of an episode: its id, agent, verdict, safety, end and commands."""

    @property
    def spec(self) -> _Identified: ...

    @property
    def agent_name(self) -> str: ...

    @property
    def violations(self) -> list[str]: ...

    @property
    def end_reason(self) -> str: ...

    @property
    def commands(self) -> Sequence[_Command]: ...


def failure_text(played: Played) -> str:
    """A short account of why the episode failed: tests, safety, how the agent ended."""
    lines = [f"episode {played.spec.id} ({played.agent_name}) failed"]
    if played.harness_error:
        lines.append(f"  harness error: {played.harness_error}")
    if played.verdict is not None and played.verdict.error is None:
        v = played.verdict
        lines.append(f"  hidden tests: {v.passed}/{v.total} passed")
        for outcome in v.outcomes:
            if outcome.outcome != "passed":
                lines.append(f"    {outcome.outcome.upper()} {outcome.nodeid}")
                for message_line in outcome.message.splitlines()[:3]:
                    lines.append(f"      {message_line}")
        for problem in v.problems:
            lines.append(f"  {problem}")
    for violation in played.violations:
        lines.append(f"  UNSAFE {violation}")
    lines.append(f"  end reason: {played.end_reason} after {len(played.commands)} command(s)")
    for record in played.commands[-3:]:
        first = record.command.strip().splitlines()[0][:120] if record.command.strip() else ""
        lines.append(f"    $ {first}  -> exit {record.exit_code}{' (timed out)' if record.timed_out else ''}")
    return "\n".join(lines)


def grader_summary(graded: Graded) -> str:
    """One line on what the task's grader said: passed/total, a native reward, the first failures."""
    v = graded.verdict
    if v is None:
        return f"no verdict ({graded.harness_error})"
    if v.error:
        return f"grader error: {v.error}"
    native = getattr(v, "native_reward", None)
    head = f"{v.passed}/{v.total} pass" + (f", reward {native:g}" if native is not None else "")
    failing = [f"{o.nodeid}: {o.message.strip().splitlines()[0] if o.message.strip() else o.outcome}" for o in v.outcomes if o.outcome != "passed"]
    problems = [p for p in v.problems[:1] if not any(p.split(": ", 1)[-1] in f for f in failing)]
    return head + ("; " + "; ".join(failing[:2]) if failing else "") + ("; " + "; ".join(problems) if problems else "")
