"""Fault families: break the environment on purpose, in ways a user can repair with user rights.

Imports nothing from pytest. One module per family (``perm_denied``, ``moved_input``,
``blocking_fifo``, ``readonly_output``, ``unsearchable_dir``), one table of them
(:mod:`.families`). The episode flow with a fault:

    state = inject_into(sandbox, family, target)                 # before decoys + baseline
    policy = task permissions + state.permissions()               # repairing is never collateral
    monitors = [collateral_monitor, FaultMonitor(sandbox, state)] # fault monitor LAST

The harness reaches the sandbox's workdir from the host (``Sandbox.reach_home``): the
native home, or a whole machine's workdir through its overlays.
"""

from .base import FaultError, FaultFamily, FaultState, InputFileFamily
from .blocking_fifo import BlockingFifo
from .families import ALIASES, CLEAN, FAMILIES, check_integrity, choose_target, family, inject, inject_into, resolve_families, target_order
from .moved_input import MovedInput
from .perm_denied import PermDenied
from .readonly_output import ReadonlyOutput
from .unsearchable_dir import UnsearchableDir
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
    "inject_into",
    "resolve_families",
    "target_order",
    "validate_pair",
]
