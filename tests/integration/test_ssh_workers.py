"""Episodes on other machines through pytest-xdist's own ssh workers, with a loopback sshd standing in.

Two ``--tx ssh=`` workers and one local ``--tx popen`` worker play the episodes; each creates its
sandboxes on its own machine (here the same one, reached over ssh), and only the controller
writes the episode log and the summary.
"""

from __future__ import annotations

import json
import re
import sys

import pytest

from conftest import SMALL_TASKS, require_service
from sshd import loopback_sshd, missing_tools


@pytest.fixture
def sshd(tmp_path):
    missing = missing_tools()
    require_service(f"{', '.join(missing)} missing (openssh-server; .ci/docker-setup.sh installs it)" if missing else None, "an sshd")
    with loopback_sshd(tmp_path / "sshd") as (port, home):
        yield port, home / ".ssh" / "config"


def test_episodes_play_on_ssh_workers_and_the_controller_alone_records_them(tp, sshd, tmp_path_factory):
    tp.suite(SMALL_TASKS)
    port, ssh_config = sshd
    far = tmp_path_factory.mktemp("far_machine")  # the ssh workers' own copy of the rootdir lands here
    remote = f"ssh=-p {port} root@127.0.0.1//ssh_config={ssh_config}//python={sys.executable}//chdir={far}"
    report = tp.path / "summary.json"
    # Local and remote workers mix through --tx (-n N stands for --tx N*popen and replaces every
    # --tx); --rsyncdir sends the rootdir (the suite and the ini) to each ssh worker's machine.
    args = ["-v", "--tx", "popen", "--tx", f"2*{remote}", "--dist", "load", f"--rsyncdir={tp.path}",
            f"--rsyncignore={tp.path / 'run'}", "--termrl-attempts=2", f"--termrl-report={report}"]
    result = tp.run(str(tp.path / "suite"), *args, timeout=600)
    out = result.stdout.str()
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 6 and not outcomes.get("errors") and not outcomes.get("failed"), out[-8000:]
    workers = set(re.findall(r"\[(gw\d)\] \[ *\d+%\] PASSED", out))
    assert {"gw1", "gw2"} & workers, out[-3000:]  # the ssh workers (gw0 is the local one) played episodes
    result.stdout.fnmatch_lines(["*3 workers*"])
    assert (far / tp.path.name / "suite" / "contracts.jsonl").is_file()  # they played from their own copy
    records = [json.loads(line) for line in tp.episodes.read_text().splitlines()]
    assert len(records) == 6 and all(r["safe_success"] for r in records)
    assert {r["suite"] for r in records} == {str(tp.path / "suite")}  # one key per episode, wherever it ran
    assert json.loads(report.read_text())["episodes"] == 6
    assert not list(far.rglob("episodes.jsonl"))  # only the controller writes the log
    # A resume on the same mix of machines plays nothing again: every episode is known by its node id.
    again = tp.run(str(tp.path / "suite"), *args, "--termrl-resume", timeout=600)
    again.stdout.fnmatch_lines(["*3 workers [[]0 items[]]*"])  # each worker deselected all six
    assert len(tp.episodes.read_text().splitlines()) == 6
