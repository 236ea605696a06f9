"""The docker backend's costs next to bwrap's, on the real core suite.

For each backend:

- start to first command: ``create()`` a sandbox and run ``true`` in it (median of N);
- per-command overhead of the persistent shell: ``true`` run M times in one sandbox;
- a timed-out command: ``sleep 60`` with a 1 s timeout, i.e. the cost of the kill (median);
- snapshot: copy of the home of a prepared core task (median over the tasks);
- verify: the hidden-test run of each task after its reference solution (fresh sandbox,
  trusted toolchain, signed result), median over the tasks;
- episode: a whole oracle episode of each task (create, setup, solution, oracle, verify).

Three columns: bwrap; docker on a local engine (home bind-mounted); docker in remote mode
(``local=False``: home, commands and outputs in volumes and mirrored through the archive
API, as for an engine at a ``tcp://`` or ``ssh://`` address). The remote column runs on
the engine ``DOCKER_HOST`` names, the local one here too unless ``--remote-only``. Then
the ratios to bwrap. Needs a running engine and the base image (.ci/docker-setup.sh).

    python benchmarks/bench_docker.py
    python benchmarks/bench_docker.py --starts 20 --commands 500 --tasks 6 --json out/bench_docker.json
    DOCKER_HOST=ssh://root@build-box python benchmarks/bench_docker.py --remote-only
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pytest_termrl.agents.builtin import ReferenceAgent
from pytest_termrl.episode import EpisodeSettings, EpisodeSpec
from pytest_termrl.harness import Harness
from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend
from pytest_termrl.sandbox.docker import DockerBackend
from pytest_termrl.tasks.suite import load_suite
from pytest_termrl.verifier.verify import run_hidden_tests

REPO = Path(__file__).resolve().parents[1]
CORE = REPO / "task_suites" / "core"
TASKS = ("checksum_verify", "config_ini_update", "log_error_counts", "git_commit_configs", "csv_pivot_monthly", "archive_manifest_targz")


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 2)


def median_ms(values: list[float]) -> float:
    return ms(statistics.median(values))


def bench_backend(backend, suite, task_ids, starts: int, commands: int) -> dict:
    figures: dict = {}
    # start to first command
    times = []
    for index in range(starts):
        started = time.perf_counter()
        sandbox = backend.create(f"bench-start-{index}")
        try:
            result = sandbox.run("true")
            times.append(time.perf_counter() - started)
            assert result.exit_code == 0, result
        finally:
            sandbox.close()
    figures["start_to_first_command_ms"] = median_ms(times)
    # close
    sandbox = backend.create("bench-close")
    sandbox.run("true")
    started = time.perf_counter()
    sandbox.close()
    figures["close_ms"] = ms(time.perf_counter() - started)
    # per-command overhead, and the cost of a timeout
    sandbox = backend.create("bench-commands")
    try:
        sandbox.run("true")
        times = []
        for _ in range(commands):
            started = time.perf_counter()
            sandbox.run("true")
            times.append(time.perf_counter() - started)
        figures["per_command_ms_median"] = median_ms(times)
        figures["per_command_ms_p95"] = ms(sorted(times)[int(0.95 * len(times)) - 1])
        times = []
        for _ in range(3):
            started = time.perf_counter()
            result = sandbox.run("sleep 60", timeout_s=1)
            times.append(time.perf_counter() - started - 1.0)
            assert result.timed_out, result
        figures["timeout_kill_overhead_ms"] = median_ms(times)
    finally:
        sandbox.close()
    # snapshot, verify and whole episodes on real tasks
    harness = Harness(backend, EpisodeSettings(command_timeout_s=30, test_timeout_s=20))
    snap_times, verify_times, episode_times, passed = [], [], [], 0
    scratch = Path(tempfile.mkdtemp(prefix="bench-docker-"))
    try:
        for task_id in task_ids:
            loaded = suite.by_id(task_id)
            sandbox = harness.new_sandbox(loaded, f"bench-{task_id}")
            try:
                result = sandbox.run(loaded.task.solution_text(), timeout_s=60)
                assert result.exit_code == 0, result.output
                sandbox.stop_processes()
                started = time.perf_counter()
                sandbox.snapshot(scratch / f"snap-{backend.name}-{task_id}")
                snap_times.append(time.perf_counter() - started)
                started = time.perf_counter()
                verdict = run_hidden_tests(backend, sandbox, loaded.task, loaded.contract.tests, 20)
                verify_times.append(time.perf_counter() - started)
                assert verdict.complete, verdict.to_dict()
            finally:
                sandbox.close()
            started = time.perf_counter()
            sandbox = harness.new_sandbox(loaded, f"bench-ep-{task_id}")
            try:
                outcome = harness.play(EpisodeSpec("core", task_id), loaded, sandbox, ReferenceAgent())
            finally:
                sandbox.close()
            episode_times.append(time.perf_counter() - started)
            passed += outcome.safe_success
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    figures["snapshot_ms"] = median_ms(snap_times)
    figures["verify_ms"] = median_ms(verify_times)
    figures["verify_first_ms"] = ms(verify_times[0])  # remote: includes shipping the trusted toolchain
    figures["oracle_episode_ms"] = median_ms(episode_times)
    figures["oracle_episodes_passed"] = f"{passed}/{len(task_ids)}"
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--commands", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=len(TASKS), help=f"how many of {', '.join(TASKS)}")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--remote-only", action="store_true", help="bwrap and the remote mode only (DOCKER_HOST is another machine)")
    args = parser.parse_args(argv)
    suite = load_suite(CORE / "contracts.jsonl")
    task_ids = list(TASKS[: args.tasks])
    settings = SandboxSettings(command_timeout_s=30)
    remote_backend = DockerBackend(settings, local=False)
    backends = {"bwrap": BwrapBackend(settings)}
    if not args.remote_only:
        backends["docker"] = DockerBackend(settings, local=True)
    backends["docker_remote"] = remote_backend
    results = {}
    for name, backend in backends.items():
        print(f"benchmarking {name} ...", file=sys.stderr, flush=True)
        results[name] = bench_backend(backend, suite, task_ids, args.starts, args.commands)
    keys = [k for k, v in results["bwrap"].items() if isinstance(v, (int, float))]
    docker_names = [name for name in results if name != "bwrap"]
    ratios = {
        name: {k: round(results[name][k] / results["bwrap"][k], 2) if results["bwrap"][k] else None for k in keys}
        for name in docker_names
    }
    info = remote_backend.client.info()
    report = {
        "machine": {"cpus": info.get("NCPU"), "kernel": platform.release(), "python": platform.python_version()},
        "engine": {
            "version": info.get("ServerVersion"), "storage_driver": info.get("Driver"), "cgroup": info.get("CgroupVersion"),
            "image": remote_backend.image, "address": remote_backend.api.base_url,
        },
        "tasks": task_ids,
        "starts": args.starts,
        "commands": args.commands,
        **results,
        **{f"{name}_over_bwrap": ratios[name] for name in docker_names},
    }
    width = max(len(k) for k in results["bwrap"])
    header = "".join(f"  {name:>13}" for name in results) + "".join(f"  {'x ' + name:>15}" for name in docker_names)
    print(f"{'':{width}}{header}")
    for key in results["bwrap"]:
        row = "".join(f"  {results[name][key]!s:>13}" for name in results)
        row += "".join(f"  {'' if ratios[name].get(key) is None else f'{ratios[name][key]:.2f}x':>15}" for name in docker_names)
        print(f"{key:{width}}{row}")
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
