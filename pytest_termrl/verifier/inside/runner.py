"""Runs a task's hidden tests inside the verifier sandbox and signs the per-test outcomes.

Executed as ``python -I runner.py TESTS_DIR PER_TEST_TIMEOUT [LABEL]`` by the harness's own
Python. It imports nothing from the workspace and nothing from pytest_termrl. The MAC key
arrives on a pipe that is read once and closed before any test runs; the signed outcomes
leave on another pipe that no child process inherits. Output printed by the tests is never
parsed. A collection error that is the grader's own fault (:mod:`blame`; LABEL names the
tests folder in its message) is sent apart, as ``grader_errors``.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from types import FrameType, ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:  # the trusted toolchain, for the checker only: main() imports it at run time
    import pytest


class _Timeout(BaseException):
    """Raised by the per-test alarm; a BaseException so a test's `except Exception` can't eat it."""


class OutcomeCollector:
    def __init__(self, test_timeout_s: float, tests_dir: str | None = None, label: str = "tests", blame: ModuleType | None = None) -> None:
        self.timeout = test_timeout_s
        self.tests_dir = tests_dir
        self.label = label
        self.blame = blame
        self.grader_errors: list[dict[str, str]] = []
        self.outcomes: dict[str, str] = {}
        self.messages: dict[str, str] = {}
        self.collected: list[str] = []
        self.collection_errors: list[dict[str, str]] = []

    def _alarm(self, signum: int, frame: FrameType | None) -> None:
        raise _Timeout(f"test exceeded the per-test timeout of {self.timeout:g} s")

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = [item.nodeid for item in session.items]

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors.append({"nodeid": report.nodeid, "message": _short(report)})

    def pytest_exception_interact(self, node: pytest.Item | pytest.Collector, call: pytest.CallInfo[Any], report: pytest.CollectReport | pytest.TestReport) -> None:
        """A test file that did not collect: is it the grader's own fault? (the exception is only here)"""
        if report.when != "collect" or call.excinfo is None or self.blame is None:
            return
        try:
            problem = self.blame.grader_fault(call.excinfo.value, self.tests_dir, self.label)
        except Exception:  # noqa: BLE001 - in doubt, the error stays the agent's, as before
            problem = None
        if problem:
            self.grader_errors.append({"nodeid": report.nodeid, "message": problem})

    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        signal.signal(signal.SIGALRM, self._alarm)
        signal.setitimer(signal.ITIMER_REAL, self.timeout)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "teardown":
            signal.setitimer(signal.ITIMER_REAL, 0)
        current = self.outcomes.get(report.nodeid)
        outcome: str
        if report.when == "call":
            outcome = report.outcome
        elif report.failed:
            outcome = "error"
        elif report.skipped:
            outcome = "skipped"
        else:
            outcome = current or "passed"
            if report.when == "setup":
                return
        if current in ("error", "failed") and outcome not in ("error", "failed"):
            return
        self.outcomes[report.nodeid] = outcome
        if report.failed or report.skipped:
            self.messages[report.nodeid] = _short(report)


def _short(report: pytest.CollectReport | pytest.TestReport) -> str:
    """The assertion lines ('E ...') and the crash location, or the tail of the report."""
    text = getattr(report, "longreprtext", "") or str(report.longrepr or "")
    lines = [line for line in text.splitlines() if line.startswith("E ")]
    crash = getattr(getattr(report.longrepr, "reprcrash", None), "message", None)
    picked = lines[:8] or ([crash] if crash else text.splitlines()[-8:])
    return "\n".join(picked)[:2000]


# pytest's plugins that grading has no use for: reports to other places, interactive and
# step-wise modes, and the end-of-run hunt for unraisable exceptions (a forced collection of
# every object, the costliest part of a short run). Tests keep every fixture they may use.
UNUSED_PLUGINS = ("cacheprovider", "pastebin", "junitxml", "doctest", "setuponly", "setupplan", "stepwise", "unraisableexception", "threadexception")

# Repository settings of the agent's git repositories must not run code in the verifier.
_GIT_OVERRIDES = {"core.fsmonitor": "false", "core.hooksPath": "/dev/null", "core.pager": "cat"}


def _warm_up() -> ModuleType:
    """Import pytest and its built-in plugins before the key is read: a spare does it ahead of its run.

    Only the trusted toolchain is imported (isolated mode: no workspace on sys.path).
    """
    import importlib

    import pytest

    try:
        from _pytest.config import default_plugins
    except ImportError:  # another pytest layout: it imports its plugins itself, later
        return pytest
    for name in default_plugins:
        if name in UNUSED_PLUGINS:
            continue
        try:
            importlib.import_module(f"_pytest.{name}")
        except Exception:  # noqa: BLE001 - a head start only; pytest reports real failures itself
            pass
    gc.freeze()  # what is loaded now stays: pytest's own collections at the end scan only the run's objects
    return pytest


def main(argv: list[str]) -> NoReturn:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import blame  # type: ignore[import-not-found]  # a sibling, by bare name: it runs as a script
    import channel  # type: ignore[import-not-found]

    sys.path.pop(0)  # the tests must not import the harness's modules by accident

    if not channel.non_dumpable():
        raise OSError("prctl(PR_SET_DUMPABLE, 0) failed")
    for index, (key, value) in enumerate(_GIT_OVERRIDES.items()):
        os.environ[f"GIT_CONFIG_KEY_{index}"] = key
        os.environ[f"GIT_CONFIG_VALUE_{index}"] = value
    os.environ["GIT_CONFIG_COUNT"] = str(len(_GIT_OVERRIDES))
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.environ.pop("PYTEST_ADDOPTS", None)
    sys.dont_write_bytecode = True
    pytest = _warm_up()
    # A spare started ahead waits here: its home and tests are put in place before the key comes.
    key = channel.read_key()
    result_fd = channel.result_fd()
    tests_dir, test_timeout_s = argv[1], float(argv[2])
    label = argv[3] if len(argv) > 3 else "tests"
    os.environ["TEST_DIR"] = "/tests" if os.path.isdir("/tests") else tests_dir

    collector = OutcomeCollector(test_timeout_s, tests_dir, label, blame)
    args = [
        tests_dir,
        "-q",
        *(f"-pno:{name}" for name in UNUSED_PLUGINS),
        "--rootdir", tests_dir,
        "--confcutdir", tests_dir,
        "-c", os.devnull,
        "-o", "python_files=test_*.py",
        "--tb=short",
    ]
    exit_code = int(pytest.main(args, plugins=[collector]))
    channel.send_signed(
        result_fd,
        key,
        {
            "exit_code": exit_code,
            "collected": collector.collected,
            "outcomes": collector.outcomes,
            "messages": collector.messages,
            "collection_errors": collector.collection_errors,
            "grader_errors": collector.grader_errors,
        },
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # the verdict is sent: the interpreter's teardown would only delay the harness


if __name__ == "__main__":
    sys.exit(main(sys.argv))
