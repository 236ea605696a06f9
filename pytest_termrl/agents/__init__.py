"""Agents: the interface, the built-in agents and a registry by name."""

from __future__ import annotations

from typing import Callable

from .base import Agent, AgentContext, AgentUsage, EpisodeLimits, Observation, Turn
from .builtin import AGENT_ALIASES, NoopAgent, RecoveryAgent, ReferenceAgent, ScriptAgent, load_predictions

AgentFactory = Callable[[], Agent]
_AGENTS: dict[str, AgentFactory] = {"reference": ReferenceAgent, "noop": NoopAgent, "script": ScriptAgent, "recovery": RecoveryAgent}


def register_agent(name: str, factory: AgentFactory) -> None:
    _AGENTS[name] = factory


def agent_names() -> list[str]:
    return sorted(_AGENTS)


def make_builtin_agent(name: str) -> Agent:
    name = AGENT_ALIASES.get(name, name)
    if name not in _AGENTS:
        raise KeyError(f"unknown agent {name!r}; known: {', '.join(agent_names())}")
    return _AGENTS[name]()


__all__ = [
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
    "register_agent",
]
