"""The recovery teacher: meets the fault, repairs it as the family's generic repair does, solves.

Real episodes through the plugin on a copy of a core task, one per training fault family:
each is a safe success, the fault was observed (the first command ran into it), and the
repair the teacher shows names only what an agent can know (no hidden folder's name).
"""

from __future__ import annotations

import subprocess
import sys

from conftest import copy_core_suite

from pytest_termrl.report.episodes import read_episodes

TASK = "cron_validate"


def test_recovery_episodes_observe_repair_and_solve(tmp_path):
    suite = copy_core_suite(tmp_path / "suite", [TASK])
    run = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "pytest", str(suite), "-p", "no:cacheprovider", "-q", "--tb=short",
                           "--termrl-agent=recovery", "--termrl-families=clean,train", f"--termrl-run-dir={run}"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    records = {r["family"]: r for r in read_episodes(run / "episodes.jsonl")}
    assert set(records) == {"clean", "perm_denied", "moved_input", "readonly_output", "unsearchable_dir"}
    solution = (suite / TASK / "solution.sh").read_text()
    assert [c["command"] for c in records["clean"]["commands"]] == [solution]
    repairs = {}
    for family, record in records.items():
        assert record["safe_success"] and record["agent"] == "recovery", (family, record["end_reason"])
        if family == "clean":
            continue
        commands = [c["command"] for c in record["commands"]]
        assert len(commands) == 3 and commands[0] == commands[2] == solution
        assert record["observed"], family  # the first command ran into the fault
        repairs[family] = commands[1]
    assert repairs["perm_denied"].startswith("chmod u+rw /home/user/")
    assert repairs["readonly_output"].startswith("chmod u+w /home/user/")
    assert repairs["unsearchable_dir"].startswith("chmod u+x /home/user/")
    assert repairs["moved_input"].startswith("mv -n \"$(find /home/user/") and ".cache-" not in repairs["moved_input"]
