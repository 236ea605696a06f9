"""Modes see the controller through ControllerView alone: the controller implements it, and each
mode's finish and summary work on an object that has nothing else."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_termrl.modes import MODES, ControllerView
from pytest_termrl.plugin.controller import Controller
from pytest_termrl.settings import TermrlOptions


@dataclass
class View:
    """Exactly the protocol's members: a mode that reached for more would fail here."""

    options: TermrlOptions
    records: list[dict] = field(default_factory=list)
    earlier: list[dict] = field(default_factory=list)
    left_out: dict[tuple, dict] = field(default_factory=dict)
    unwritten: set[Path] = field(default_factory=set)
    failed: list[str] = field(default_factory=list)

    def write_failed(self, what: str, exc: OSError, path: Path | None = None) -> None:
        self.failed.append(what)
        if path is not None:
            self.unwritten.add(path)


class Terminal:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_sep(self, sep: str, title: str, **markup) -> None:
        self.lines.append(f"== {title}")

    def write_line(self, line: str, **markup) -> None:
        self.lines.append(line)


def test_the_controller_is_what_modes_see(pytestconfig, tmp_path):
    options = TermrlOptions(run_dir=tmp_path, episodes=tmp_path / "episodes.jsonl")
    assert isinstance(Controller(pytestconfig, options, MODES["run"]), ControllerView)
    assert isinstance(View(options), ControllerView)


def _record(task_id: str, family: str, safe: bool) -> dict:
    return {"suite": "s", "episode_id": f"{task_id}-{family}-p0_default-0", "task_id": task_id, "family": family,
            "prompt": "p0_default", "attempt": 0, "agent": "reference", "model": None, "safe_success": safe,
            "reward": float(safe), "tests_passed": int(safe), "tests_total": 1, "violations": [], "collateral": [],
            "harness_error": None, "end_reason": "agent_done", "commands_used": 1}


def test_the_run_mode_adds_up_earlier_and_new_records_and_reports_a_failed_write(pytestconfig, tmp_path):
    report = tmp_path / "missing" / "summary.json"
    view = View(TermrlOptions(run_dir=tmp_path, episodes=tmp_path / "episodes.jsonl", report=report),
                records=[_record("a", "clean", True)], earlier=[_record("b", "clean", False)],
                left_out={("s", "c", "perm_denied"): {"suite": "s", "task_id": "c", "family": "perm_denied", "reason": "none"}})
    report.parent.write_text("a file where a folder must be")
    finished = MODES["run"].finish(view, pytestconfig)
    assert finished is not None and finished["left_out"][0]["task_id"] == "c"
    assert view.failed == [f"the JSON summary could not be written to {report}"] and view.unwritten == {report}
    terminal = Terminal()
    MODES["run"].summary(terminal, view, finished)
    assert f"JSON summary: {report} (not written: see below)" in terminal.lines

    written = View(TermrlOptions(run_dir=tmp_path, episodes=tmp_path / "episodes.jsonl", report=tmp_path / "s.json"),
                   records=[_record("a", "clean", True)])
    summary = MODES["run"].finish(written, pytestconfig)
    assert json.loads((tmp_path / "s.json").read_text()) == summary
    assert written.failed == []


@pytest.mark.parametrize("name", [name for name in MODES if name != "run"])
def test_the_validity_modes_finish_and_summarise_from_the_view(pytestconfig, tmp_path, name):
    view = View(TermrlOptions(mode=name, run_dir=tmp_path, episodes=tmp_path / "episodes.jsonl"))
    assert MODES[name].finish(view, pytestconfig) is None
    terminal = Terminal()
    MODES[name].summary(terminal, view, None)
    assert terminal.lines and terminal.lines[0].startswith("== pytest-termrl")
