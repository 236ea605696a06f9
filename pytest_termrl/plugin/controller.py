"""The controller's plugin object: it alone owns the run directory, the log, the records and the summary.

Registered only on the xdist controller (or in a run without xdist), the way xdist's
``DSession`` and pytest-json-report's ``JSONReport`` are; workers only play items and put
their records on reports. The controller claims the run directory (one run at a time, every
output path writable) before the first episode, records an episode whose worker crashed as
a harness error, and turns a failed write into a named message and a non-zero exit instead
of a traceback.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import pytest

from ..episode import EpisodeSpec
from ..modes import Mode
from ..report.artifacts import keep_artifacts
from ..report.episodes import EpisodeLog, describe_os_error, latest_per_key, read_log, settled
from ..report.outputs import OutputError, RunClaim
from ..report.record import EndReason, episode_key
from ..settings import TermrlOptions
from ..tasks.contracts import CONTRACTS_FILE
from ..tasks.suite import LoadedTask, load_suite
from .collection import is_task_folder, suite_grid, unplayed_task_folders
from .keys import ENDPOINT_KEY, LEFT_OUT_KEY, SIGTERM_KEY
from .server import model_endpoint, played_by_model

if TYPE_CHECKING:
    from xdist.scheduler.protocol import Scheduling
    from xdist.workermanage import WorkerController

WRITE_FAILED = pytest.ExitCode.INTERNAL_ERROR
"""The exit status of a run that could not write some of its results (no traceback: each is named)."""


class Controller:
    """The run's one owner of its outputs; modes see it as a :class:`~pytest_termrl.modes.ControllerView`."""

    def __init__(self, config: pytest.Config, options: TermrlOptions, mode: Mode) -> None:
        self.config = config
        self.options = options
        self.mode = mode
        self.records: list[dict] = []
        """Every record that came back on a report this session, in arrival order."""
        self.earlier: list[dict] = []
        """With --termrl-resume: the log's records from earlier runs, one per episode key."""
        self.summary: dict | None = None
        """What the mode's ``finish`` returned (the run mode's summary), handed back to its ``summary``."""
        self.done: set = set()
        """Places (:meth:`place_of`) of episodes an earlier run settled (with --termrl-resume): not run again."""
        self.collected_folders: set[Path] = set()
        """The folders collected items came from (every worker's are the same)."""
        self.notes: list[str] = []
        """Warnings about what was read (duplicates dropped from the log)."""
        self.failures: list[str] = []
        """What could not be written, each naming the episode or file and why: the run exits non-zero."""
        self.unwritten: set[Path] = set()
        self.claim: RunClaim | None = None
        self.log: EpisodeLog | None = None
        self._grids: dict[Path, dict[str, tuple[EpisodeSpec, LoadedTask]]] = {}
        self.left_out: dict[tuple, dict] = {}
        """(suite, task, family) -> the pair's record, for pairs collection left out (no validated fault target)."""
        html = config.getoption("termrl_html", None)
        self.html_path: Path | None = Path(html) if html and mode.plays_agent else None
        """--termrl-html: the report written at the end from every record of the run."""

    # -- the run directory ---------------------------------------------------------------
    def claim_outputs(self) -> None:
        """Hold the run directory and check every output path; read (resume) or rotate the log.

        Raises OutputError naming the path and why. Called at configure when the command line
        names a suite, else at the first record; a run that plays no episode writes nothing.
        """
        path = self.mode.log_file(self.options)
        if self.claim is not None or path is None:
            return
        html = [("HTML report (--termrl-html)", self.html_path)] if self.html_path is not None else []
        if html and importlib.util.find_spec("matplotlib") is None:
            raise OutputError("--termrl-html draws its plots with matplotlib: pip install 'pytest-termrl[report]'")
        self.claim = RunClaim(self.options.run_dir, [*self.mode.output_paths(self.options), *html], path)
        self.log = EpisodeLog(path)
        if self.options.resume:
            contents = read_log(path)
            self.earlier = contents.records
            self.done = {place for place in (self.place_of(r) for r in contents.records if settled(r)) if place}
            if contents.warning():
                self.notes.append(f"pytest-termrl: {contents.warning()}")
        else:
            self.log.rotate()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.claim is not None:
            self.claim.release()

    # -- records ---------------------------------------------------------------------------
    def suite_of(self, nodeid: str) -> str | None:
        """This machine's path of the suite an item's node id names (None: not a suite's item here).

        Node ids are relative to the rootdir and the same on every xdist worker (xdist checks
        that), while a worker on another machine loads the suite from its own copy; records
        are kept with the controller's path, so that one episode has one key wherever it ran.
        """
        path = Path(os.path.abspath(Path(str(self.config.rootpath)) / nodeid.split("::")[0]))
        return str(path.parent) if path.name == CONTRACTS_FILE and path.is_file() else None

    def place_of(self, record: dict) -> tuple | None:
        """(contracts file as a node id names it, episode id, agent, model): what a worker can match its items by."""
        suite, episode_id = record.get("suite"), record.get("episode_id")
        if not suite or not episode_id:
            return None
        contracts = os.path.relpath(Path(suite) / CONTRACTS_FILE, str(self.config.rootpath))
        return episode_key(Path(contracts).as_posix(), episode_id, record.get("agent") or "", record.get("model"))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = getattr(report, "termrl_episode", None)
        if record is None:
            return
        here = self.suite_of(report.nodeid)
        if here is not None and record.get("suite") != here:
            record["suite"] = here  # played on another machine, from its copy of the suite
        self.records.append(record)
        line = self.mode.log_line(record)
        if line is None:
            return
        try:
            self.claim_outputs()
            if keep_artifacts(record, self.options.run_dir):
                relogged = self.mode.log_line(record)
                if relogged is not None:
                    line = relogged
            if self.log is not None:
                self.log.append(line)
        except (OSError, OutputError) as exc:
            log = self.mode.log_file(self.options)
            self.write_failed(f"episode {line['episode_id']} could not be recorded in {log}", exc, log)

    def write_failed(self, what: str, exc: OSError | OutputError, path: Path | None = None) -> None:
        """Name what could not be written and why, now and in the summary; the run will exit non-zero."""
        reason = describe_os_error(exc) if isinstance(exc, OSError) else str(exc)
        message = f"pytest-termrl: {what}: {reason}"
        self.failures.append(message)
        if path is not None:
            self.unwritten.add(path)
        self.say(message)

    def say(self, line: str) -> None:
        """A line on the terminal now (stderr without a terminal reporter)."""
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(line, red=True)
        else:
            print(line, file=sys.stderr)

    def crash_record(self, nodeid: str, message: str) -> dict | None:
        """The harness-error record of the item a crashed worker was playing (None: not an episode of this run)."""
        found = self.spec_of(nodeid)
        if found is None:
            return None
        spec, loaded = found
        model = episode_identity(self.config, self.options)[1] or None
        return self.mode.failure_record(spec, self.options, message, end_reason=EndReason.WORKER_CRASHED, model=model, task=loaded.task)

    def spec_of(self, nodeid: str) -> tuple[EpisodeSpec, LoadedTask] | None:
        """The spec behind a node id, from the contracts file it names, collected again on the controller.

        Under xdist the controller collects nothing itself (``DSession.pytest_collection``);
        the map of each suite's items is built from the same file the workers collected,
        on the first crash in that suite.
        """
        file_part, _, rest = nodeid.partition("::")
        path = Path(os.path.abspath(Path(str(self.config.rootpath)) / file_part))
        if path.name != CONTRACTS_FILE or not rest.endswith("]") or "[" not in rest:
            return None
        if path not in self._grids:
            try:
                suite = load_suite(path, require_contracts=self.mode.require_contracts)
            except Exception:  # noqa: BLE001 - a suite that no longer loads: the crash stays pytest's alone
                return None
            grid = suite_grid(suite, str(path.parent), self.options, self.mode)
            self._grids[path] = {spec.id: (spec, loaded) for loaded, spec, _ in grid}
        return self._grids[path].get(rest[rest.index("[") + 1 : -1])

    def add_left_out(self, pairs: list[dict]) -> None:
        """Pairs a collection left out (every worker collects the same: kept once, with this machine's suite path)."""
        for pair in pairs:
            pair = dict(pair)
            pair["suite"] = self.suite_of(pair.pop("nodeid", "")) or pair["suite"]
            self.left_out.setdefault((pair["suite"], pair["task_id"], pair["family"]), pair)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.add_left_out(session.config.stash.get(LEFT_OUT_KEY, []))  # empty on an xdist controller
        self.collected_under(item.nodeid for item in session.items)

    def collected_under(self, nodeids: Iterable[str]) -> None:
        """Note the folders items were collected from (the task folders' hint is for folders that gave none)."""
        root = Path(str(self.config.rootpath))
        for nodeid in nodeids:
            self.collected_folders.add((root / nodeid.split("::")[0]).parent)

    # -- the end of the run ----------------------------------------------------------------
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.log is not None:
            self.log.close()
        try:
            self.summary = self.mode.finish(self, session.config)
        except OSError as exc:
            self.write_failed(f"the {self.mode.name} results could not be written", exc)
        if self.html_path is not None and (self.records or self.earlier):
            self.write_html()
        if self.failures and session.exitstatus not in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.USAGE_ERROR):
            session.exitstatus = WRITE_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        self.mode.summary(terminalreporter, self, self.summary)
        if not self.mode.makes_suites and not self.options.unfrozen:
            for folder, count in unplayed_task_folders(self.config.args, self.config.getini("norecursedirs")):
                if any(found == folder or folder in found.parents for found in self.collected_folders):
                    continue  # the folder gave tests of its own: its task folders are that project's data
                if is_task_folder(folder):
                    advice = (f"pytest-termrl: {folder} is a task, which plays from the folder that holds it: freeze that "
                              f"into a suite with `pytest {folder.parent} --termrl-freeze` (-k {folder.name} to play this "
                              f"one), or play it as it is with `pytest {folder.parent} --termrl-unfrozen -k {folder.name}`")
                else:
                    advice = (f"pytest-termrl: {folder} holds {count} task folder(s) without contracts.jsonl: none was "
                              f"collected (a task's own test files are never imported as the run's tests); freeze them into "
                              f"a suite with `pytest {folder} --termrl-freeze`, or play them as they are with --termrl-unfrozen")
                terminalreporter.write_line(advice, yellow=True)
        if self.html_path is not None and (self.records or self.earlier):
            unwritten = " (not written: see below)" if self.html_path in self.unwritten else ""
            terminalreporter.write_line(f"HTML report: {self.html_path}{unwritten}")
        if not (self.notes or self.failures):
            return
        terminalreporter.write_sep("=", "pytest-termrl: log and output problems", red=bool(self.failures), yellow=not self.failures)
        for line in self.notes:
            terminalreporter.write_line(line, yellow=True)
        for line in self.failures:
            terminalreporter.write_line(line, red=True)
        if self.failures:
            terminalreporter.write_line(
                f"pytest-termrl: {len(self.failures)} result(s) not written: the run exits with status {int(WRITE_FAILED)}; "
                "after freeing the space, --termrl-resume plays the episodes the log lacks", red=True)

    def write_html(self) -> None:
        """The HTML report of every episode of the run (an earlier run's too, with --termrl-resume)."""
        from ..report.html import Run, write_html

        assert self.html_path is not None  # the caller checks
        records = latest_per_key([*self.earlier, *self.records]).records
        try:
            write_html(self.html_path, [Run(self.options.run_dir.name or "run", records, str(self.options.episodes))])
        except (OSError, ImportError) as exc:
            failure = OutputError(str(exc)) if isinstance(exc, ImportError) else exc
            self.write_failed(f"the HTML report could not be written to {self.html_path}", failure, self.html_path)


