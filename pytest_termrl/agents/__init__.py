"""Agents: the interface, the built-in agents and a registry by name."""

from __future__ import annotations

from typing import Callable

from .base import Agent, AgentContext, AgentUsage, EpisodeLimits, Observation, Turn
from .builtin import NoopAgent, OracleAgent, ScriptAgent, load_predictions

AgentFactory = Callable[[], Agent]
_AGENTS: dict[str, AgentFactory] = {"oracle": OracleAgent, "noop": NoopAgent, "script": ScriptAgent}


def register_agent(name: str, factory: AgentFactory) -> None:
    _AGENTS[name] = factory


def agent_names() -> list[str]:
    return sorted(_AGENTS)


def make_builtin_agent(name: str) -> Agent:
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
    "OracleAgent",
    "ScriptAgent",
    "Turn",
    "agent_names",
    "load_predictions",
    "make_builtin_agent",
    "register_agent",
]
