"""Several model servers for one run: episodes spread over them, a killed one taken out of rotation.

Three real loopback chat servers play the core tasks' reference solutions; one is a separate
process, SIGKILLed after its first request, in the middle of an episode. The run goes on on
the other two, the episode it was serving is a server error naming the endpoint, the
summary counts the episodes of each endpoint, and ``--termrl-resume`` plays the lost episode
again.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from chat_server import DEFAULT_MODEL, ChatServer, make_policy  # noqa: E402

from conftest import CORE  # noqa: E402
from pytest_termrl.serving.endpoints import EndpointPool, read_endpoint_list  # noqa: E402
from pytest_termrl.serving.server import free_port  # noqa: E402
from pytest_termrl.report.episodes import read_episodes  # noqa: E402

CHAT_SERVER = Path(__file__).resolve().parents[1].joinpath("chat_server.py")
TASKS = ("config_ini_update", "log_error_counts")


def solutions() -> dict[str, str]:
    return {(CORE / t / "instruction.md").read_text().splitlines()[0]: (CORE / t / "solution.sh").read_text() for t in TASKS}


class DoomedServer:
    """A chat server in its own process, SIGKILLed right after it answers its first request."""

    def __init__(self, script: Path) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, str(CHAT_SERVER), "--port", str(self.port), "--policy", "reference", "--script", str(script)],
            stdout=subprocess.PIPE, text=True,
        )
        assert "serving reference" in self.process.stdout.readline()
        self.killed = threading.Event()
        self.watcher = threading.Thread(target=self._kill_after_first_request, daemon=True)
        self.watcher.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _kill_after_first_request(self) -> None:
        for line in self.process.stdout:
            if "request 0 ->" in line:
                self.process.send_signal(signal.SIGKILL)
                self.killed.set()
                return

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def test_episodes_spread_over_endpoints_and_a_killed_one_leaves_the_rotation(tp):
    tp.suite(TASKS)
    script = tp.path / "reference.json"
    script.write_text(json.dumps({"tasks": solutions()}))
    alive = [ChatServer(make_policy("reference", tasks=solutions())).start() for _ in range(2)]
    doomed = DoomedServer(script)
    endpoints = tp.path / "endpoints.txt"
    endpoints.write_text(f"# the run's servers\n{alive[1].base_url}\n\n{doomed.base_url}  # dies mid-run\n")
    report = tp.path / "summary.json"
    try:
        result = tp.run("suite", "-n", "2", "--termrl-agent=openai", f"--termrl-base-url={alive[0].base_url}",
                        f"--termrl-base-url=@{endpoints}", f"--termrl-model={DEFAULT_MODEL}", "--termrl-attempts=4",
                        f"--termrl-report={report}", timeout=300)
        assert doomed.killed.is_set(), "no episode reached the third endpoint"
        records = read_episodes(tp.episodes)
        assert len(records) == 8  # every collected episode is recorded
        failed = [r for r in records if not r["safe_success"]]
        assert failed and all(r["endpoint"] == doomed.base_url and r["end_reason"] == "server_error" for r in failed)
        assert all("APIConnectionError" in r["harness_error"] for r in failed)
        summary = json.loads(report.read_text())
        assert sum(summary["endpoints"].values()) == 8
        assert summary["endpoints"][alive[0].base_url] >= 1 and summary["endpoints"][alive[1].base_url] >= 1
        assert summary["endpoints"] == {url: sum(r["endpoint"] == url for r in records) for url in summary["endpoints"]}
        out = result.stdout.str()
        assert f"the model endpoint {doomed.base_url} stopped answering" in out and "taken out of rotation, 2 of 3 endpoint(s) left" in out
        result.stdout.fnmatch_lines([f"episodes per model endpoint: *{alive[0].base_url} *"])
        # The lost episodes are played again by a resume, on the servers still up.
        again = tp.run("suite", "-n", "2", "--termrl-agent=openai", f"--termrl-base-url={alive[0].base_url}",
                       f"--termrl-base-url={alive[1].base_url}", f"--termrl-model={DEFAULT_MODEL}", "--termrl-attempts=4",
                       "--termrl-resume", timeout=300)
        again.assert_outcomes(passed=len(failed))
        again.stdout.fnmatch_lines(["openai*p0_default*clean*8*8*100.0%*"])
    finally:
        doomed.stop()
        for server in alive:
            server.stop()


def test_the_pool_spreads_by_worker_offset_and_skips_dead_endpoints():
    pool = EndpointPool(["a", "b", "c"], offset=1)
    assert [pool.pick() for _ in range(4)] == ["b", "c", "a", "b"]
    assert pool.mark_down("c", "refused") and not pool.mark_down("c", "again")
    assert [pool.pick() for _ in range(3)] == ["b", "a", "b"]
    pool.mark_down("a", "refused")
    pool.mark_down("b", "refused")
    assert pool.pick() in {"a", "b", "c"}  # all down: still played (and failed), never dropped
    assert sum(pool.served.values()) == 8


def test_endpoint_lists_are_checked(tmp_path):
    listed = tmp_path / "urls.txt"
    listed.write_text("http://a:1/v1\n# comment\nhttp://b:2/v1 # second\nhttp://a:1/v1\n")
    assert read_endpoint_list(["http://c:3/v1", f"@{listed}"]) == ["http://c:3/v1", "http://a:1/v1", "http://b:2/v1"]
    listed.write_text("http://a:1/v1\nlocalhost:8000\n")
    with pytest.raises(ValueError, match=rf"{listed}:2: expected an http:// or https:// URL .* got 'localhost:8000'"):
        read_endpoint_list([f"@{listed}"])
    with pytest.raises(ValueError, match="cannot read the list of endpoints"):
        read_endpoint_list([f"@{tmp_path / 'missing.txt'}"])
