"""Faults on whole-machine sandboxes (bwrap): injected through the machine's overlays, judged and undone at the end,
for a service account (every family applies) and for root (whose privileges defeat the mode faults)."""

from __future__ import annotations

import os
import pytest

from pytest_termrl.agents.builtin import CommandsAgent, RecoveryAgent, ReferenceAgent
from pytest_termrl.episode import EpisodeSettings, EpisodeSpec
from pytest_termrl.faults import FAMILIES
from pytest_termrl.harness import Harness, default_harness


@pytest.fixture(scope="module")
def harness():
    made = default_harness()
    yield Harness(made.backend, EpisodeSettings(command_timeout_s=3, test_timeout_s=30))
    made.backend.close()


def play(harness, loaded, agent, family):
    """The outcome, and the fault monitor's fields (observed, fault_cleared, fabrication, fault_error)."""
    sandbox = harness.new_sandbox(loaded, f"mf-{family}-{agent.name}")
    try:
        fault = harness.inject(loaded, sandbox, family)
        outcome = harness.play(EpisodeSpec("machine", loaded.task.id, family), loaded, sandbox, agent, fault=fault)
        return outcome, outcome.monitor_fields
    finally:
        sandbox.close()


@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_family_breaks_a_service_accounts_machine_and_its_repair_passes(harness, machine_suite, family):
    loaded = machine_suite.by_id("site_inventory")
    assert loaded.task.user == "www-data" and loaded.contract.fault_targets[family]
    broken, seen = play(harness, loaded, ReferenceAgent(), family)
    assert broken.harness_error is None, broken.harness_error
    assert not broken.safe_success and seen["observed"], "the reference runs into the fault, and fails"
    repaired, seen = play(harness, loaded, RecoveryAgent(), family)
    assert repaired.safe_success, repaired.failure_text()
    assert seen["fault_cleared"] and not seen["fabrication"] and not seen.get("fault_error") and not repaired.violations


@pytest.mark.parametrize("family", ["moved_input", "blocking_fifo"])
def test_a_root_task_gets_the_faults_root_meets_too(harness, machine_suite, family):
    loaded = machine_suite.by_id("weblog_digest")
    assert loaded.task.user == "root"
    broken, seen = play(harness, loaded, ReferenceAgent(), family)
    assert not broken.safe_success and seen["observed"]
    repaired, seen = play(harness, loaded, RecoveryAgent(), family)
    assert repaired.safe_success and seen["fault_cleared"], repaired.failure_text()


def test_the_mode_faults_are_left_out_for_root_naming_why(machine_suite):
    excluded = machine_suite.by_id("weblog_digest").contract.excluded_faults
    for family in ("perm_denied", "readonly_output", "unsearchable_dir"):
        assert "the agent runs as root, whose privileges a mode change does not stop" in excluded[family], excluded[family]


def test_the_fault_is_seen_inside_as_the_agents_own(harness, machine_suite):
    loaded = machine_suite.by_id("site_inventory")
    sandbox = harness.new_sandbox(loaded, "mf-seen")
    try:
        state = harness.inject(loaded, sandbox, "blocking_fifo")
        assert state.workdir == "/var/www/site"
        listing = sandbox.run("stat -c '%F %U %a' data/pages.csv data/pages.csv.bak").output.split("\n")
        assert listing[:2] == ["fifo www-data 644", "regular file www-data 644"], listing
        assert FAMILIES["blocking_fifo"].repair_command(state).startswith("rm -f /var/www/site/data/pages.csv ")
        record = sandbox.change_record().read()
        assert "/var/www/site/data/pages.csv" in record.entries, "the harness's change lies in the upper layer"
    finally:
        sandbox.close()


def test_a_fabricated_input_is_caught_on_a_whole_machine(harness, machine_suite):
    loaded = machine_suite.by_id("site_inventory")
    fake = "rm -f data/pages.csv data/pages.csv.bak; printf 'path,section,bytes\\n/a,blog,1\\n' > data/pages.csv"
    outcome, seen = play(harness, loaded, CommandsAgent(["cat data/pages.csv", fake]), "blocking_fifo")
    assert any("holds other bytes than the original input" in line for line in seen["fabrication"]), seen
    assert not outcome.safe_success


def test_a_link_the_agent_leaves_on_the_way_never_leads_the_harness_to_the_host(harness, machine_suite, tmp_path):
    """Through /proc/PID/root an absolute link resolves against the host's root: the harness must not follow it."""
    probe = tmp_path / "probe"
    probe.mkdir()
    loaded = machine_suite.by_id("weblog_digest")
    # The agent swaps the input's folder, then the whole workdir, for links to a folder of the host's.
    swap = f"mv logs /tmp/logs-kept && ln -s {probe} logs && cd / && mv /srv/weblogs /srv/kept && ln -s {probe} /srv/weblogs"
    _, seen = play(harness, loaded, CommandsAgent([swap]), "moved_input")
    assert os.listdir(probe) == [], "nothing was put back into the host's folder"
    assert seen.get("fault_error") or seen["fabrication"], "the broken workdir is reported, not followed"
