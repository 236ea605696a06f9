"""Code that the hidden tests run as the agent's uid cannot reach the verifier's key or channel.

The tasks are those of a source checkout (:mod:`.tasks`); without one this module skips.
"""

from __future__ import annotations

import os

from pytest_termrl.agents.builtin import ReferenceAgent
from pytest_termrl.episode import EpisodeSpec
from pytest_termrl.harness import Harness
from pytest_termrl.tasks.suite import load_suite
from pytest_termrl.verifier.verify import run_hidden_tests

from .fixtures import backend, termrl_backend_factory  # noqa: F401  (fixtures)
from .tasks import CORE, TBDL, require_task_suites

require_task_suites()

PROBE = r"""#!/bin/bash
# An agent's script that the hidden tests execute: it goes looking for the verifier's runner.
runner=$(pgrep -f 'runner.py' | head -1)
{
  [ -n "$runner" ] && echo found-runner
  ls /proc/$runner/fd >/dev/null 2>&1 && echo fd-listed
  python3 -c "import sys; open(f'/proc/{sys.argv[1]}/mem','rb')" "$runner" 2>/dev/null && echo mem-opened
  echo forged >> /proc/$runner/fd/4 2>/dev/null && echo fd-written
} 1>&2
exit 1
"""

FSMONITOR = r"""#!/bin/bash
echo fsmonitor-ran >> /home/user/probe.log
"""


def test_a_script_run_by_the_hidden_tests_cannot_reach_the_runner(backend):
    suite = load_suite(TBDL / "contracts.jsonl")
    loaded = suite.by_id("weblog_rollup")
    harness = Harness(backend)
    sandbox = harness.new_sandbox(loaded, "probe")
    try:
        assert sandbox.run(loaded.task.solution_text()).exit_code == 0
        script = sandbox.home / "bin" / "rollup.sh"
        script.write_text(PROBE)
        os.chown(script, 1000, 1000)
        outcome = harness.play(EpisodeSpec("t", loaded.task.id), loaded, sandbox, _Idle())
    finally:
        sandbox.close()
    # The hidden test reports the script's stderr in its failure message: the probe's findings.
    assert outcome.verdict is not None and outcome.verdict.error is None, outcome.verdict
    messages = " ".join(o.message for o in outcome.verdict.outcomes)
    assert "found-runner" in messages, messages
    for escape in ("fd-listed", "mem-opened", "fd-written"):
        assert escape not in messages
    assert not outcome.verdict.complete


def test_git_settings_of_the_agents_repository_run_no_code_in_the_verifier(backend, tmp_path):
    core = load_suite(CORE / "contracts.jsonl")
    loaded = core.by_id("git_commit_configs")
    harness = Harness(backend)
    sandbox = harness.new_sandbox(loaded, "fsmonitor")
    try:
        assert sandbox.run(loaded.task.solution_text()).exit_code == 0
        hook = sandbox.home / "fsmonitor.sh"
        hook.write_text(FSMONITOR)
        os.chmod(hook, 0o755)
        os.chown(hook, 1000, 1000)
        assert sandbox.run("git -C ~/repo config core.fsmonitor /home/user/fsmonitor.sh && git -C ~/repo status >/dev/null").exit_code == 0
        assert "fsmonitor-ran" in (sandbox.home / "probe.log").read_text()  # git runs it for the agent
        (sandbox.home / "probe.log").unlink()
        sandbox.stop_processes()
        snapshot_dir = tmp_path / "v"
        verdict = run_hidden_tests(backend, sandbox, loaded.task, loaded.contract.tests, 20, scratch=snapshot_dir.parent)
    finally:
        sandbox.close()
    assert verdict.error is None
    assert verdict.complete, [o.message for o in verdict.outcomes if o.outcome != "passed"]


class _Idle(ReferenceAgent):
    """Plays nothing more: the work was done before the episode started."""

    def commands_for(self, context):
        return []
