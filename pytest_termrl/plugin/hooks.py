"""The plugin's pytest hooks: options, configure, collection, resume and report plumbing."""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from .. import hookspecs
from ..agents import load_predictions
from ..agents.prompts import REPO_PROMPTS_DIR, resolve_prompt
from ..errors import SetupFailed, TermrlError
from ..modes import MODES, OPTIONS_KEY, RECORD_KEY, Mode
from ..tasks.contracts import CONTRACTS_FILE
from ..report.outputs import OutputError
from ..report.record import EndReason, episode_key
from ..settings import TermrlOptions
from .collection import ContractsModule, TaskFile, UnfrozenSuite, holds_task_folders, inside_a_task, is_inside_suite, names_a_suite
from .controller import CONTROLLER_KEY, Controller, XdistController, done_keys, episode_identity
from .keys import LEFT_OUT_KEY, SIGTERM_KEY, SUITES_KEY, is_controller, termrl_options
from .options import add_options, read_options
from .progress import Progress
from .server import start_model_server, stop_model_server
from .signals import TerminateAsInterrupt


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs.TermrlHookSpecs)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    try:
        options = read_options(config)
        _resolve_prompts(config, options)
        if options.predictions is not None:
            load_predictions(options.predictions)
    except (ValueError, TermrlError) as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[OPTIONS_KEY] = options
    terminate = config.stash[SIGTERM_KEY] = TerminateAsInterrupt()
    terminate.install()
    if not config.getini("termrl_stop_on_broken_tasks"):
        # One broken task must not stop the others: its collection error is reported, and
        # the run still exits non-zero, but every valid episode runs.
        config.option.continue_on_collection_errors = True
    config.addinivalue_line("markers", "termrl: an episode of pytest-termrl")
    mode = MODES[options.mode]
    config.pluginmanager.register(_module_of(mode), f"termrl-mode-{mode.name}")  # the mode's fixture
    if is_controller(config):
        controller = Controller(config, options, mode)
        if names_a_suite(config.args, config.getini("norecursedirs")):
            # Before the model server starts and before any episode: one run per run directory,
            # every output path writable. A run that names no suite claims nothing.
            try:
                controller.claim_outputs()
            except (OutputError, OSError) as exc:
                raise pytest.UsageError(f"pytest-termrl: {exc}") from None
        config.stash[CONTROLLER_KEY] = controller
        config.pluginmanager.register(controller, "termrl-controller")
        if mode.plays_agent:
            config.pluginmanager.register(Progress(config, mode.test_name), "termrl-progress")
        if config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(XdistController(controller), "termrl-xdist")
        start_model_server(config, options)


def _resolve_prompts(config: pytest.Config, options: TermrlOptions) -> None:
    """Prompt names and texts, looked up in the rootdir's prompts/ and then the repository's."""
    search = [Path(str(config.rootpath)) / "prompts"]
    if REPO_PROMPTS_DIR.resolve() != search[0].resolve():
        search.append(REPO_PROMPTS_DIR)
    resolved = [resolve_prompt(value, search) for value in options.prompts]
    options.prompt_names = [name for name, _ in resolved]
    options.prompt_texts = dict(resolved)


def _module_of(mode: Mode) -> types.ModuleType:
    return sys.modules[type(mode).__module__]


def pytest_unconfigure(config: pytest.Config) -> None:
    stop_model_server(config)
    terminate = config.stash.get(SIGTERM_KEY, None)
    if terminate is not None:
        terminate.uninstall()


# -- collection ----------------------------------------------------------------------
def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> ContractsModule | None:
    if file_path.name == CONTRACTS_FILE:
        return ContractsModule.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> UnfrozenSuite | None:
    """In a mode that makes suites (freeze), a folder of task directories without contracts.jsonl is a new suite;
    with ``--termrl-unfrozen``, such a folder is played as it is (no file written).

    Only a folder the command line names (or one inside it) counts: pytest also lists the
    siblings of every folder on the way to an argument, and those are not the user's to change.
    """
    config = parent.config
    options = termrl_options(config)
    mode = MODES[options.mode]
    if not _named_by_arguments(path, config):
        return None
    if options.unfrozen and mode.plays_agent and not mode.makes_suites:
        if not (path / CONTRACTS_FILE).exists() and not is_inside_suite(path) and holds_task_folders(path):
            return UnfrozenSuite.from_parent(parent, path=path)
        return None
    if not mode.makes_suites:
        return None
    try:
        if (path / CONTRACTS_FILE).exists() or is_inside_suite(path):
            return None
        if holds_task_folders(path):  # native, Harbor or Terminal-Bench task folders
            (path / CONTRACTS_FILE).write_text("")
    except OSError:
        pass  # a folder that vanished or cannot be listed holds no new suite
    return None


