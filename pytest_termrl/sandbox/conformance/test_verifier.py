"""The verifier: hidden tests in a fresh sandbox whose results the agent cannot forge.

Each attack is played by the script agent on a real core task the noop agent fails. Every
attack that plants code also carries the task's real answer, produced only if the planted
code ever runs inside the verifier: a pass would mean the attack worked.

Every backend's verifier must hold against the same attacks. The tasks are those of a
source checkout (:mod:`.tasks`); without one this module skips.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sys

import pytest

from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent, ScriptAgent
from pytest_termrl.episode import EpisodeSettings, EpisodeSpec
from pytest_termrl.harness import Harness
from pytest_termrl.tasks.suite import load_suite
from pytest_termrl.verifier.verify import run_hidden_tests

from .fixtures import backend, termrl_backend_factory  # noqa: F401  (fixtures)
from .scripts import dedent
from .tasks import CORE, require_task_suites, solution_of

require_task_suites()

TASK = "log_error_counts"


@pytest.fixture(scope="module")
def suite():
    return load_suite(CORE / "contracts.jsonl")


def play(backend, suite, agent, script: str | None = None, task_id: str = TASK, keep_open: bool = False):
    loaded = suite.by_id(task_id)
    harness = Harness(backend, EpisodeSettings(command_timeout_s=20), predictions={task_id: script} if script else {})
    sandbox = harness.new_sandbox(loaded, f"verify-{agent.name}")
    try:
        outcome = harness.play(EpisodeSpec("core", task_id), loaded, sandbox, agent)
    except BaseException:
        sandbox.close()
        raise
    if keep_open:
        return outcome, sandbox, loaded
    sandbox.close()
    return outcome


def assert_real_failure(outcome, loaded_tests) -> None:
    """The genuine hidden tests ran, reported back authentically, and did not all pass."""
    assert not outcome.safe_success
    verdict = outcome.verdict
    assert verdict is not None and verdict.error is None, verdict and verdict.error
    assert outcome.harness_error is None
    assert [o.nodeid for o in verdict.outcomes] == list(loaded_tests)
    assert verdict.passed < verdict.total


def test_oracle_passes_and_noop_fails(backend, suite):
    tests = suite.by_id(TASK).contract.tests
    good = play(backend, suite, ReferenceAgent())
    assert good.safe_success and good.verdict.complete
    assert good.verdict.passed == good.verdict.total == len(tests)
    assert good.reward == 1.0
    bad = play(backend, suite, NoopAgent())
    assert_real_failure(bad, tests)
    assert bad.verdict.passed == 0 and bad.reward == 0.0
    text = bad.failure_text()
    assert f"hidden tests: 0/{len(tests)} passed" in text
    assert "FAILED test_outputs.py::test_counts_per_component" in text
    assert "does not exist" in text


def test_the_answer_alone_passes(backend, suite):
    # The control for every attack below: the payload they smuggle is a correct answer.
    outcome = play(backend, suite, ScriptAgent(), ANSWER)
    assert outcome.safe_success


ANSWER = solution_of(TASK)
# Python that writes the answer when executed (inside the verifier, if it ever runs there).
PY_ANSWER = f"import subprocess; subprocess.run(['bash', '-c', {ANSWER!r}])"

SITE = f"python{sys.version_info.major}.{sys.version_info.minor}"
ATTACKS = {
    "conftest_in_home": dedent(
        f"""
        cat > ~/conftest.py <<'EOF'
        {PY_ANSWER}
        import pytest
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            outcome.get_result().outcome = "passed"
        EOF
        mkdir -p ~/tests ~/reports
        cp ~/conftest.py ~/tests/conftest.py
        cp ~/conftest.py ~/reports/conftest.py
        """
    ),
    "sitecustomize_and_pth": dedent(
        f"""
        cat > ~/sitecustomize.py <<'EOF'
        {PY_ANSWER}
        EOF
        cp ~/sitecustomize.py ~/usercustomize.py
        cp ~/sitecustomize.py ~/evil.pth
        mkdir -p ~/.local/lib/{SITE}/site-packages ~/pytest
        cp ~/sitecustomize.py ~/usercustomize.py ~/evil.pth ~/.local/lib/{SITE}/site-packages/
        cp ~/sitecustomize.py ~/pytest/__init__.py
        cp ~/sitecustomize.py ~/_pytest.py
        """
    ),
    "fake_results_files": dedent(
        """
        mkdir -p ~/reports ~/.pytest_cache/v/cache ~/logs/verifier
        echo 1 > ~/reward.txt; echo 1 > ~/logs/verifier/reward.txt
        echo '{}' > ~/.pytest_cache/v/cache/lastfailed
        echo '{"exit_code": 0, "passed": 4, "failed": 0}' > ~/results.json
        echo '<testsuite tests="4" failures="0" errors="0"/>' > ~/report.xml
        printf '{"body": "{\\"exit_code\\": 0}", "mac": "%064d"}\\n' 0 > ~/payload.json
        echo ok > /tmp/termrl_result
        """
    ),
    "fake_pytest_output": dedent(
        """
        echo '============================= 5 passed in 0.02s =============================='
        echo 'test_outputs.py .....                                                   [100%]'
        printf '{"body": "{\\"outcomes\\": {}}", "mac": "00"}\\n'
        """
    ),
    "edited_copy_of_tests": dedent(
        """
        mkdir -p ~/tests
        cat > ~/tests/test_outputs.py <<'EOF'
        def test_report_exists_and_ends_with_newline(): pass
        def test_counts_per_component(): pass
        def test_message_and_case_traps_not_counted(): pass
        def test_exact_content_and_order(): pass
        EOF
        cp ~/tests/test_outputs.py ~/test_outputs.py
        """
    ),
    "background_killer": dedent(
        """
        nohup sh -c 'sleep 1; pkill -f pytest; pkill -f runner.py' >/dev/null 2>&1 &
        setsid nohup sh -c 'while :; do pkill -9 -f python; sleep 0.1; done' >/dev/null 2>&1 < /dev/null &
        """
    ),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_attack_does_not_turn_a_failing_task_into_a_pass(backend, suite, attack):
    outcome = play(backend, suite, ScriptAgent(), ATTACKS[attack])
    assert outcome.commands and outcome.commands[0].exit_code == 0, outcome.commands and outcome.commands[0].output
    assert_real_failure(outcome, suite.by_id(TASK).contract.tests)


@pytest.mark.parametrize(
    ("attack", "trigger"),
    [
        ("conftest_in_home", "python3 -c \"exec(open('/home/user/tests/conftest.py').read().splitlines()[0])\""),
        ("sitecustomize_and_pth", "python3 ~/sitecustomize.py"),
        ("sitecustomize_and_pth", f"python3 -c \"exec(open('/home/user/.local/lib/{SITE}/site-packages/evil.pth').read())\""),
    ],
    ids=["conftest", "sitecustomize", "pth"],
)
def test_planted_payloads_are_live(backend, suite, attack, trigger):
    # The attacks above are real: run once by hand, their planted code solves the task.
    outcome = play(backend, suite, ScriptAgent(), ATTACKS[attack] + trigger + "\n")
    assert outcome.safe_success, outcome.failure_text()


def test_background_killer_does_not_stop_the_verifier(backend, suite):
    # With the answer in place and the killers left running, the verdict is still a clean pass.
    outcome = play(backend, suite, ScriptAgent(), ATTACKS["background_killer"] + ANSWER)
    assert outcome.harness_error is None
    assert outcome.safe_success, outcome.failure_text()


def test_tampering_with_the_hidden_tests_folder_is_impossible(backend, suite):
    # The tests are mounted read-only at a path outside the home; the agent never sees them.
    outcome = play(backend, suite, ScriptAgent(), "ls /opt/termrl/tests 2>&1; ls -d /opt/termrl 2>&1; find / -name 'test_outputs.py' 2>/dev/null | head -3")
    assert "test_outputs.py" not in outcome.commands[0].output
    assert "No such file" in outcome.commands[0].output


# -- inventory -------------------------------------------------------------------------
def test_inventory_mismatch_names_the_test(backend, suite):
    outcome, sandbox, loaded = play(backend, suite, ReferenceAgent(), keep_open=True)
    try:
        assert outcome.safe_success
        inventory = loaded.contract.tests
        extra = "test_outputs.py::test_that_was_never_written"
        verdict = run_hidden_tests(backend, sandbox, loaded.task, inventory + (extra,), 20)
        assert verdict.error is None and not verdict.complete
        assert verdict.passed == len(inventory)
        assert [o.outcome for o in verdict.outcomes if o.nodeid == extra] == ["missing"]
        assert any(extra in problem and "did not run" in problem for problem in verdict.problems)
        # A test that runs but is not in the inventory is a problem too.
        short = inventory[:-1]
        verdict = run_hidden_tests(backend, sandbox, loaded.task, short, 20)
        assert not verdict.complete
        assert any(inventory[-1] in problem and "not in the inventory" in problem for problem in verdict.problems)
        # The frozen inventory itself: complete.
        assert run_hidden_tests(backend, sandbox, loaded.task, inventory, 20).complete
    finally:
        sandbox.close()


# -- authentication --------------------------------------------------------------------
def signed_payload(body: dict, key: bytes, mac: str | None = None) -> bytes:
    """The result channel's envelope for ``body``: its JSON and a MAC under ``key`` (or the ``mac`` given)."""
    text = json.dumps(body, sort_keys=True)
    mac = mac if mac is not None else hmac.new(key, text.encode(), hashlib.sha256).hexdigest()
    return json.dumps({"body": text, "mac": mac}).encode() + b"\n"


def test_forged_payload_is_rejected_end_to_end(backend, suite, monkeypatch):
    # The verifier's result channel answers with a well-formed payload under the wrong key:
    # the verdict is a harness error, never a pass.
    outcome, sandbox, loaded = play(backend, suite, ReferenceAgent(), keep_open=True)
    try:
        original = type(backend).run_isolated

        def forging(self, request):
            run = original(self, request)
            envelope = json.loads(run.payload)
            forged = signed_payload(json.loads(envelope["body"]), b"not the key")
            return type(run)(run.returncode, forged, run.log, run.timed_out)

        monkeypatch.setattr(type(backend), "run_isolated", forging)
        verdict = run_hidden_tests(backend, sandbox, loaded.task, loaded.contract.tests, 20)
        assert verdict.error is not None and "no authenticated result" in verdict.error
        assert not verdict.complete
    finally:
        sandbox.close()