CONTROLLER_KEY = pytest.StashKey[Controller]()
"""config.stash: the Controller, on the controller process (or a run without xdist) only."""


class XdistController:
    """Registered on the controller only when xdist is present: hands its knowledge to each worker, records crashes."""

    def __init__(self, controller: Controller) -> None:
        self.controller = controller

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: WorkerController, ids: list[str]) -> None:
        self.controller.collected_under(ids)

    def pytest_configure_node(self, node: WorkerController) -> None:
        node.workerinput["termrl_done"] = [list(k) for k in sorted(self.controller.done)]
        endpoint = node.config.stash.get(ENDPOINT_KEY, None)
        if endpoint is not None:
            node.workerinput["termrl_endpoint"] = list(endpoint)

    def pytest_testnodeready(self, node: WorkerController) -> None:
        """A local worker's pid, so that a SIGTERM to the controller reaches it too (:mod:`.signals`)."""
        terminate = node.config.stash.get(SIGTERM_KEY, None)
        pid = getattr(getattr(node.gateway, "_cache_rinfo", None), "pid", None)
        if terminate is not None and node.gateway.spec.popen and pid:
            terminate.forward_to.add(int(pid))

    def pytest_testnodedown(self, node: WorkerController, error: object | None) -> None:
        self.controller.add_left_out(getattr(node, "workeroutput", {}).get("termrl_left_out", []))
        terminate = node.config.stash.get(SIGTERM_KEY, None)
        pid = getattr(getattr(node.gateway, "_cache_rinfo", None), "pid", None)
        if terminate is not None and pid:
            terminate.forward_to.discard(int(pid))

    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Scheduling) -> None:
        """A worker died playing ``crashitem``: its failed report carries a ``worker_crashed`` record."""
        record = self.controller.crash_record(crashitem, str(report.longrepr))
        if record is not None:
            setattr(report, "termrl_episode", record)
            self.controller.say(f"pytest-termrl: episode {record['episode_id']} was lost with its worker: recorded as a "
                                f"harness error (end reason {EndReason.WORKER_CRASHED}); --termrl-resume plays it again")


def done_keys(config: pytest.Config) -> set[tuple[Any, ...]]:
    """Places of episodes to skip (:meth:`Controller.place_of`): the controller's own set, or what it handed this worker."""
    if not hasattr(config, "workerinput"):
        controller = config.stash.get(CONTROLLER_KEY, None)
        return controller.done if controller else set()
    return {tuple(k) for k in config.workerinput.get("termrl_done", [])}


def episode_identity(config: pytest.Config, options: TermrlOptions) -> tuple[str, str]:
    """(agent, model) of this run's episode keys, as --termrl-agent and the endpoint name them."""
    if not played_by_model(options.agent):
        return options.agent, ""
    from ..serving.model_run import model_name

    return options.agent, model_name(options.model, model_endpoint(config)[1])
