"""The verifier's run is one IsolatedRequest: the network it joins and the limits it runs under
come from the sandbox that was graded, passed along the call, never looked up on the side.

Real bwrap sandboxes; a backend that keeps every request it was given.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import write_tiny_task
from pytest_termrl.agents.builtin import ReferenceAgent
from pytest_termrl.episode import EpisodeSettings
from pytest_termrl.harness import Harness
from pytest_termrl.sandbox import IsolatedRequest, IsolatedRun, SandboxSettings
from pytest_termrl.sandbox.base import MiB
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend
from pytest_termrl.tasks.importers import load_task_dir
from pytest_termrl.tasks.suite import LoadedTask
from pytest_termrl.verifier.verify import run_hidden_tests

DATA = Path(__file__).resolve().parents[2] / "data"
SERVICE = DATA / "harbor_fields" / "hb-service"
"""Harbor, shared verifier: the reference leaves a server running on 127.0.0.1:8765, the grader probes it."""
RESOURCES = DATA / "harbor_resources"

pytestmark = pytest.mark.usefixtures("import_cache")  # imports land in a cache of this run's own


class RequestsKept(BwrapBackend):
    """bwrap, keeping every isolated request it ran."""

    def __init__(self, settings: SandboxSettings, workroot: Path | None = None) -> None:
        super().__init__(settings, workroot)
        self.requests: list[IsolatedRequest] = []

    def run_isolated(self, request: IsolatedRequest) -> IsolatedRun:
        self.requests.append(request)
        return super().run_isolated(request)


@pytest.fixture(scope="module")
def harness():
    backend = RequestsKept(SandboxSettings())
    yield Harness(backend, EpisodeSettings(command_timeout_s=20, test_timeout_s=20))
    backend.close()


def _last_request(harness: Harness) -> IsolatedRequest:
    backend = harness.backend
    assert isinstance(backend, RequestsKept) and backend.requests
    return backend.requests[-1]


def _in_the_agents_network(harness: Harness, request: IsolatedRequest) -> bool:
    """Whether the run joins a network namespace of the agent's processes (bwrap as root; unprivileged, none can be joined)."""
    joined = request.network is not None and re.fullmatch(r"/proc/\d+/ns/net", request.network) is not None
    assert joined or request.network is None, request
    return joined


def test_a_task_graded_beside_the_agent_sends_the_agents_network_and_its_server_answers(harness):
    loaded = LoadedTask(load_task_dir(SERVICE), None)
    assert loaded.task.graded_beside_the_agent
    outcome, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    beside = _in_the_agents_network(harness, _last_request(harness))
    assert beside == harness.backend.privileged
    if beside:
        assert outcome.safe_success and outcome.verdict.native_reward == 1.0, outcome.verdict.to_dict()


def test_a_native_task_runs_its_grader_in_its_own_network(harness, tmp_path):
    loaded = LoadedTask(load_task_dir(write_tiny_task(tmp_path, "tiny_net")), None)
    assert not loaded.task.graded_beside_the_agent
    outcome, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert outcome.safe_success, outcome.failure_text()
    assert _last_request(harness).network is None


def test_outside_an_episode_the_grader_joins_the_agents_network_only_when_told(harness):
    """Freezing, fault validation and audits grade without ``beside_agent``: their own network, as before."""
    loaded = LoadedTask(load_task_dir(SERVICE), None)
    sandbox = harness.new_sandbox(loaded, "beside-told")
    try:
        assert sandbox.run(loaded.task.solution_text(), timeout_s=30).exit_code == 0
        alone = run_hidden_tests(harness.backend, sandbox, loaded.task, None, 20)
        assert _last_request(harness).network is None
        assert alone.native_reward == 0.0, alone.to_dict()  # the server is up, but not in the grader's network
        beside = run_hidden_tests(harness.backend, sandbox, loaded.task, None, 20, beside_agent=True)
        assert _in_the_agents_network(harness, _last_request(harness)) == harness.backend.privileged
        if harness.backend.privileged:
            assert beside.native_reward == 1.0, beside.to_dict()
    finally:
        sandbox.close()


@pytest.mark.parametrize("name, memory_bytes", [("hr-memory-64", 64 * MiB), ("hr-no-limits", None)])
def test_a_tasks_resources_reach_the_verifier_run_in_its_request(harness, name, memory_bytes):
    played = harness.play_fresh(LoadedTask(load_task_dir(RESOURCES / name), None), ReferenceAgent(), "reference", keep_open=True)
    try:
        assert played.outcome.safe_success, played.outcome.failure_text()
        request = _last_request(harness)
        assert played.sandbox is not None and request.settings == played.sandbox.settings
        assert request.settings.memory_bytes == (memory_bytes or harness.backend.settings.memory_bytes)
        assert (request.settings == harness.backend.settings) == (memory_bytes is None)
    finally:
        if played.sandbox is not None:
            played.sandbox.close()
