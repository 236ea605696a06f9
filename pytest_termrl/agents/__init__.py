"""Agents: the interface, the built-in agents and a registry by name."""

from __future__ import annotations

from typing import Callable

from ..registry import Entry, Registry
from .base import Agent, AgentContext, AgentUsage, EpisodeLimits, Observation, Turn
from .builtin import AGENT_ALIASES, NoopAgent, RecoveryAgent, ReferenceAgent, ScriptAgent, load_predictions

AgentFactory = Callable[[], Agent]

AGENTS: Registry[type[Agent] | AgentFactory] = Registry("agent", {
    "reference": Entry("pytest_termrl.agents.builtin", "ReferenceAgent"),  # runs the task's reference solution
    "noop": Entry("pytest_termrl.agents.builtin", "NoopAgent"),  # does nothing: the floor
    "script": Entry("pytest_termrl.agents.builtin", "ScriptAgent"),  # runs a prepared script (--termrl-predictions)
    "recovery": Entry("pytest_termrl.agents.builtin", "RecoveryAgent"),  # repairs the fault, then runs the reference
    "openai": Entry("pytest_termrl.agents.openai_agent", "OpenAIAgent"),  # a model behind an OpenAI-compatible endpoint
    "replay": Entry("pytest_termrl.agents.replay", "ReplayAgent"),  # plays recorded trials (--termrl-trajectories)
    "mini-swe-agent": Entry("pytest_termrl.agents.mini_swe_agent", "MiniSweAgent", "miniswe"),  # mini-swe-agent's own loop and prompts
}, AGENT_ALIASES)
"""Every agent by name: its class, or a factory a plugin registered."""


def register_agent(name: str, factory: AgentFactory) -> None:
    AGENTS.register(name, factory)


def agent_names() -> list[str]:
    return AGENTS.names()


def needs_model(name: str) -> bool:
    """Whether the agent ``name`` is played by a model behind an OpenAI-compatible endpoint (its class says)."""
    factory = AGENTS[name]
    return isinstance(factory, type) and issubclass(factory, Agent) and factory.needs_model


def make_builtin_agent(name: str) -> Agent:
    """A new agent that needs nothing but its name; a model's agent is made with its endpoint instead."""
    if needs_model(name):
        raise ValueError(
            f"the agent {AGENTS.resolve(name)!r} is played by a model: make it with its endpoint "
            "(pytest_termrl.serving.model_run.make_openai_agent)"
        )
    return AGENTS[name]()


__all__ = [
    "AGENTS",
    "Agent",
    "AgentContext",
    "AgentUsage",
    "EpisodeLimits",
    "NoopAgent",
    "Observation",
    "RecoveryAgent",
    "ReferenceAgent",
    "ScriptAgent",
    "Turn",
    "agent_names",
    "load_predictions",
    "make_builtin_agent",
    "needs_model",
    "register_agent",
]
