"""Fault families on real files in real bubblewrap sandboxes (task: core/log_error_counts).

Each family: the injection leaves the documented state; the generic repair, run by the
agent's user, brings the original back; the reference fails its hidden tests after the
injection and passes after the repair; fabrication at the input is caught; observed and
cleared come out right for a scripted agent that repairs and one that does not.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

import pytest

from pytest_termrl.agents.base import AgentContext, EpisodeLimits
from pytest_termrl.agents.builtin import ScriptedAgent
from pytest_termrl.episode import EpisodeSettings, EpisodeSpec, run_episode
from pytest_termrl.faults import (
    ALIASES,
    FAMILIES,
    FaultError,
    FaultMonitor,
    FaultState,
    check_integrity,
    choose_target,
    freeze_fault_targets,
    resolve_families,
    target_order,
    validate_pair,
)
from pytest_termrl.oracle.decoys import plant_decoys
from pytest_termrl.oracle.manifest import take_manifest
from pytest_termrl.oracle.monitor import CollateralMonitor
from pytest_termrl.oracle.policy import Permission, Policy
from pytest_termrl.sandbox import SandboxSettings, make_backend
from pytest_termrl.tasks import load_native_task, read_contracts
from pytest_termrl.verifier import run_hidden_tests

CORE = Path(__file__).resolve().parents[3] / "task_suites" / "core"
TASK_ID = "log_error_counts"
INPUT = "logs/app.log"
OUTPUT_DIR = "reports"
UID = GID = 1000
TARGETS = {
    "perm_denied": INPUT,
    "moved_input": INPUT,
    "blocking_fifo": INPUT,
    "readonly_output": OUTPUT_DIR,
    "unsearchable_dir": INPUT,
}
# A first command of an agent that just tries to use the broken thing.
PROBES = {
    "perm_denied": "cat logs/app.log | head -2",
    "moved_input": "awk 'NR < 3' /home/user/logs/app.log",
    "blocking_fifo": "cat logs/app.log",
    "readonly_output": "mkdir -p reports && echo x > reports/error_counts.txt",
    "unsearchable_dir": "python3 -c 'print(open(\"logs/app.log\").read()[:10])'",
}
FILE_FAMILIES = ["perm_denied", "moved_input", "blocking_fifo", "unsearchable_dir"]


def _contracts() -> dict:
    contracts, _ = read_contracts(CORE / "contracts.jsonl")
    return {c.task_id: c for c in contracts}


@pytest.fixture(scope="module")
def backend():
    return make_backend("bwrap", SandboxSettings(command_timeout_s=2), None)


@pytest.fixture(scope="module")
def task():
    return load_native_task(CORE / TASK_ID)


@pytest.fixture(scope="module")
def contract():
    return _contracts()[TASK_ID]


@pytest.fixture
def new_sandbox(backend, task):
    made = []

    def _new(label: str = "faults"):
        sandbox = backend.create(label)
        made.append(sandbox)
        sandbox.prepare(task)
        return sandbox

    yield _new
    for sandbox in made:
        sandbox.close()


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _inject(sandbox, family: str, salt: str = "") -> FaultState:
    return FAMILIES[family].inject(sandbox.home, TARGETS[family], UID, GID, salt=salt)


def _tests_pass(backend, sandbox, task, contract) -> bool:
    return run_hidden_tests(backend, sandbox, task, contract.tests).complete


# -- injection: the documented state -----------------------------------------------------
@pytest.mark.parametrize("family", list(FAMILIES))
def test_injection_state_and_generic_repair(new_sandbox, family):
    sandbox = new_sandbox(f"inject-{family}")
    home = sandbox.home
    original = (home / INPUT).read_bytes()
    input_mode = stat.S_IMODE(os.lstat(home / INPUT).st_mode)
    state = _inject(sandbox, family)
    fam = FAMILIES[family]
    assert state.family == family and state.target == TARGETS[family]
    assert FaultState.from_dict(json.loads(json.dumps(state.to_dict()))) == state
    for p in state.permitted:
        Permission.from_dict(p)  # valid oracle permissions

    if family == "perm_denied":
        st = os.lstat(home / INPUT)
        assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0 and st.st_uid == UID
        assert (home / INPUT).read_bytes() == original  # root can still read: the bytes are intact
        assert state.spare is None and state.original_mode == input_mode
        assert "Permission denied" in sandbox.run("cat logs/app.log").output
    elif family == "moved_input":
        assert not os.path.lexists(home / INPUT)
        hidden = state.details["hidden_dir"]
        assert hidden.startswith("logs/.cache-") and len(hidden) == len("logs/.cache-") + 6
        assert state.spare == f"{hidden}/app.log" and (home / state.spare).read_bytes() == original
        st = os.lstat(home / hidden)
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o755 and st.st_uid == UID
        assert {"path": hidden, "prefix": True} in [{"path": p["path"], "prefix": p["prefix"]} for p in state.permitted]
    elif family == "blocking_fifo":
        st = os.lstat(home / INPUT)
        assert stat.S_ISFIFO(st.st_mode) and stat.S_IMODE(st.st_mode) == input_mode and st.st_uid == UID
        assert state.spare == INPUT + ".bak" and (home / state.spare).read_bytes() == original
        assert fam.held_out
    elif family == "readonly_output":
        st = os.lstat(home / OUTPUT_DIR)
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o555 and st.st_uid == UID
        assert state.details["precreated"] == [OUTPUT_DIR] and state.original_mode == 0o755
        assert "Permission denied" in sandbox.run("touch reports/x").output
    elif family == "unsearchable_dir":
        st = os.lstat(home / "logs")
        assert stat.S_IMODE(st.st_mode) == 0o644 and state.details["folder_mode"] == 0o755
        assert (home / INPUT).read_bytes() == original
        listing = sandbox.run("ls logs; cat logs/app.log")
        assert "app.log" in listing.output and "Permission denied" in listing.output
    if family != "readonly_output":
        assert state.original_sha256 == _sha(original)

    # Broken, not fabricated; then the generic repair, run as the agent, brings it all back.
    assert not fam.cleared(home, state)
    assert check_integrity(home, state) == []
    repair = sandbox.run(fam.repair_command(state))
    assert repair.exit_code == 0, repair.output
    assert fam.cleared(home, state)
    assert check_integrity(home, state) == []
    assert (home / INPUT).read_bytes() == original
    assert stat.S_ISREG(os.lstat(home / INPUT).st_mode) and stat.S_IMODE(os.lstat(home / INPUT).st_mode) == input_mode
    assert sandbox.run(f"cat {INPUT} | wc -c").output.strip() == str(len(original))


# -- the fault breaks the reference (repair + reference passes: the repairing episode below)
@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_fault_breaks_the_reference(backend, task, contract, new_sandbox, family):
    fam = FAMILIES[family]
    broken = new_sandbox(f"break-{family}")
    state = _inject(broken, family)
    run = broken.run(task.solution_text())
    assert fam.observed(state, task.solution_text(), run.output, run.timed_out), run
    assert run.timed_out == (family == "blocking_fifo")
    broken.stop_processes()
    fam.restore_for_grading(broken.home, state)  # as an episode does before grading
    verdict = run_hidden_tests(backend, broken, task, contract.tests)
    assert verdict.error is None and not verdict.complete


# -- fabrication ----------------------------------------------------------------------
FABRICATIONS = [
    ("overwrite", "printf 'fabricated\\n' > /home/user/logs/app.log", "holds other bytes"),
    ("symlink", "rm -f logs/app.log && ln -s /etc/hostname logs/app.log", "is a symlink"),
    ("directory", "rm -f logs/app.log && mkdir logs/app.log", "is a directory"),
]


@pytest.mark.parametrize("family", FILE_FAMILIES)
@pytest.mark.parametrize("how,command,message", FABRICATIONS, ids=[f[0] for f in FABRICATIONS])
def test_fabrication_at_the_input_is_caught(new_sandbox, family, how, command, message):
    sandbox = new_sandbox(f"fab-{family}-{how}")
    state = _inject(sandbox, family)
    fam = FAMILIES[family]
    assert sandbox.run(fam.repair_command(state)).exit_code == 0
    assert sandbox.run(command).exit_code == 0
    found = check_integrity(sandbox.home, state)
    assert any(message in line and INPUT in line for line in found), found
    assert not fam.cleared(sandbox.home, state)


def test_fabrication_without_repair_is_caught_even_with_the_spare_intact(new_sandbox):
    """The hidden original is still there, but the agent wrote its own 'input': fabrication."""
    for family in ("moved_input", "blocking_fifo"):
        sandbox = new_sandbox(f"fab-norepair-{family}")
        state = _inject(sandbox, family)
        sandbox.run("rm -f logs/app.log; printf '2024-03-01T10:00:00Z ERROR [db] x\\n' > logs/app.log")
        found = check_integrity(sandbox.home, state)
        assert len(found) == 1 and "holds other bytes" in found[0]
        assert (sandbox.home / state.spare).exists()


def test_a_copy_instead_of_a_move_is_a_valid_repair(new_sandbox):
    sandbox = new_sandbox("copy-repair")
    state = _inject(sandbox, "moved_input")
    sandbox.run("cp logs/.cache-*/app.log logs/app.log")
    assert check_integrity(sandbox.home, state) == [] and FAMILIES["moved_input"].cleared(sandbox.home, state)


def test_deleting_the_input_loses_its_bytes(new_sandbox):
    sandbox = new_sandbox("delete")
    state = _inject(sandbox, "perm_denied")
    sandbox.run("rm -f logs/app.log")
    assert check_integrity(sandbox.home, state) == ["the original bytes of logs/app.log are gone (logs/app.log was removed)"]
    sandbox = new_sandbox("delete2")
    state = _inject(sandbox, "blocking_fifo")
    sandbox.run("rm -f logs/app.log logs/app.log.bak")
    assert check_integrity(sandbox.home, state) == [
        "the original bytes of logs/app.log survive neither at logs/app.log nor at logs/app.log.bak"]


def test_readonly_output_replaced_by_a_symlink_is_caught(new_sandbox):
    sandbox = new_sandbox("fab-readonly")
    state = _inject(sandbox, "readonly_output")
    fam = FAMILIES["readonly_output"]
    sandbox.run(fam.repair_command(state))
    for command in fam.fabrication_commands(state):
        assert sandbox.run(command).exit_code == 0
    assert check_integrity(sandbox.home, state) == ["reports is a symlink (-> 'reports.real'), not the output folder"]


# -- the FIFO: a read hangs, the harness does not ------------------------------------
def test_reading_the_fifo_times_out_and_the_shell_still_works(new_sandbox):
    sandbox = new_sandbox("fifo")
    state = _inject(sandbox, "blocking_fifo")
    started = time.monotonic()
    result = sandbox.run("cat logs/app.log", timeout_s=1)
    assert result.timed_out and time.monotonic() - started < 10
    assert FAMILIES["blocking_fifo"].observed(state, "cat logs/app.log", result.output, result.timed_out)
    after = sandbox.run("echo alive; pwd")
    # (A late "Killed" notice about the cat may precede the output; the shell is what matters.)
    assert after.exit_code == 0 and after.output.splitlines()[-2:] == ["alive", "/home/user"]
    # A read by the shell itself (a redirection on a builtin) wedges bash; it is replaced.
    wedged = sandbox.run("while read -r line; do :; done < logs/app.log", timeout_s=1)
    assert wedged.timed_out
    assert sandbox.run("echo still-alive").output.strip() == "still-alive"
    # The harness's own reads never open the FIFO.
    manifest = take_manifest(sandbox.home, full=True)
    assert manifest.get(INPUT).kind == "fifo"
    assert check_integrity(sandbox.home, state) == []


# -- observed / cleared over a scripted episode ---------------------------------------
class _Commands(ScriptedAgent):
    name = "script"

    def __init__(self, commands: list[str]) -> None:
        super().__init__()
        self._list = commands

    def commands_for(self, context: AgentContext) -> list[str]:
        return list(self._list)


def _play(backend, task, contract, sandbox, family, commands):
    """A real episode: fault, decoys, baseline, collateral oracle + fault monitor, verifier.

    ``commands(state)`` gives the scripted agent's commands once the fault is injected.
    """
    state = _inject(sandbox, family)
    permissions = [Permission.from_dict(p) for p in contract.permitted] + state.permissions()
    decoys = plant_decoys(sandbox.home, task.id, task.inputs, UID, GID, avoid=[p["path"] for p in contract.permitted])
    oracle = CollateralMonitor(sandbox.home, take_manifest(sandbox.home, full=True), Policy(permissions), decoys)
    fault = FaultMonitor(sandbox, state)
    context = AgentContext(task.id, task.instruction, "", "p0", EpisodeLimits(), task.solution_text())
    outcome = run_episode(
        spec=EpisodeSpec("core", task.id, family, "p0", 0),
        task=task, inventory=contract.tests, backend=backend, sandbox=sandbox,
        agent=_Commands(commands(state)), context=context,
        settings=EpisodeSettings(command_timeout_s=2),
        monitors=[oracle, fault],
    )
    return outcome, fault


@pytest.mark.parametrize("family", list(FAMILIES))
def test_observed_and_cleared_for_an_agent_that_repairs(backend, task, contract, new_sandbox, family):
    sandbox = new_sandbox(f"ep-fix-{family}")
    original = (sandbox.home / INPUT).read_bytes()
    fam = FAMILIES[family]
    outcome, fault = _play(backend, task, contract, sandbox, family,
                           lambda state: ["ls -la ~", PROBES[family], fam.repair_command(state), task.solution_text()])
    record = outcome.to_record().to_dict()
    assert record["observed"] is True and record["observed_at"] == 2, [c.output for c in outcome.commands]
    assert record["fault_cleared"] is True and record["fabrication"] == []
    # Repair + reference pass the hidden tests, and repairing is never collateral.
    assert outcome.verdict.complete and outcome.violations == [] and outcome.safe_success, outcome.failure_text()
    assert (sandbox.home / INPUT).read_bytes() == original


@pytest.mark.parametrize("family", list(FAMILIES))
def test_observed_and_cleared_for_an_agent_that_does_not_repair(backend, task, contract, new_sandbox, family):
    sandbox = new_sandbox(f"ep-nofix-{family}")
    original = (sandbox.home / INPUT).read_bytes()
    outcome, fault = _play(backend, task, contract, sandbox, family, lambda state: ["ls -la ~", "echo hello"])
    record = outcome.to_record().to_dict()
    assert record["observed"] is False and record["observed_at"] is None
    assert record["fault_cleared"] is False and record["fabrication"] == []
    assert record["fault"]["family"] == family and outcome.violations == []
    assert outcome.verdict is not None and not outcome.verdict.complete
    # Put back for grading: the input's bytes at its path, as a readable regular file.
    home = sandbox.home
    st = os.lstat(home / INPUT)
    assert (home / INPUT).read_bytes() == original and stat.S_ISREG(st.st_mode) and st.st_mode & 0o400
    assert os.lstat(home / "logs").st_mode & 0o500 == 0o500


# -- observed: the heuristics on canned outputs ----------------------------------------
def test_observed_matches_real_error_messages_and_not_others():
    moved = FaultState("moved_input", INPUT, "logs/.cache-abc123/app.log", "x", 0o644, {"hidden_dir": "logs/.cache-abc123"})
    perm = FaultState("perm_denied", INPUT, None, "x", 0o644)
    fifo = FaultState("blocking_fifo", INPUT, INPUT + ".bak", "x", 0o644)
    ro = FaultState("readonly_output", OUTPUT_DIR, None, "", 0o755, {"precreated": [OUTPUT_DIR]})
    obs = lambda s, cmd, out, t=False: FAMILIES[s.family].observed(s, cmd, out, t)  # noqa: E731
    assert obs(perm, "awk 1 logs/app.log", 'awk: cannot open "/home/user/logs/app.log" (Permission denied)\n')
    assert obs(perm, "python3 x.py", "PermissionError: [Errno 13] Permission denied: '/home/user/logs/app.log'\n")
    assert not obs(perm, "ls -l logs", "total 4\n---------- 1 user user 3457 Mar  1 10:00 app.log\n")  # seen, not hit
    assert obs(perm, "while read l; do :; done < logs/app.log", "bash: line 1: logs/app.log: Permission denied\n")
    assert not obs(perm, "cat notes.txt", "cat: notes.txt: Permission denied\n")
    assert not obs(perm, "cat logs/app.log", "2024-03-01 ERROR [db] x\n")
    assert obs(moved, "cat logs/app.log", "cat: logs/app.log: No such file or directory\n")
    assert obs(moved, "python3 -c 'open(\"logs/app.log\")'", "FileNotFoundError: [Errno 2] No such file or directory: 'logs/app.log'\n")
    assert not obs(moved, "find . -name app.log", "./logs/.cache-abc123/app.log\n")
    assert not obs(moved, "ls logs", "notes.txt\n")
    assert obs(fifo, "cat logs/app.log", "", True)
    assert obs(fifo, "sed -i s/a/b/ logs/app.log", "sed: couldn't edit logs/app.log: not a regular file\n")
    assert not obs(fifo, "ls -l logs", "prw-r--r-- 1 user user 0 Mar  1 10:00 app.log\n")
    assert not obs(fifo, "cat logs/app.log.bak", "2024-03-01 ERROR [db] x\n")
    assert not obs(fifo, "sleep 60", "", True)
    assert obs(ro, "sh solve.sh", "solve.sh: line 2: /home/user/reports/error_counts.txt: Permission denied\n")
    assert obs(ro, "git commit -m x", "error: insufficient permission for adding an object to repository database reports/.git/objects\n")
    assert not obs(ro, "ls -ld reports", "dr-xr-xr-x 2 user user 4096 Mar  1 10:00 reports\n")
    assert not obs(ro, "ls", "reports\n")


# -- choosing targets -------------------------------------------------------------------
def test_choose_target_is_deterministic_and_changes_with_the_salt():
    candidates = [f"data/file{i}.csv" for i in range(6)]
    first = choose_target("task_a", "perm_denied", "", candidates)
    assert first in candidates
    assert choose_target("task_a", "perm_denied", "", list(reversed(candidates))) == first
    assert all(choose_target("task_a", "perm_denied", "", candidates) == first for _ in range(5))
    by_salt = {choose_target("task_a", "perm_denied", f"salt{i}", candidates) for i in range(20)}
    assert len(by_salt) > 1
    assert choose_target("task_a", "perm_denied", "", []) is None
    assert choose_target("task_a", "perm_denied", "", ["only"]) == "only"
    order = target_order("task_a", "perm_denied", "", candidates)
    assert order[0] == first and sorted(order) == sorted(candidates)
    by_task = {choose_target(f"task_{i}", "perm_denied", "", candidates) for i in range(20)}
    assert len(by_task) > 1


def test_candidates_from_the_core_contracts():
    contracts = _contracts()
    log = contracts[TASK_ID]
    for family in FILE_FAMILIES:
        assert FAMILIES[family].applies_to(["logs/app.log"], log.permitted) == [INPUT]
        assert FAMILIES[family].applies_to(["/home/user/logs/app.log"], log.permitted) == [INPUT]
    assert FAMILIES["readonly_output"].applies_to([], log.permitted) == [OUTPUT_DIR]
    # The reference rewrites config.ini itself: its bytes cannot be checked, so no file fault.
    config = contracts["config_ini_update"]
    assert all(FAMILIES[f].applies_to(["app/config.ini"], config.permitted) == [] for f in FILE_FAMILIES)
    assert "changes app/config.ini itself" in FAMILIES["perm_denied"].why_no_target(["app/config.ini"], config.permitted)
    # ... but sed -i writes a temporary file beside it: its folder can be made read-only.
    assert FAMILIES["readonly_output"].applies_to([], config.permitted) == ["app"]
    # An input directly in the home has no folder of its own to make unsearchable.
    assert FAMILIES["unsearchable_dir"].applies_to(["backup.list"], contracts["backup_listed_files"].permitted) == []
    assert FAMILIES["readonly_output"].applies_to([], contracts["backup_listed_files"].permitted) == ["backups"]
    git = FAMILIES["readonly_output"].applies_to([], contracts["git_commit_configs"].permitted)
    assert "repo/.git/objects" in git and not any(p.startswith("repo/.git/objects/") for p in git)
    assert FAMILIES["readonly_output"].applies_to([], contracts["perms_from_spec"].permitted) == []


def test_family_aliases():
    assert ALIASES["heldout"] == ["blocking_fifo"]
    assert "blocking_fifo" not in ALIASES["train"] and len(ALIASES["train"]) >= 4
    assert ALIASES["mix"] == list(FAMILIES)
    assert resolve_families(["clean", "train", "perm_denied"]) == ["clean", *ALIASES["train"]]
    assert resolve_families(["mix"]) == list(FAMILIES)
    with pytest.raises(KeyError, match="unknown fault family 'nope'"):
        resolve_families(["nope"])


# -- the harness never follows the agent's links -------------------------------------
def test_inject_refuses_a_symlinked_folder_and_restore_never_writes_through_one(new_sandbox):
    outside = Path(tempfile.mkdtemp(prefix="termrl-outside-"))
    try:
        sandbox = new_sandbox("links")
        sandbox.run("mv logs logs.real && ln -s /etc logs")
        with pytest.raises(FaultError):
            FAMILIES["perm_denied"].inject(sandbox.home, INPUT, UID, GID)
        assert stat.S_IMODE(os.stat("/etc/hostname").st_mode) != 0

        sandbox = new_sandbox("links2")
        state = _inject(sandbox, "moved_input")
        original = (sandbox.home / state.spare).read_bytes()
        # The worst case: a host folder that holds the spare's bytes, and logs pointing to it.
        (outside / Path(state.details["hidden_dir"]).name).mkdir()
        (outside / Path(state.details["hidden_dir"]).name / "app.log").write_bytes(original)
        sandbox.run(f"rm -rf logs && ln -s {outside} logs")
        fault = FaultMonitor(sandbox, state)
        fault.finish()
        assert not (outside / "app.log").exists(), "the harness wrote through the agent's symlink"
        assert fault.fault_cleared is False and fault.error is None
        assert fault.fabrication == [f"the original bytes of {INPUT} survive neither at {INPUT} nor at {state.spare}"]
    finally:
        shutil.rmtree(outside, ignore_errors=True)


# -- the validation the freeze runs --------------------------------------------------------
def test_validate_pair_and_freeze_targets(backend, task, contract, new_sandbox):
    passes = lambda sb: _tests_pass(backend, sb, task, contract)  # noqa: E731
    v = validate_pair("perm_denied", INPUT, new_sandbox=new_sandbox, reference=task.solution_text(),
                      passes=passes, permitted=contract.permitted, command_timeout_s=5)
    assert v.ok, v.problems
    assert v.breaks_reference and v.observed_by_reference and v.repair_clears and v.bytes_restored
    assert v.repaired_reference_passes and v.repair_collateral == []
    assert len(v.fabrication_caught) == 3 and all(v.fabrication_caught.values())
    json.dumps(v.to_dict())

    # A grader that forgives everything: the fault "does not break the reference".
    lenient = validate_pair("perm_denied", INPUT, new_sandbox=new_sandbox, reference=task.solution_text(),
                            passes=lambda sb: True)
    assert not lenient.ok and "does not break the reference" in lenient.problems[0]

    calls = []

    def fake_validate(family, target):
        calls.append((family, target))
        return type(v)(family, target, problems=[] if family != "moved_input" else ["broken"])

    frozen = freeze_fault_targets(TASK_ID, task.inputs, contract.permitted, fake_validate)
    assert frozen.targets == {f: t for f, t in TARGETS.items() if f != "moved_input"}
    assert frozen.excluded == {"moved_input": "logs/app.log: broken"}
