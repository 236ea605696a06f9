"""Fault families: break the environment on purpose, in ways a user can repair with user rights.

Imports nothing from pytest. The episode flow with a fault:

    state = FAMILIES[family].inject(sandbox.home, target, uid, gid)   # before decoys + baseline
    policy = task permissions + state.permissions()                   # repairing is never collateral
    monitors = [collateral_monitor, FaultMonitor(sandbox.home, state)] # fault monitor LAST
"""

from .base import FaultError, FaultFamily, FaultState, InputFileFamily
from .families import (
    ALIASES,
    CLEAN,
    FAMILIES,
    BlockingFifo,
    MovedInput,
    PermDenied,
    ReadonlyOutput,
    UnsearchableDir,
    check_integrity,
    choose_target,
    family,
    inject,
    resolve_families,
    target_order,
)
from .monitor import FaultMonitor
from .validate import FaultValidation, FrozenFaults, freeze_fault_targets, validate_pair

__all__ = [
    "ALIASES",
    "CLEAN",
    "FAMILIES",
    "BlockingFifo",
    "FaultError",
    "FaultFamily",
    "FaultMonitor",
    "FaultState",
    "FaultValidation",
    "FrozenFaults",
    "InputFileFamily",
    "MovedInput",
    "PermDenied",
    "ReadonlyOutput",
    "UnsearchableDir",
    "check_integrity",
    "choose_target",
    "family",
    "freeze_fault_targets",
    "inject",
    "resolve_families",
    "target_order",
    "validate_pair",
]
