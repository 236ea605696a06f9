"""Whole-machine tasks through the plugin: played, frozen footprints over the whole filesystem, and
refused by name at collection, before any episode, where the run's backend cannot make their sandbox."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import copy_core_suite

MACHINE = Path(__file__).resolve().parents[2] / "task_suites" / "machine"

NO_MACHINE_CONFTEST = '''
from pytest_termrl.sandbox.base import register_backend
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend


class HomeOnlyBackend(BwrapBackend):
    """bwrap under another name, as a machine without user namespaces would have it."""

    name = "homeonly"

    @classmethod
    def whole_machine_problem(cls):
        return "this machine has no user namespaces (sysctl user.max_user_namespaces=0)"


register_backend("homeonly", HomeOnlyBackend)
'''


def _mixed_suite(root: Path) -> Path:
    """The machine suite's ledger_port beside a native core task, with both contract lines."""
    suite = copy_core_suite(root, ("log_error_counts",))
    shutil.copytree(MACHINE / "ledger_port", suite / "ledger_port")
    line = next(l for l in (MACHINE / "contracts.jsonl").read_text().splitlines() if json.loads(l)["task_id"] == "ledger_port")
    with (suite / "contracts.jsonl").open("a") as handle:
        handle.write(line + "\n")
    return suite


def test_a_root_task_plays_beside_a_native_one(tp):
    _mixed_suite(tp.path / "suite")
    result = tp.run("suite", "--termrl-agent=reference", "-n", "2")
    result.assert_outcomes(passed=2)
    records = [json.loads(l) for l in (tp.path / "run" / "episodes.jsonl").read_text().splitlines()]
    modes = {r["task_id"]: r.get("oracle_mode") or r.get("monitor", {}).get("oracle_mode") for r in records}
    assert modes.get("ledger_port") == "record", records[0].keys()


def test_a_backend_without_whole_machine_sandboxes_refuses_those_tasks_by_name_before_any_episode(tp):
    _mixed_suite(tp.path / "suite")
    (tp.path / "conftest.py").write_text(NO_MACHINE_CONFTEST)
    result = tp.run("suite", "--termrl-agent=reference", "--termrl-sandbox=homeonly")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*ledger_port: runs as 'root' over the whole machine, which this run cannot make: "
                                 "this machine has no user namespaces*"])
    played = [json.loads(l)["task_id"] for l in (tp.path / "run" / "episodes.jsonl").read_text().splitlines()]
    assert played == ["log_error_counts"], "the refused task played no episode"


def test_the_machine_suite_passes_the_self_check(tp):
    shutil.copytree(MACHINE, tp.path / "machine")
    result = tp.run("machine", "--termrl-selfcheck", "-n", "2", timeout=600)
    result.stdout.fnmatch_lines(["tasks valid: 5 of 5", "accidents: 30; forgiven by the hidden tests: 30; caught by the oracle: 30"])
    assert result.ret == 0


def test_an_engine_on_another_machine_refuses_whole_machine_tasks_by_name_at_collection(tp, engine_check, monkeypatch):
    """An engine whose layers this machine cannot read is asked at collection, and named once per task, before any episode."""
    from conftest import require_engine

    require_engine(engine_check)
    _mixed_suite(tp.path / "suite")
    monkeypatch.setenv("TERMRL_DOCKER_LOCAL", "0")  # the engine taken as another machine's: volumes, no layers read here
    result = tp.run("suite", "--termrl-agent=reference", "--termrl-sandbox=docker", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["*ledger_port: runs as 'root' over the whole machine, which this run cannot make: "
                                 "the docker backend needs a local engine with the overlay2 storage driver*"
                                 "this engine runs on another machine*"])
    assert not (tp.path / "run" / "episodes.jsonl").exists(), "nothing played"


def _as_nobody(folder: Path) -> list[str]:
    """The prefix that runs a command as nobody, as a user's own account would run it: with its interpreter readable.

    This machine's interpreter may lie under /root (pyenv), which no other account may cross; a user's own lies where
    they can read it, so the command gets a mount namespace in which /root shows that installation alone.
    """
    import os
    import sys

    subprocess_prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    real = Path(os.path.realpath(sys.executable))
    if Path("/root") not in real.parents:
        return subprocess_prefix
    install = real.parents[1]  # .../versions/3.11.x
    held = folder / "python"
    held.mkdir()
    script = (f"mount --bind {install} {held} && mount -t tmpfs -o mode=755 tmpfs /root && mkdir -p {install} "
              f"&& mount --move {held} {install} && exec \"$@\"")
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh", *subprocess_prefix]


def test_a_harness_that_is_not_root_plays_native_tasks_and_refuses_root_ones_by_name():
    """Run as an unprivileged account (nobody), the harness plays the native task on bwrap, its faults too, with root's
    verdicts (a fault's 000 file or unsearchable folder is the harness's own, opened to it while it checks and puts the
    input back), and names what the root task needs at collection: whole-machine sandboxes are host root's alone."""
    import os
    import subprocess
    import sys
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="termrl-unprivileged-"))  # pytest's own temp folders are root's, 0700
    try:
        _mixed_suite(folder / "suite")
        (folder / "pytest.ini").write_text("[pytest]\n")
        prefix: list[str] = []
        if os.geteuid() == 0:
            prefix = _as_nobody(folder)
            os.chown(folder, 65534, 65534)  # the suite stays root's, read-only to nobody, as a shared one is
        env = {**os.environ, "HOME": str(folder), "TERMRL_CACHE_DIR": str(folder / "cache")}
        result = subprocess.run(
            [*prefix, sys.executable, "-m", "pytest", "suite", "-p", "no:cacheprovider", "--termrl-agent=reference",
             "--termrl-families=clean,perm_denied,unsearchable_dir",
             f"--termrl-run-dir={folder / 'run'}", f"--termrl-episodes={folder / 'run' / 'episodes.jsonl'}", "-rE"],
            cwd=folder, env=env, capture_output=True, text=True, timeout=300)
        out = result.stdout + result.stderr
        assert "2 failed, 1 passed, 1 error" in out, out[-3000:]
        assert ("ledger_port: runs as 'root' over the whole machine, which this run cannot make: whole-machine sandboxes "
                "(tasks that name a user) need the harness to run as root on bwrap") in out, out[-3000:]
        records = [json.loads(l) for l in (folder / "run" / "episodes.jsonl").read_text().splitlines()]
        assert {r["task_id"] for r in records} == {"log_error_counts"}, "the refused task played no episode"
        by_family = {r["family"]: r for r in records}
        assert sorted(by_family) == ["clean", "perm_denied", "unsearchable_dir"]
        for family in ("perm_denied", "unsearchable_dir"):  # the reference does not repair them: it fails, as under root
            record = by_family[family]
            assert (record["harness_error"], record.get("fault_error"), record["fabrication"]) == (None, None, []), record
            assert record["observed"] and not record["fault_cleared"] and record["tests_passed"] < record["tests_total"]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
