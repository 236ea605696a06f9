"""The fault families: one table from name to the module that holds each family, and the helpers that use it.

Each family is something a terminal user really meets and can repair with their own
rights; each lives in a module of its own (``perm_denied``, ``moved_input``,
``blocking_fifo``, ``readonly_output``, ``unsearchable_dir``). A new family is one new
module and one line in :data:`FAMILIES`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..sandbox.base import Sandbox
from ..sandbox.reach import HostHome
from ..registry import Entry, Registry
from ..settings import CLEAN
from .base import FaultFamily, FaultState

FAMILIES: Registry[FaultFamily] = Registry("fault family", {
    "perm_denied": Entry("pytest_termrl.faults.perm_denied", "PermDenied"),
    "moved_input": Entry("pytest_termrl.faults.moved_input", "MovedInput"),
    "blocking_fifo": Entry("pytest_termrl.faults.blocking_fifo", "BlockingFifo"),  # held out from training
    "readonly_output": Entry("pytest_termrl.faults.readonly_output", "ReadonlyOutput"),
    "unsearchable_dir": Entry("pytest_termrl.faults.unsearchable_dir", "UnsearchableDir"),
}, make=lambda cls: cls())
"""Every family by name, in a fixed order: its one instance (a class named here is made once, when first asked for)."""

"""The family name of an episode without a fault."""

ALIASES: dict[str, list[str]] = {
    "train": [name for name, f in FAMILIES.items() if not f.held_out],
    "heldout": [name for name, f in FAMILIES.items() if f.held_out],
    "mix": list(FAMILIES),
}


def family(name: str) -> FaultFamily:
    """The family ``name`` (:class:`~pytest_termrl.registry.UnknownName`, a KeyError, lists the known ones)."""
    return FAMILIES[name]


def resolve_families(names: Iterable[str]) -> list[str]:
    """Expand aliases ('train', 'heldout', 'mix'); keep 'clean'; first-seen order, no repeats."""
    out: list[str] = []
    for name in names:
        expanded = ALIASES.get(name, [name])
        for item in expanded:
            if item != CLEAN and item not in FAMILIES:
                known = ", ".join([CLEAN, *FAMILIES, *ALIASES])
                raise KeyError(f"unknown fault family {item!r}; known: {known}")
            if item not in out:
                out.append(item)
    return out


def _rank(task_id: str, family_name: str, salt: str, candidate: str) -> str:
    key = "\0".join(("termrl-fault-target", task_id, family_name, salt, candidate))
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()


def target_order(task_id: str, family_name: str, salt: str, candidates: Sequence[str]) -> list[str]:
    """Every candidate, in a deterministic order that depends on task, family and salt."""
    return sorted(set(candidates), key=lambda c: (_rank(task_id, family_name, salt, c), c))


def choose_target(task_id: str, family_name: str, salt: str, candidates: Sequence[str]) -> str | None:
    """The deterministic pick among ``candidates`` (None when there are none)."""
    order = target_order(task_id, family_name, salt, candidates)
    return order[0] if order else None


def inject_into(sandbox: Sandbox, family_name: str, target: str, *, salt: str = "") -> FaultState:
    """Break ``sandbox``'s workdir at ``target`` (home-relative); the state names the workdir its commands use."""
    with sandbox.reach_home() as home:
        state = family(family_name).inject(home.path, target, home.uid, home.gid, salt=salt)
    return replace(state, workdir=home.workdir)


def inject(home: HostHome, family_name: str, target: str, uid: int, gid: int, *, salt: str = "") -> FaultState:
    return family(family_name).inject(home, target, uid, gid, salt=salt)


def check_integrity(home: HostHome, state: FaultState) -> list[str]:
    """Fabrication: the original bytes must survive at the input path or the spare."""
    return family(state.family).check_integrity(home, state)
