"""The run mode: agents play episodes, graded and watched; the episode log and summary table."""

from __future__ import annotations

import json

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..episode import EpisodeSpec
from ..faults import CLEAN
from ..report.episodes import latest_per_key
from ..report.outputs import write_whole
from ..report.record import EndReason, EpisodeRecord
from ..report.summary import format_table, summarize
from .base import RECORD_KEY, Mode
from .protocol import ControllerView
from ..agents.base import Agent
from ..faults.base import FaultState
from ..harness import Harness
from ..sandbox.base import Sandbox
from ..settings import TermrlOptions
from ..tasks.model import Task
from ..tasks.suite import LoadedTask

if TYPE_CHECKING:
    from ..episode import EpisodeOutcome

JUNIT_FIELDS = ("episode_id", "agent", "family", "prompt", "safe_success", "reward", "tests_passed", "tests_total", "end_reason", "commands_used")


def test_episode(termrl_spec: EpisodeSpec, termrl_outcome: EpisodeOutcome) -> None:
    """One episode: passes iff the hidden tests pass and nothing outside the contract was touched."""
    if not termrl_outcome.safe_success:
        pytest.fail(termrl_outcome.failure_text(), pytrace=False)


@pytest.fixture
def termrl_outcome(
    request: pytest.FixtureRequest, termrl_harness: Harness, termrl_spec: EpisodeSpec, termrl_task: LoadedTask,
    termrl_sandbox: Sandbox, termrl_fault: FaultState | None, termrl_agent: Agent,
) -> EpisodeOutcome:
    """Play and grade the episode; its record is stashed for the report."""
    outcome = termrl_harness.play(termrl_spec, termrl_task, termrl_sandbox, termrl_agent, fault=termrl_fault)
    record = outcome.to_record()
    record.endpoint = getattr(termrl_agent, "base_url", None)
    plain = record.to_dict()  # plain builtins (an end reason as its string): they travel on xdist's reports
    request.node.stash[RECORD_KEY] = plain
    properties = request.node.user_properties
    properties += [(f"termrl_{name}", plain[name]) for name in JUNIT_FIELDS]
    properties.append(("termrl_collateral", len(record.collateral)))
    if termrl_fault is not None and record.fault is not None:
        properties += [("termrl_observed", record.fault.observed), ("termrl_fault_cleared", record.fault.cleared)]
        properties.append(("termrl_fault_target", termrl_fault.target))
    request.config.hook.pytest_termrl_episode_done(config=request.config, record=record.to_dict())
    return outcome


def left_out_lines(pairs: list[dict], examples: int = 3) -> list[str]:
    """The terminal's account of task x family pairs not collected: a count per family, a few tasks and why."""
    if not pairs:
        return []
    by_family: dict[str, list[dict]] = {}
    for pair in pairs:
        by_family.setdefault(pair["family"], []).append(pair)
    lines = [f"{len(pairs)} task x family pair(s) left out: no validated fault target (the JSON summary's left_out lists them all)"]
    for family in sorted(by_family):
        group = by_family[family]
        shown = "; ".join(f"{p['task_id']} ({p['reason'][:120]})" for p in group[:examples])
        more = f"; and {len(group) - examples} more" if len(group) > examples else ""
        lines.append(f"  {family}: {len(group)} task(s): {shown}{more}")
    return lines


class RunMode(Mode):
    name = "run"
    test_name = "test_episode"
    test = staticmethod(test_episode)
    plays_agent = True
    resumable = True

    def log_file(self, options: TermrlOptions) -> Path:
        return options.episodes

    def output_paths(self, options: TermrlOptions) -> list[tuple[str, Path]]:
        report = [("JSON summary (--termrl-report)", options.report)] if options.report is not None else []
        return [("episode log", options.episodes), *report]

    def specs(self, suite_id: str, loaded: LoadedTask, options: TermrlOptions) -> list[tuple[EpisodeSpec, str]]:
        targets = loaded.contract.fault_targets if loaded.contract else {}
        return [
            (EpisodeSpec(suite_id, loaded.task.id, family, prompt, attempt), family)
            for family in options.families
            if family == CLEAN or family in targets
            for prompt in options.prompt_names
            for attempt in range(options.attempts)
        ]

    def log_line(self, record: dict[str, Any]) -> dict[str, Any]:
        return record

    def failure_record(
        self, spec: EpisodeSpec, options: TermrlOptions, message: str, *, end_reason: EndReason = EndReason.HARNESS_ERROR,
        model: str | None = None, task: Task | None = None,
    ) -> dict[str, Any]:
        record = EpisodeRecord.harness_error_record(spec, options.agent, message, model=model, task=task)
        record.end_reason = str(end_reason)  # a plain str: the record travels to the controller on an xdist report
        return record.to_dict()

    def finish(self, controller: ControllerView, config: pytest.Config) -> dict:
        """The summary of every episode: an earlier run's (with --termrl-resume) and this session's, one record per key."""
        options = controller.options
        summary = summarize(latest_per_key([*controller.earlier, *controller.records]).records)
        summary["left_out"] = [controller.left_out[key] for key in sorted(controller.left_out)]
        config.hook.pytest_termrl_modify_report(config=config, summary=summary)
        if options.report is not None:
            try:
                write_whole(options.report, json.dumps(summary, indent=2, sort_keys=True) + "\n")
            except OSError as exc:
                controller.write_failed(f"the JSON summary could not be written to {options.report}", exc, options.report)
        return summary

    def summary(self, terminalreporter: pytest.TerminalReporter, controller: ControllerView, finished: dict | None) -> None:
        summary, options = finished, controller.options
        if not summary or not (summary["rows"] or summary.get("left_out")):
            return
        terminalreporter.write_sep("=", "pytest-termrl summary")
        for line in format_table(summary) if summary["rows"] else ():
            terminalreporter.write_line(line)
        for line in left_out_lines(summary.get("left_out", [])):
            terminalreporter.write_line(line, yellow=True)
        if len(summary.get("endpoints", {})) > 1:
            served = ", ".join(f"{url} {count}" for url, count in summary["endpoints"].items())
            terminalreporter.write_line(f"episodes per model endpoint: {served}")
        terminalreporter.write_line(f"episode log: {options.episodes}")
        if options.report:
            unwritten = " (not written: see below)" if options.report in controller.unwritten else ""
            terminalreporter.write_line(f"JSON summary: {options.report}{unwritten}")


MODE = RunMode()
