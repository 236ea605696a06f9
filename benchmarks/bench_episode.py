"""What an episode costs: sandbox start, per-command shell overhead, verifier, whole suite.

Measures, on the real bwrap backend and the real core suite:

- sandbox start to first command: create a sandbox and run ``true`` (median of N), back to back;
  the backend hands out the spare it started at the previous create; the baselines in the
  same run: every start cold (no spares), and cold with the work root on disk;
- per-command overhead of the persistent shell: ``true`` run 200 times in one sandbox;
- verifier time per task: the hidden-test run of every core task after the reference solution,
  with the spare verifier, and the same two cold baselines;
- whole-suite wall time with the reference agent, pytest subprocesses at -n 1 and -n 2,
  and the speedup between them.

    python benchmarks/bench_episode.py
    python benchmarks/bench_episode.py --starts 50 --commands 500 --suite-repeat 3
    python benchmarks/bench_episode.py --skip-suite        # the in-process figures only
    python benchmarks/bench_episode.py --stages            # where one episode's time goes, stage by stage
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
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend
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


def cold_backend(workroot: Path) -> BwrapBackend:
    """A backend that starts every agent sandbox and verifier cold: no spares."""
    backend = BwrapBackend(SandboxSettings(), workroot)
    backend.keep_spares = False
    backend.spare_verifier.enabled = False
    return backend


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


def _cpu_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


def bench_suite(suite_dir: Path, workers: int, repeat: int, spares: bool = True) -> dict:
    """Whole-suite wall time at ``-n workers`` (spares on or off), and how busy all CPUs were meanwhile."""
    times, busy = [], []
    env = {**os.environ, "TERMRL_SPARES": "1" if spares else "0"}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="termrl-bench-") as run_dir:
            argv = [
                sys.executable, "-m", "pytest", str(suite_dir), "-q", "-p", "no:cacheprovider",
                "--termrl-agent=reference", "-n", str(workers), f"--termrl-run-dir={run_dir}",
            ]
            started, ticks = time.perf_counter(), _cpu_ticks()
            result = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, env=env)
            times.append(time.perf_counter() - started)
            after = _cpu_ticks()
            busy.append((after[0] - ticks[0]) / max(after[1] - ticks[1], 1))
            if result.returncode != 0:
                raise SystemExit(f"suite run at -n {workers} failed:\n{result.stdout[-3000:]}\n{result.stderr[-2000:]}")
    return {**quantiles(times), "cpu_busy": statistics.median(busy)}


class Stages:
    """Exclusive wall time per stage: a stage inside another (cgroups inside creation) is not counted twice."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self._stack: list[list[float]] = []

    def wrap(self, owner: object, attr: str, label: str) -> None:
        inner = getattr(owner, attr)

        def timed(*args, **kwargs):
            self._stack.append([0.0])
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - started
                children = self._stack.pop()[0]
                self.totals[label] = self.totals.get(label, 0.0) + elapsed - children
                self.counts[label] = self.counts.get(label, 0) + 1
                if self._stack:
                    self._stack[-1][0] += elapsed

        setattr(owner, attr, timed)

    def take(self) -> tuple[dict[str, float], dict[str, int]]:
        out = (self.totals, self.counts)
        self.totals, self.counts = {}, {}
        return out


STAGE_ORDER = [
    "sandbox creation (a spare's, the next one started)", "cgroups (set up)", "shell start (wait for the spare's)",
    "setup script", "decoys", "baseline manifest", "commands (agent's)", "oracle check after each command",
    "final manifest (full)", "fault monitor", "snapshot of the home", "verifier: take the spare, start the next",
    "verifier: snapshot moved in, tests staged", "verifier: tests run + signed result", "verifier (whole)",
    "signature check", "verifier teardown (cgroups)", "teardown (sandbox close)", "other (agent, loop, records)",
]
COLD_ANATOMY = ["verifier sandbox + interpreter start", "pytest import", "pytest collection"]


def _probe(backend: BwrapBackend, loaded, argv: list[str], mounts: list, repeat: int) -> float:
    """Fastest of ``repeat`` runs, in seconds, of a trusted one-shot process in the verifier's sandbox
    (the minimum: on a shared machine the other runs measure the neighbours)."""
    from pytest_termrl.sandbox.base import IsolatedRequest
    from pytest_termrl.sandbox.layout import HOME_INSIDE

    times = []
    with tempfile.TemporaryDirectory(prefix="termrl-probe-") as home:
        os.chmod(home, 0o755)
        for _ in range(repeat):
            started = time.perf_counter()
            request = IsolatedRequest(Path(home), argv, mounts, b"k" * 32, timeout_s=60, settings=backend.settings, cwd=HOME_INSIDE)
            run = backend.run_isolated(request)
            times.append(time.perf_counter() - started)
            if run.returncode != 0:
                raise SystemExit(f"probe {argv} failed ({run.returncode}): {run.log[-1500:]}")
    return min(times)


