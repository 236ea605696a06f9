"""The fixtures every mode's test builds on: the run's harness, the task, its sandbox, fault and agent."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from ..agents import make_builtin_agent
from ..agents.base import Agent
from ..episode import EpisodeSpec
from ..faults.base import FaultState
from ..sandbox.base import Sandbox
from ..tasks.suite import LoadedTask
from ..serving.endpoints import EndpointPool
from ..harness import Harness
from .keys import POOL_KEY, loaded_task, termrl_options
from .server import model_endpoint, played_by_model


@pytest.fixture(scope="session")
def termrl_harness(request: pytest.FixtureRequest) -> Iterator[Harness]:
    """The run's harness (backend, limits, prompts, predictions), built as every command-line tool builds it."""
    config = request.config
    harness = Harness.from_options(
        termrl_options(config),
        supply_backend=lambda name, settings: config.hook.pytest_termrl_make_sandbox(config=config, name=name, settings=settings, workroot=None),
    )
    yield harness
    harness.backend.close()


@pytest.fixture
def termrl_task(request: pytest.FixtureRequest, termrl_spec: EpisodeSpec) -> LoadedTask:
    """The LoadedTask (task, contract, split) this item plays."""
    return loaded_task(request.config, termrl_spec.suite, termrl_spec.task_id)


@pytest.fixture
def termrl_sandbox(termrl_harness: Harness, termrl_task: LoadedTask, termrl_spec: EpisodeSpec) -> Iterator[Sandbox]:
    """A sandbox with the task's environment and setup in place; every process gone afterwards."""
    sandbox = termrl_harness.new_sandbox(termrl_task, termrl_spec.id)
    try:
        yield sandbox
    finally:
        sandbox.close()


@pytest.fixture
def termrl_fault(termrl_harness: Harness, termrl_sandbox: Sandbox, termrl_spec: EpisodeSpec, termrl_task: LoadedTask) -> FaultState | None:
    """The fault injected into the sandbox for this episode's family (None for 'clean')."""
    return termrl_harness.inject(termrl_task, termrl_sandbox, termrl_spec.family)


@pytest.fixture
def termrl_agent(request: pytest.FixtureRequest, termrl_spec: EpisodeSpec, termrl_task: LoadedTask) -> Iterator[Agent]:
    """The agent that plays this episode (a hook may supply it; else --termrl-agent)."""
    config = request.config
    agent = config.hook.pytest_termrl_make_agent(config=config, spec=termrl_spec, task=termrl_task.task)
    if agent is None:
        options = termrl_options(config)
        if played_by_model(options.agent):
            from ..serving.model_run import make_openai_agent

            served = model_endpoint(config)[1]
            pool = endpoint_pool(config)
            agent = make_openai_agent(options.model, pool.pick(), served, options.agent)
            yield agent
            agent.close()
            _drop_if_dead(pool, agent)
            return
        agent = make_builtin_agent(options.agent)
    yield agent
    agent.close()


def endpoint_pool(config: pytest.Config) -> EndpointPool:
    """This process's rotation over the run's endpoints (:mod:`pytest_termrl.serving.endpoints`)."""
    pool = config.stash.get(POOL_KEY, None)
    if pool is None:
        base_url = model_endpoint(config)[0]
        urls = termrl_options(config).model.base_urls or ([base_url] if base_url is not None else [])
        worker = getattr(config, "workerinput", {}).get("workerid", "gw0")
        offset = int(worker[2:]) if worker[2:].isdigit() else 0
        pool = config.stash[POOL_KEY] = EndpointPool(list(urls), offset)
    return pool


def _drop_if_dead(pool: EndpointPool, agent: Any) -> None:
    """An endpoint that stopped answering leaves the rotation, with one warning (its episode is a server error)."""
    if len(pool.urls) > 1 and getattr(agent, "endpoint_failed", False) and pool.mark_down(agent.base_url, agent.error or ""):
        live = len(pool.urls) - len(pool.down)
        warnings.warn(pytest.PytestWarning(
            f"pytest-termrl: the model endpoint {agent.base_url} stopped answering ({agent.error}); taken out of "
            f"rotation, {live} of {len(pool.urls)} endpoint(s) left; --termrl-resume plays its failed episodes again"
        ))
