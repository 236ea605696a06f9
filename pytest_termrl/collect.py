"""Contract files -> parametrised episode tests.

A suite's contracts.jsonl is collected by a Module whose object is a generated module
holding one real test function, parametrised over task x family x prompt x attempt, so
fixtures and marks work as for any test. A broken task becomes its own collection error
naming the file and field, and the other tasks still run.
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from .episode import EpisodeSpec
from .selfcheck import CHECKS
from .tasks.contracts import CONTRACTS_FILE
from .tasks.suite import LoadedTask, Suite, load_suite

SUITES_KEY = pytest.StashKey[dict]()
"""config.stash: {(suite root, task id): LoadedTask} for every collected task."""


def is_inside_suite(path: Path) -> bool:
    """True for anything under a folder holding contracts.jsonl, other than that file itself."""
    if path.name == CONTRACTS_FILE:
        return False
    for parent in path.parents:
        if (parent / CONTRACTS_FILE).is_file():
            return True
    return False


def episode_marks(loaded: LoadedTask, family: str) -> list[pytest.MarkDecorator]:
    task = loaded.task
    names = ["termrl", f"family_{family}", f"difficulty_{task.difficulty}", f"category_{task.category}"]
    if loaded.split:
        names.append(f"split_{loaded.split}")
    return [getattr(pytest.mark, name) for name in names]


def marker_names(suite: Suite, families: list[str]) -> list[str]:
    names = {"termrl"} | {f"family_{f}" for f in families}
    for loaded in suite.tasks:
        names |= {f"difficulty_{loaded.task.difficulty}", f"category_{loaded.task.category}"}
        if loaded.split:
            names.add(f"split_{loaded.split}")
    return sorted(names)


def _test_episode(termrl_spec, termrl_outcome):
    """One episode: passes iff the hidden tests pass and nothing outside the contract was touched."""
    if not termrl_outcome.safe_success:
        pytest.fail(termrl_outcome.failure_text(), pytrace=False)


def _test_selfcheck(termrl_spec, termrl_check_result):
    """One validity check of one task: the grader and the oracle judge as they must."""
    if not termrl_check_result["ok"]:
        pytest.fail(f"{termrl_check_result['task_id']}: {termrl_check_result['check']} failed: {termrl_check_result['detail']}", pytrace=False)


def _test_audit(termrl_spec, termrl_audit_receipt):
    """One (task, accident) of the grader audit: the oracle must catch the accident, the reference must pass."""
    if not termrl_audit_receipt["ok"]:
        r = termrl_audit_receipt
        what = "the reference" if r["accident"] == "reference" else f"accident {r['accident']} ({r['command']})"
        pytest.fail(f"{r['task_id']}: {what}: grader: {r['grader_output']}; oracle: {r['oracle_findings'] or 'nothing found'}"
                    + (f"; {r['harness_error']}" if r["harness_error"] else ""), pytrace=False)


def _test_freeze(termrl_spec, termrl_freeze_result):
    """Validate a task's reference twice and produce its contract."""
    if termrl_freeze_result.get("error"):
        pytest.fail(termrl_freeze_result["error"], pytrace=False)


class BrokenTask(pytest.Collector):
    """A task that could not be loaded: reported as its own collection error."""

    def __init__(self, *, message: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.message = message

    def collect(self):
        raise pytest.Collector.CollectError(self.message)

    def repr_failure(self, excinfo):
        return self.message


class ContractsModule(pytest.Module):
    """The collector for one suite's contracts.jsonl."""

    @property
    def options(self):
        from .plugin import termrl_options

        return termrl_options(self.config)

    def _getobj(self):
        config = self.config
        options = self.options
        mode = options.mode
        suite = load_suite(self.path, require_contracts=(mode == "run"))
        self.suite = suite
        registry = config.stash.setdefault(SUITES_KEY, {})
        for loaded in suite.tasks:
            registry[(str(self.path.parent), loaded.task.id)] = loaded
        for name in marker_names(suite, options.families):
            config.addinivalue_line("markers", f"{name}: pytest-termrl episode marker")
        module = types.ModuleType(f"termrl_suite_{suite.name}")
        module.__file__ = str(self.path)
        specs = self._specs(suite, mode)
        params = [pytest.param(spec, id=spec.id, marks=marks) for spec, marks in specs]
        function = {"freeze": _test_freeze, "selfcheck": _test_selfcheck, "audit": _test_audit}.get(mode, _test_episode)
        test = types.FunctionType(function.__code__, function.__globals__, "test_" + mode_name(mode))
        test.__doc__ = function.__doc__
        module.__dict__[test.__name__] = pytest.mark.parametrize("termrl_spec", params)(test)
        return module

    def _specs(self, suite: Suite, mode: str) -> list[tuple[EpisodeSpec, list]]:
        options = self.options
        suite_id = str(self.path.parent)
        specs = []
        selected_split = options.split
        for loaded in sorted(suite.tasks, key=lambda lt: lt.task.id):
            if selected_split and loaded.split != selected_split:
                continue
            if mode == "freeze":
                specs.append((EpisodeSpec(suite_id, loaded.task.id, "freeze", "reference", 0, label=loaded.task.id), episode_marks(loaded, "clean")))
                continue
            if mode == "audit":
                from .audit import ACCIDENTS, REFERENCE

                for name in (REFERENCE, *ACCIDENTS):
                    spec = EpisodeSpec(suite_id, loaded.task.id, name, "audit", 0, label=f"{loaded.task.id}-{name}")
                    specs.append((spec, episode_marks(loaded, "clean")))
                continue
            if mode == "selfcheck":
                faults = sorted(loaded.contract.fault_targets) if loaded.contract else []
                for check in [*CHECKS, *(f"fault_{f}" for f in faults)]:
                    spec = EpisodeSpec(suite_id, loaded.task.id, check, "selfcheck", 0, label=f"{loaded.task.id}-{check}")
                    specs.append((spec, episode_marks(loaded, "clean")))
                continue
            for family in options.families:
                if family != "clean" and family not in (loaded.contract.fault_targets if loaded.contract else {}):
                    continue
                for prompt in options.prompt_names:
                    for attempt in range(options.attempts):
                        specs.append((EpisodeSpec(suite_id, loaded.task.id, family, prompt, attempt), episode_marks(loaded, family)))
        return specs

    def collect(self):
        items = list(super().collect())
        for name, message in sorted(self.suite.problems.items()):
            items.append(BrokenTask.from_parent(self, name=name, message=message))
        return items


def mode_name(mode: str) -> str:
    return {"run": "episode"}.get(mode, mode)
