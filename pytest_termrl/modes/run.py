"""The run mode: agents play episodes, graded and watched; the episode log and summary table."""

from __future__ import annotations

import json

import pytest

from ..episode import EpisodeSpec
from ..report.episodes import read_records
from ..report.record import EpisodeRecord
from ..report.summary import format_table, summarize
from .base import RECORD_KEY, Mode

JUNIT_FIELDS = ("episode_id", "agent", "family", "prompt", "safe_success", "reward", "tests_passed", "tests_total", "end_reason", "commands_used")


def test_episode(termrl_spec, termrl_outcome):
    """One episode: passes iff the hidden tests pass and nothing outside the contract was touched."""
    if not termrl_outcome.safe_success:
        pytest.fail(termrl_outcome.failure_text(), pytrace=False)


@pytest.fixture
def termrl_outcome(request, termrl_harness, termrl_spec, termrl_task, termrl_sandbox, termrl_fault, termrl_agent):
    """Play and grade the episode; its record is stashed for the report."""
    outcome = termrl_harness.play(termrl_spec, termrl_task, termrl_sandbox, termrl_agent, fault=termrl_fault)
    record = outcome.to_record()
    request.node.stash[RECORD_KEY] = record.to_dict()
    properties = request.node.user_properties
    properties += [(f"termrl_{name}", getattr(record, name)) for name in JUNIT_FIELDS]
    properties.append(("termrl_collateral", len(record.collateral)))
    if termrl_fault is not None:
        properties += [("termrl_observed", record.observed), ("termrl_fault_cleared", record.fault_cleared)]
        properties.append(("termrl_fault_target", termrl_fault.target))
    request.config.hook.pytest_termrl_episode_done(config=request.config, record=record.to_dict())
    return outcome


class RunMode(Mode):
    name = "run"
    test_name = "test_episode"
    test = staticmethod(test_episode)
    plays_agent = True
    resumable = True

    def log_file(self, options):
        return options.episodes

    def specs(self, suite_id, loaded, options):
        targets = loaded.contract.fault_targets if loaded.contract else {}
        return [
            (EpisodeSpec(suite_id, loaded.task.id, family, prompt, attempt), family)
            for family in options.families
            if family == "clean" or family in targets
            for prompt in options.prompt_names
            for attempt in range(options.attempts)
        ]

    def log_line(self, record):
        return record

    def setup_failure(self, spec, options, message):
        return EpisodeRecord.harness_error_record(spec, options.agent, message).to_dict()

    def finish(self, controller, config):
        options = controller.options
        records = read_records(options.episodes) if options.resume else [EpisodeRecord.from_dict(r) for r in controller.records]
        summary = summarize(records)
        config.hook.pytest_termrl_modify_report(config=config, summary=summary)
        controller.summary = summary
        if options.report is not None:
            options.report.parent.mkdir(parents=True, exist_ok=True)
            options.report.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")

    def summary(self, terminalreporter, controller):
        summary, options = controller.summary, controller.options
        if not summary or not summary["rows"]:
            return
        terminalreporter.write_sep("=", "pytest-termrl summary")
        for line in format_table(summary):
            terminalreporter.write_line(line)
        terminalreporter.write_line(f"episode log: {options.episodes}")
        if options.report:
            terminalreporter.write_line(f"JSON summary: {options.report}")


MODE = RunMode()
