"""Tasks: the model, the loaders and the frozen contracts."""

from .contracts import CONTRACTS_FILE, Contract, check_task_files, hash_task_files, read_contracts, write_contracts
from .model import GraderSpec, ImageSpec, Task, TaskSource
from .native import load_native_task

__all__ = [
    "CONTRACTS_FILE",
    "Contract",
    "GraderSpec",
    "ImageSpec",
    "Task",
    "TaskSource",
    "check_task_files",
    "hash_task_files",
    "load_native_task",
    "read_contracts",
    "write_contracts",
]
