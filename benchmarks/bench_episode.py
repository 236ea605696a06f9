"""What an episode costs: sandbox start, per-command shell overhead, verifier, whole suite.

Measures, on the real bwrap backend and the real core suite:

- sandbox start to first command: create a sandbox and run ``true`` (median of N);
- per-command overhead of the persistent shell: ``true`` run 200 times in one sandbox;
- verifier time per task: the hidden-test run of every core task after the reference solution;
- whole-suite wall time with the reference agent, pytest subprocesses at -n 1 and -n 2,
  and the speedup between them.

    python benchmarks/bench_episode.py
    python benchmarks/bench_episode.py --starts 50 --commands 500 --suite-repeat 3
    python benchmarks/bench_episode.py --skip-suite        # the in-process figures only
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_termrl.agents.builtin import ReferenceAgent
from pytest_termrl.episode import EpisodeSettings, EpisodeSpec
from pytest_termrl.harness import Harness
from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.bwrap import BwrapBackend
from pytest_termrl.tasks.suite import load_suite

REPO = Path(__file__).resolve().parents[1]
CORE = REPO / "task_suites" / "core"


def ms(seconds: float) -> float:
    return seconds * 1000.0


def quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median": statistics.median(ordered),
        "p10": ordered[int(0.1 * (len(ordered) - 1))],
        "p90": ordered[int(0.9 * (len(ordered) - 1))],
        "min": ordered[0],
        "max": ordered[-1],
        "n": len(ordered),
    }


def bench_start(backend: BwrapBackend, count: int) -> dict:
    times = []
    for index in range(count):
        started = time.perf_counter()
        sandbox = backend.create(f"bench-start-{index}")
        try:
            result = sandbox.run("true")
            times.append(time.perf_counter() - started)
            assert result.exit_code == 0, result
        finally:
            sandbox.close()
    return quantiles(times)


def bench_commands(backend: BwrapBackend, count: int) -> dict:
    sandbox = backend.create("bench-commands")
    times = []
    try:
        sandbox.run("true")  # start the shell outside the measurement
        for _ in range(count):
            started = time.perf_counter()
            result = sandbox.run("true")
            times.append(time.perf_counter() - started)
            assert result.exit_code == 0, result
    finally:
        sandbox.close()
    return quantiles(times)


def bench_verifier(backend: BwrapBackend, suite_dir: Path, limit: int | None = None) -> tuple[dict, dict[str, float]]:
    suite = load_suite(suite_dir / "contracts.jsonl")
    if suite.problems:
        raise SystemExit("the suite does not load cleanly: " + "; ".join(sorted(suite.problems.values()))[:2000])
    harness = Harness(backend, EpisodeSettings())
    per_task: dict[str, float] = {}
    for loaded in sorted(suite.tasks, key=lambda lt: lt.task.id)[:limit]:
        sandbox = harness.new_sandbox(loaded, f"bench-verify-{loaded.task.id}")
        try:
            outcome = harness.play(EpisodeSpec(str(suite_dir), loaded.task.id), loaded, sandbox, ReferenceAgent())
        finally:
            sandbox.close()
        if not outcome.safe_success:
            raise SystemExit(f"oracle failed on {loaded.task.id}:\n{outcome.failure_text()}")
        per_task[loaded.task.id] = outcome.timings["verify_s"]
    return quantiles(list(per_task.values())), per_task


def bench_suite(suite_dir: Path, workers: int, repeat: int) -> dict:
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="termrl-bench-") as run_dir:
            argv = [
                sys.executable, "-m", "pytest", str(suite_dir), "-q", "-p", "no:cacheprovider",
                "--termrl-agent=reference", "-n", str(workers), f"--termrl-run-dir={run_dir}",
            ]
            started = time.perf_counter()
            result = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
            times.append(time.perf_counter() - started)
            if result.returncode != 0:
                raise SystemExit(f"suite run at -n {workers} failed:\n{result.stdout[-3000:]}\n{result.stderr[-2000:]}")
    return quantiles(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starts", type=int, default=20, help="sandboxes started for the start figure (default 20)")
    parser.add_argument("--commands", type=int, default=200, help="'true' commands for the per-command figure (default 200)")
    parser.add_argument("--suite", type=Path, default=CORE, help="suite folder (default task_suites/core)")
    parser.add_argument("--verifier-tasks", type=int, default=None, help="time the verifier on the first N tasks only (default all)")
    parser.add_argument("--suite-repeat", type=int, default=2, help="whole-suite runs per worker count (default 2)")
    parser.add_argument("--skip-suite", action="store_true", help="skip the whole-suite subprocess runs")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here as JSON")
    args = parser.parse_args(argv)

    backend = BwrapBackend(SandboxSettings())
    backend.cleanup_stale()
    figures: dict = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    figures["start"] = bench_start(backend, args.starts)
    figures["command"] = bench_commands(backend, args.commands)
    figures["verifier"], figures["verifier_per_task"] = bench_verifier(backend, args.suite, args.verifier_tasks)
    if not args.skip_suite:
        figures["suite_n1"] = bench_suite(args.suite, 1, args.suite_repeat)
        figures["suite_n2"] = bench_suite(args.suite, 2, args.suite_repeat)

    start, command, verifier = figures["start"], figures["command"], figures["verifier"]
    rows = [
        (f"sandbox start to first command (n={start['n']})", ms(start["median"]), ms(start["p10"]), ms(start["p90"])),
        (f"per-command overhead, 'true' (n={command['n']})", ms(command["median"]), ms(command["p10"]), ms(command["p90"])),
        (f"verifier per task, oracle (n={verifier['n']} tasks)", ms(verifier["median"]), ms(verifier["min"]), ms(verifier["max"])),
    ]
    if not args.skip_suite:
        for key, label in (("suite_n1", "-n 1"), ("suite_n2", "-n 2")):
            q = figures[key]
            rows.append((f"whole suite, oracle, {label} (n={q['n']} runs)", ms(q["median"]), ms(q["min"]), ms(q["max"])))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'median ms':>10}  {'low ms':>9}  {'high ms':>9}")
    print("-" * (width + 34))
    for label, median, low, high in rows:
        print(f"{label:<{width}}  {median:>10.1f}  {low:>9.1f}  {high:>9.1f}")
    print("(low/high: p10/p90 for start and command; min/max for verifier and suite)")
    print()
    print("ratios")
    ratios = {
        "start / per-command": start["median"] / command["median"],
        "verifier / start": verifier["median"] / start["median"],
        "verifier / per-command": verifier["median"] / command["median"],
    }
    if not args.skip_suite:
        ratios["suite speedup -n 1 / -n 2"] = figures["suite_n1"]["median"] / figures["suite_n2"]["median"]
    for label, value in ratios.items():
        print(f"  {label:<28} {value:>7.2f}x")
    figures["ratios"] = ratios
    slowest = sorted(figures["verifier_per_task"].items(), key=lambda kv: -kv[1])[:3]
    print("slowest verifier runs: " + ", ".join(f"{task} {ms(t):.0f} ms" for task, t in slowest))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