def bench_stages(backend: BwrapBackend, suite_dir: Path, tasks: int, repeat: int) -> dict:
    """Play reference episodes with every stage timed; the verifier's inside split by probe processes."""
    import pytest_termrl.harness as harness_mod
    from pytest_termrl.oracle.monitor import CollateralMonitor
    from pytest_termrl.sandbox.base import Sandbox
    from pytest_termrl.sandbox.bwrap import spares as bwrap_verifier
    from pytest_termrl.sandbox.bwrap.backend import BwrapSandbox
    from pytest_termrl.sandbox.limits import ResourceLimits
    from pytest_termrl.sandbox.shell import PersistentShell
    from pytest_termrl.verifier import pytest_grader, trusted
    from pytest_termrl.verifier.trusted import runner_mounts

    suite = load_suite(suite_dir / "contracts.jsonl")
    chosen = [lt for lt in sorted(suite.tasks, key=lambda lt: lt.task.id) if lt.task.grader.kind == "pytest"][:tasks]
    stages = Stages()
    stages.wrap(BwrapBackend, "create", "sandbox creation (a spare's, the next one started)")
    stages.wrap(ResourceLimits, "setup", "cgroups (set up)")
    stages.wrap(PersistentShell, "start", "shell start (wait for the spare's)")
    stages.wrap(PersistentShell, "wait_started", "shell start (wait for the spare's)")
    stages.wrap(Sandbox, "run_setup_script", "setup script")
    stages.wrap(harness_mod, "plant_decoys", "decoys")
    if hasattr(CollateralMonitor, "start"):
        stages.wrap(CollateralMonitor, "start", "baseline manifest")
    else:  # a tree from before the live manifest: the harness took the baseline itself
        stages.wrap(harness_mod, "take_manifest", "baseline manifest")
    stages.wrap(BwrapSandbox, "run", "commands (agent's)")
    stages.wrap(CollateralMonitor, "after_command", "oracle check after each command")
    stages.wrap(CollateralMonitor, "finish", "final manifest (full)")
    stages.wrap(harness_mod.FaultMonitor, "finish", "fault monitor")
    stages.wrap(BwrapSandbox, "snapshot", "snapshot of the home")
    stages.wrap(BwrapBackend, "run_isolated", "verifier (one-shot sandbox)")
    stages.wrap(bwrap_verifier.SpareVerifier, "take", "verifier: take the spare, start the next")
    stages.wrap(bwrap_verifier.SpareVerifier, "refill", "verifier: take the spare, start the next")
    stages.wrap(bwrap_verifier, "_move_entries", "verifier: snapshot moved in, tests staged")
    stages.wrap(bwrap_verifier, "copy_tree", "verifier: snapshot moved in, tests staged")
    stages.wrap(bwrap_verifier, "collect", "verifier: tests run + signed result")
    stages.wrap(trusted, "authenticated_body", "signature check")
    stages.wrap(ResourceLimits, "release", "cgroups (release)")
    stages.wrap(BwrapSandbox, "close", "teardown (sandbox close)")
    harness = Harness(backend, EpisodeSettings())
    per_episode: list[dict[str, float]] = []
    commands = 0
    for _ in range(repeat):
        for loaded in chosen:
            started = time.perf_counter()
            sandbox = harness.new_sandbox(loaded, f"bench-stages-{loaded.task.id}")
            try:
                outcome = harness.play(EpisodeSpec(str(suite_dir), loaded.task.id), loaded, sandbox, ReferenceAgent())
            finally:
                sandbox.close()
            wall = time.perf_counter() - started
            if not outcome.safe_success:
                raise SystemExit(f"oracle failed on {loaded.task.id}:\n{outcome.failure_text()}")
            totals, counts = stages.take()
            commands += counts.get("commands (agent's)", 0)
            totals["other (agent, loop, records)"] = wall - sum(totals.values())
            totals["wall"] = wall
            per_episode.append(totals)
    # A cold verifier's one-shot process from the inside: interpreter, pytest import, collection.
    backend.spare_verifier.enabled = False
    backend.spare_verifier.close()
    loaded = chosen[0]
    mounts = [*runner_mounts()]
    test_mounts = [trusted.TrustedMount(loaded.task.tests_dir.resolve(), pytest_grader.TESTS_INSIDE), *mounts]
    env = ["env", "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", sys.executable, "-I"]
    t_start = _probe(backend, loaded, [*env, "-c", "pass"], mounts, 7)
    t_import = _probe(backend, loaded, [*env, "-c", "import pytest"], mounts, 7)
    t_collect = _probe(backend, loaded, [*env, "-m", "pytest", pytest_grader.TESTS_INSIDE, "--collect-only", "-q",
                                         "-p", "no:cacheprovider", "-c", os.devnull, "--rootdir",
                                         pytest_grader.TESTS_INSIDE], test_mounts, 7)
    merged: dict[str, float] = {}
    for key in {k for e in per_episode for k in e}:
        merged[key] = statistics.median(e.get(key, 0.0) for e in per_episode)
    own = merged.pop("verifier (one-shot sandbox)", 0.0)  # exclusive: what its parts above leave
    merged["verifier (whole)"] = own + sum(v for k, v in merged.items() if k.startswith("verifier:"))
    release = merged.pop("cgroups (release)", 0.0)
    merged["verifier teardown (cgroups)"] = release
    cold = {COLD_ANATOMY[0]: t_start, COLD_ANATOMY[1]: max(t_import - t_start, 0.0), COLD_ANATOMY[2]: max(t_collect - t_import, 0.0)}
    return {"stages": merged, "cold_verifier_anatomy": cold, "episodes": len(per_episode), "commands": commands,
            "tasks": [lt.task.id for lt in chosen]}