def _named_by_arguments(path: Path, config: pytest.Config) -> bool:
    base = Path(config.invocation_params.dir)
    named = [(base / arg.split("::")[0]).resolve() for arg in config.args]
    here = path.resolve()
    return any(here == arg or arg in here.parents for arg in named)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A suite's files and any task folder's files are data: a task's hidden tests never import into the run."""
    if is_inside_suite(collection_path) or inside_a_task(collection_path):
        return True
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.File | None:
    """A task's test file named on the command line is not imported (pytest collects named files despite ignore rules)."""
    if inside_a_task(module_path):
        return TaskFile.from_parent(parent, path=module_path)
    return None


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """With --termrl-resume, deselect the episodes the log already holds."""
    options = termrl_options(config)
    done = done_keys(config)
    if not done or not MODES[options.mode].resumable:
        return
    agent, model = episode_identity(config, options)
    keep, skip = [], []
    for item in items:
        spec = item.callspec.params.get("termrl_spec") if hasattr(item, "callspec") else None
        if spec is not None and episode_key(item.nodeid.split("::")[0], spec.id, agent, model) in done:
            skip.append(item)
        else:
            keep.append(item)
    if skip:
        config.hook.pytest_deselected(items=skip)
        items[:] = keep


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection left out or could not match, said once per run (not once per xdist worker)."""
    config = session.config
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        left_out: list[dict[str, Any]] = config.stash.get(LEFT_OUT_KEY, [])
        workeroutput["termrl_left_out"] = list(left_out)
    options = termrl_options(config)
    first = workeroutput is None or getattr(config, "workerinput", {}).get("workerid") == "gw0"
    if not first or not config.stash.get(SUITES_KEY, None):
        return
    if options.predictions is not None:
        known = {task_id for _, task_id in config.stash[SUITES_KEY]}
        _warn_unknown("--termrl-predictions", options.predictions, "prediction(s)", sorted(set(load_predictions(options.predictions)) - known))
    if options.trajectories is not None and options.agent == "replay":
        _say_unplayed_trials(config, options.trajectories)


def _say_unplayed_trials(config: pytest.Config, path: Path) -> None:
    """The recorded trials that will not play: each skipped file's line, and the trials of tasks the run does not have."""
    from ..harness import recorded_name
    from ..trajectories.discover import read_recorded, trials_by_task

    trials, skipped = read_recorded(path)
    for item in skipped:
        warnings.warn(pytest.PytestWarning(f"--termrl-trajectories: skipped {item}"))
    names = set(trials_by_task(trials))
    matched = {recorded_name(loaded.task, names) for loaded in config.stash[SUITES_KEY].values()}
    _warn_unknown("--termrl-trajectories", path, "recorded trial(s)", sorted(names - matched))


def _warn_unknown(flag: str, path: Path, what: str, unknown: list[str]) -> None:
    if unknown:
        shown = ", ".join(unknown[:20]) + (f" and {len(unknown) - 20} more" if len(unknown) > 20 else "")
        warnings.warn(pytest.PytestWarning(f"{flag} {path}: {len(unknown)} {what} for task ids the collected suites do not have: {shown}"))


# -- reports -------------------------------------------------------------------------
@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """The item's record rides on its call report; an item whose setup failed gets the mode's failure record."""
    report = yield
    failed_setup = call.excinfo.value if call.excinfo is not None and isinstance(call.excinfo.value, SetupFailed) else None
    setup_failed = failed_setup is not None
    if setup_failed:
        report.longrepr = str(failed_setup)  # one readable block, not the fixture's traceback
    record = item.stash.get(RECORD_KEY, None)
    if record is not None and report.when == "call":
        setattr(report, "termrl_episode", record)  # plain builtins: it travels to the controller
        if item.config.pluginmanager.hasplugin("html") and item.config.getoption("htmlpath", None):
            _add_episode_extra(report, record)
    elif report.when == "setup" and report.failed and hasattr(item, "callspec"):
        spec = item.callspec.params.get("termrl_spec")
        if spec is not None:
            options = termrl_options(item.config)
            if setup_failed:
                message, end_reason = str(failed_setup), EndReason.SETUP_FAILED
            else:
                message = str(report.longrepr).strip().splitlines()[-1] if report.longrepr else "setup failed"
                end_reason = EndReason.HARNESS_ERROR
            model = episode_identity(item.config, options)[1] or None
            loaded = item.config.stash.get(SUITES_KEY, {}).get((spec.suite, spec.task_id))
            failure = MODES[options.mode].failure_record(spec, options, message, end_reason=end_reason, model=model, task=loaded.task if loaded is not None else None)
            if failure is not None:
                setattr(report, "termrl_episode", failure)
    return report


def _add_episode_extra(report: pytest.TestReport, record: dict[str, Any]) -> None:
    """pytest-html shows the episode view (static, escaped HTML) under the episode's test."""
    from ..report.html.episode_view import episode_html

    extra = {"name": "episode", "format_type": "html", "content": episode_html(record), "mime_type": None, "extension": None}
    setattr(report, "extras", [*getattr(report, "extras", []), extra])
