"""``--ctrf FILE``: the run's results as a Common Test Report Format (CTRF) JSON file.

Harbor's task template runs its tests with ``uvx --with pytest-json-ctrf pytest --ctrf
/logs/verifier/ctrf.json ...``. Offline, the verifier's stand-in for uvx runs the trusted
pytest instead, and this plugin (loaded by the grader's pytest shim with ``-p termrl_ctrf``)
gives it the same option, so such a test.sh runs unchanged. Standard library only: it runs
on the harness's Python inside the verifier sandbox. It is a file of its own folder so that
nothing else of the runners' folder lands on the tests' import path.

The report: ``results.tool.name``, ``results.summary`` (tests, passed, failed, pending,
skipped, other, start and stop in epoch milliseconds) and one ``results.tests`` entry per
test (name, status, duration in milliseconds, and for a failure its message and trace). A
test's status is the worst of its phases: an error in setup or teardown is a failure, a
skip is a skip; an expected failure counts as skipped, an unexpected pass of a strict one
as failed, as pytest itself reports them.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

# pytest's Parser, Config, TestReport and Session: typed as Any, since the core's modules
# (this one included) import nothing from pytest, not even for the checker.

_RANK = {"passed": 0, "skipped": 1, "failed": 2}


def pytest_addoption(parser: Any) -> None:
    parser.getgroup("ctrf").addoption("--ctrf", action="store", default=None, metavar="PATH",
                                      help="write a CTRF JSON report of the run to PATH")


def pytest_configure(config: Any) -> None:
    path = config.getoption("ctrf", None)
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(CtrfReport(path), "termrl-ctrf-report")


class CtrfReport:
    def __init__(self, path: str) -> None:
        self.path = path
        self.start = int(time.time() * 1000)
        self.tests: dict[str, dict[str, Any]] = {}

    def pytest_runtest_logreport(self, report: Any) -> None:
        entry = self.tests.setdefault(report.nodeid, {"name": report.nodeid, "status": "passed", "duration": 0})
        entry["duration"] += int(round(getattr(report, "duration", 0.0) * 1000))
        status = "skipped" if report.skipped else "failed" if report.failed else "passed"
        if _RANK[status] > _RANK[entry["status"]]:
            entry["status"] = status
            if status == "failed":
                entry["message"] = f"{report.when} failed"
                entry["trace"] = str(report.longrepr)[-4000:]

    def pytest_sessionfinish(self, session: Any) -> None:
        tests = list(self.tests.values())
        summary: dict[str, int] = {"tests": len(tests), "pending": 0, "other": 0, "start": self.start, "stop": int(time.time() * 1000)}
        for status in ("passed", "failed", "skipped"):
            summary[status] = sum(1 for t in tests if t["status"] == status)
        report = {"results": {"tool": {"name": "pytest"}, "summary": summary, "tests": tests}}
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        with open(self.path, "w") as handle:
            json.dump(report, handle, indent=1)
