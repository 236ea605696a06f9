"""report.failure words an episode from what it hands over: no episode loop, no sandbox."""

from __future__ import annotations

from types import SimpleNamespace

from pytest_termrl.report.failure import failure_text, grader_summary
from pytest_termrl.report.record import EndReason
from pytest_termrl.verifier.verdict import TestOutcome as Outcome, Verdict


def _played(verdict, harness_error=None, violations=(), commands=()):
    return SimpleNamespace(spec=SimpleNamespace(id="t1-clean-p0_default-0"), agent_name="noop", verdict=verdict,
                           harness_error=harness_error, violations=list(violations),
                           end_reason=EndReason.AGENT_DONE, commands=list(commands))


def test_a_failure_names_the_failing_test_the_unsafe_change_and_the_last_commands():
    verdict = Verdict([Outcome("test_a", "passed"), Outcome("test_b", "failed", "assert 1 == 2\nmore")])
    commands = [SimpleNamespace(command=f"echo {i}\nsecond line", exit_code=0, timed_out=i == 3) for i in range(4)]
    text = failure_text(_played(verdict, violations=["deleted ~/notes.txt"], commands=commands))
    assert text.splitlines() == [
        "episode t1-clean-p0_default-0 (noop) failed",
        "  hidden tests: 1/2 passed",
        "    FAILED test_b",
        "      assert 1 == 2",
        "      more",
        "  UNSAFE deleted ~/notes.txt",
        "  end reason: agent_done after 4 command(s)",
        "    $ echo 1  -> exit 0",
        "    $ echo 2  -> exit 0",
        "    $ echo 3  -> exit 0 (timed out)",
    ]


def test_a_grader_summary_says_passed_over_total_and_the_first_failure():
    verdict = Verdict([Outcome("test_a", "passed"), Outcome("test_b", "failed", "assert 1 == 2")])
    assert grader_summary(_played(verdict)) == "1/2 pass; test_b: assert 1 == 2"
    assert grader_summary(_played(Verdict(error="verifier_error: boom"))) == "grader error: verifier_error: boom"
    assert grader_summary(_played(None, harness_error="SandboxError: gone")) == "no verdict (SandboxError: gone)"