def print_stages(result: dict) -> None:
    stages = result["stages"]
    wall = stages["wall"]
    print(f"one bwrap episode, stage by stage: median over {result['episodes']} reference episodes "
          f"of {len(result['tasks'])} core tasks ({', '.join(result['tasks'])})")
    width = max(len(label) for label in STAGE_ORDER)
    print(f"{'stage':<{width}}  {'median ms':>9}  {'share':>6}")
    print("-" * (width + 19))
    for label in STAGE_ORDER:
        value = stages.get(label, 0.0)
        if label == "verifier (whole)":
            print(f"{'  = ' + label:<{width}}  {ms(value):>9.2f}  {value / wall:>6.1%}")
            continue
        print(f"{label:<{width}}  {ms(value):>9.2f}  {value / wall:>6.1%}")
    print("-" * (width + 19))
    print(f"{'episode wall time':<{width}}  {ms(wall):>9.2f}  {1:>6.0%}")
    print("(the agent's sandbox and the verifier's come from spares started ahead: their start is\n"
          " counted where it is waited for; cgroups (set up) counts the spares' too; teardown holds\n"
          " the agent's cgroup release)")
    print("what a spare saves the verifier, a cold start's inside (probe processes, fastest of 7 each):")
    for label, value in result["cold_verifier_anatomy"].items():
        print(f"  {label:<{width - 2}}  {ms(value):>9.2f}")
    ranked = sorted(((v, k) for k, v in stages.items() if k not in ("wall", "verifier (whole)")), reverse=True)[:3]
    print("dominant: " + ", ".join(f"{k} {v / wall:.0%}" for v, k in ranked))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starts", type=int, default=20, help="sandboxes started for the start figure (default 20)")
    parser.add_argument("--commands", type=int, default=200, help="'true' commands for the per-command figure (default 200)")
    parser.add_argument("--suite", type=Path, default=CORE, help="suite folder (default task_suites/core)")
    parser.add_argument("--verifier-tasks", type=int, default=None, help="time the verifier on the first N tasks only (default all)")
    parser.add_argument("--suite-repeat", type=int, default=2, help="whole-suite runs per worker count (default 2)")
    parser.add_argument("--skip-suite", action="store_true", help="skip the whole-suite subprocess runs")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here as JSON")
    parser.add_argument("--stages", action="store_true", help="profile one episode stage by stage, and only that")
    parser.add_argument("--stage-tasks", type=int, default=5, help="core tasks played for --stages (default 5)")
    parser.add_argument("--stage-repeat", type=int, default=3, help="episodes per task for --stages (default 3)")
    args = parser.parse_args(argv)

    backend = BwrapBackend(SandboxSettings())
    backend.cleanup_stale()
    if args.stages:
        result = bench_stages(backend, args.suite, args.stage_tasks, args.stage_repeat)
        print_stages(result)
        if args.json:
            args.json.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
        return 0
    figures: dict = {"cpus": os.cpu_count(), "python": sys.version.split()[0], "workroot": str(backend.workroot)}
    # The baselines, measured in the same run: every start cold (no spares), and cold with the
    # work root on the temporary folder's disk, as before the work root moved into memory.
    cold = cold_backend(backend.workroot)
    disk = cold_backend(Path(tempfile.gettempdir()) / f"termrl-bench-disk-{os.geteuid()}")
    figures["start"] = bench_start(backend, args.starts)
    figures["start_cold"] = bench_start(cold, args.starts)
    figures["start_cold_disk"] = bench_start(disk, args.starts)
    figures["command"] = bench_commands(backend, args.commands)
    figures["verifier"], figures["verifier_per_task"] = bench_verifier(backend, args.suite, args.verifier_tasks)
    figures["verifier_cold"], _ = bench_verifier(cold, args.suite, args.verifier_tasks)
    figures["verifier_cold_disk"], _ = bench_verifier(disk, args.suite, args.verifier_tasks)
    for each in (backend, cold, disk):
        each.close()
    if not args.skip_suite:
        figures["suite_n1"] = bench_suite(args.suite, 1, args.suite_repeat)
        figures["suite_n2"] = bench_suite(args.suite, 2, args.suite_repeat)
        figures["suite_n1_cold"] = bench_suite(args.suite, 1, args.suite_repeat, spares=False)
        figures["suite_n2_cold"] = bench_suite(args.suite, 2, args.suite_repeat, spares=False)

    start, command, verifier = figures["start"], figures["command"], figures["verifier"]
    rows = [
        (f"sandbox start to first command (n={start['n']})", ms(start["median"]), ms(start["p10"]), ms(start["p90"])),
        ("  cold: no spare", ms(figures["start_cold"]["median"]), ms(figures["start_cold"]["p10"]), ms(figures["start_cold"]["p90"])),
        ("  cold, work root on disk", ms(figures["start_cold_disk"]["median"]), ms(figures["start_cold_disk"]["p10"]), ms(figures["start_cold_disk"]["p90"])),
        (f"per-command overhead, 'true' (n={command['n']})", ms(command["median"]), ms(command["p10"]), ms(command["p90"])),
        (f"verifier per task, oracle (n={verifier['n']} tasks)", ms(verifier["median"]), ms(verifier["min"]), ms(verifier["max"])),
        ("  cold: no spare", ms(figures["verifier_cold"]["median"]), ms(figures["verifier_cold"]["min"]), ms(figures["verifier_cold"]["max"])),
        ("  cold, work root on disk", ms(figures["verifier_cold_disk"]["median"]), ms(figures["verifier_cold_disk"]["min"]), ms(figures["verifier_cold_disk"]["max"])),
    ]
    if not args.skip_suite:
        for key, label in (("suite_n1", "-n 1"), ("suite_n2", "-n 2"), ("suite_n1_cold", "-n 1, no spares"), ("suite_n2_cold", "-n 2, no spares")):
            q = figures[key]
            rows.append((f"whole suite, oracle, {label} (n={q['n']} runs; CPUs {q['cpu_busy']:.0%} busy)", ms(q["median"]), ms(q["min"]), ms(q["max"])))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'median ms':>10}  {'low ms':>9}  {'high ms':>9}")
    print("-" * (width + 34))
    for label, median, low, high in rows:
        print(f"{label:<{width}}  {median:>10.1f}  {low:>9.1f}  {high:>9.1f}")
    print("(low/high: p10/p90 for start and command; min/max for verifier and suite)")
    print()
    print("ratios")
    ratios = {
        "start cold / with spares": figures["start_cold"]["median"] / start["median"],
        "start cold on disk / with spares": figures["start_cold_disk"]["median"] / start["median"],
        "verifier cold / with spares": figures["verifier_cold"]["median"] / verifier["median"],
        "verifier cold on disk / with spares": figures["verifier_cold_disk"]["median"] / verifier["median"],
        "start / per-command": start["median"] / command["median"],
        "verifier / start": verifier["median"] / start["median"],
        "verifier / per-command": verifier["median"] / command["median"],
    }
    if not args.skip_suite:
        ratios["suite speedup -n 1 / -n 2"] = figures["suite_n1"]["median"] / figures["suite_n2"]["median"]
        ratios["suite speedup -n 1 / -n 2, no spares"] = figures["suite_n1_cold"]["median"] / figures["suite_n2_cold"]["median"]
        ratios["suite -n 1 no spares / -n 1 spares"] = figures["suite_n1_cold"]["median"] / figures["suite_n1"]["median"]
    for label, value in ratios.items():
        print(f"  {label:<36} {value:>7.2f}x")
    figures["ratios"] = ratios
    slowest = sorted(figures["verifier_per_task"].items(), key=lambda kv: -kv[1])[:3]
    print("slowest verifier runs: " + ", ".join(f"{task} {ms(t):.0f} ms" for task, t in slowest))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
