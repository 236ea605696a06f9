"""The pytest shell over the core, registered under the ``pytest11`` entry point.

Hooks live in :mod:`.hooks`, the shared fixtures in :mod:`.fixtures`, collection in
:mod:`.collection`, the stash keys in :mod:`.keys`; the controller object
(:mod:`.controller`) is registered on the controller process alone, and the run mode's
own module (:mod:`pytest_termrl.modes`) is registered for its fixture.
"""

from .fixtures import termrl_agent, termrl_fault, termrl_harness, termrl_sandbox, termrl_task
from .hooks import (
    pytest_addhooks,
    pytest_addoption,
    pytest_collect_directory,
    pytest_collect_file,
    pytest_collection_finish,
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_ignore_collect,
    pytest_pycollect_makemodule,
    pytest_runtest_makereport,
    pytest_unconfigure,
)
from .keys import termrl_options

__all__ = [
    "pytest_addhooks",
    "pytest_addoption",
    "pytest_collect_directory",
    "pytest_collect_file",
    "pytest_collection_finish",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_ignore_collect",
    "pytest_pycollect_makemodule",
    "pytest_runtest_makereport",
    "pytest_unconfigure",
    "termrl_agent",
    "termrl_fault",
    "termrl_harness",
    "termrl_options",
    "termrl_sandbox",
    "termrl_task",
]
