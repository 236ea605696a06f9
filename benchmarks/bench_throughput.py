"""Episodes per minute through the whole plugin, with a scripted chat server instead of a model.

The server (tests/chat_server.py, real HTTP on loopback, in this process) answers each
conversation with the task's reference solution as one tool call, then a final answer,
at once: the harness, not a model, is the bottleneck. Measured, in one run:

- episodes per minute at -n 1 and at -n 2 (whole pytest process, collection included, and
  inside the run: episodes over the summed wall time of the episodes themselves), and the
  -n 2 / -n 1 ratio (the baseline: -n 1);
- the harness's share of an episode's wall time when each model turn takes 1 s (the same
  server, sleeping 1 s before every reply), at -n 1.

    python benchmarks/bench_throughput.py
    python benchmarks/bench_throughput.py --tasks 6 --turn-s 0.5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORE = REPO / "task_suites" / "core"
sys.path.insert(0, str(REPO / "tests"))

from chat_server import DEFAULT_MODEL, ChatServer, Reference  # noqa: E402

# The hand-written core tasks (the demo's), whose first instruction lines are all distinct.
HAND_WRITTEN = [
    "archive_manifest_targz", "backup_listed_files", "batch_rename_photos", "checksum_verify",
    "config_ini_update", "cron_validate", "csv_pivot_monthly", "dedupe_contacts", "git_commit_configs",
    "grades_text_report", "json_active_users", "log_error_counts", "log_latency_stats", "perms_from_spec",
]


class SlowReference(Reference):
    """The reference policy, each reply after ``delay`` seconds: a model that takes its time."""

    def __init__(self, tasks: dict[str, str], delay: float) -> None:
        super().__init__(tasks)
        self.delay = delay

    def respond(self, body, request_no):
        time.sleep(self.delay)
        return super().respond(body, request_no)


def solutions(task_ids: list[str]) -> dict[str, str]:
    routes = {}
    for task_id in task_ids:
        first = (CORE / task_id / "instruction.md").read_text().strip().splitlines()[0]
        if first in routes:
            raise SystemExit(f"two tasks begin with the same instruction line: {first!r}")
        routes[first] = (CORE / task_id / "solution.sh").read_text()
    return routes


def run_suite(server: ChatServer, task_ids: list[str], workers: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="termrl-bench-") as run_dir:
        argv = [sys.executable, "-m", "pytest", str(CORE), "-q", "-p", "no:cacheprovider", "--tb=line",
                "-k", " or ".join(task_ids), "-n", str(workers), "--termrl-agent=openai",
                f"--termrl-base-url={server.base_url}", f"--termrl-model={DEFAULT_MODEL}",
                f"--termrl-run-dir={run_dir}"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        result = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        records = [json.loads(line) for line in (Path(run_dir) / "episodes.jsonl").read_text().splitlines() if line.strip()]
    if result.returncode != 0 or len(records) != len(task_ids):
        raise SystemExit(f"the run at -n {workers} failed ({len(records)} records):\n"
                         f"{result.stdout[-3000:]}\n{result.stderr[-2000:]}")
    unsafe = [r["task_id"] for r in records if not r["safe_success"]]
    if unsafe:
        raise SystemExit(f"reference episodes that failed at -n {workers}: {unsafe}")
    episode_s = [r["timings"]["total_s"] for r in records]
    turns = sum(r["tool_calls"] + 1 for r in records)  # every tool call, and the final answer
    return {"wall_s": wall, "cpu_s": cpu, "episodes": len(records), "episode_s": episode_s, "turns": turns,
            "per_minute": 60 * len(records) / wall, "in_run_per_minute": 60 * len(records) * workers / sum(episode_s)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=len(HAND_WRITTEN), help="hand-written core tasks played (default all 14)")
    parser.add_argument("--slow-tasks", type=int, default=4, help="tasks for the 1-s-per-turn run (default 4)")
    parser.add_argument("--turn-s", type=float, default=1.0, help="model time per turn of the slow run (default 1.0)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here as JSON")
    args = parser.parse_args(argv)

    task_ids = HAND_WRITTEN[: args.tasks]
    figures: dict = {"cpus": os.cpu_count(), "tasks": task_ids}
    with ChatServer(Reference(solutions(task_ids))) as server:
        figures["n1"] = run_suite(server, task_ids, 1)
        figures["n2"] = run_suite(server, task_ids, 2)
    slow_ids = task_ids[: args.slow_tasks]
    with ChatServer(SlowReference(solutions(slow_ids), args.turn_s)) as server:
        slow = run_suite(server, slow_ids, 1)
    model_s = slow["turns"] * args.turn_s
    episodes_s = sum(slow["episode_s"])
    figures["slow"] = slow
    figures["harness_share"] = (episodes_s - model_s) / episodes_s

    n1, n2 = figures["n1"], figures["n2"]
    print(f"{len(task_ids)} reference episodes through the plugin (openai agent, scripted loopback server), "
          f"{os.cpu_count()} cpus")
    print(f"{'measure':<46} {'-n 1':>9} {'-n 2':>9} {'-n 2 / -n 1':>12}")
    print("-" * 79)
    print(f"{'episodes per minute, whole pytest process':<46} {n1['per_minute']:>9.1f} {n2['per_minute']:>9.1f} "
          f"{n2['per_minute'] / n1['per_minute']:>11.2f}x")
    print(f"{'episodes per minute, inside the run':<46} {n1['in_run_per_minute']:>9.1f} {n2['in_run_per_minute']:>9.1f} "
          f"{n2['in_run_per_minute'] / n1['in_run_per_minute']:>11.2f}x")
    print(f"{'median episode wall time, ms':<46} {1000 * statistics.median(n1['episode_s']):>9.0f} "
          f"{1000 * statistics.median(n2['episode_s']):>9.0f}")
    print(f"{'whole run, s':<46} {n1['wall_s']:>9.1f} {n2['wall_s']:>9.1f}")
    print(f"{'cpu of the run and its children, s':<46} {n1['cpu_s']:>9.1f} {n2['cpu_s']:>9.1f}")
    print(f"{'cores busy on average (cpu / wall)':<46} {n1['cpu_s'] / n1['wall_s']:>9.2f} {n2['cpu_s'] / n2['wall_s']:>9.2f}")
    load = os.getloadavg()[0]
    print(f"(load average now {load:.1f} on {os.cpu_count()} cpus: -n 2 can only scale with a core free for each worker)")
    print()
    print(f"with {args.turn_s:g} s per model turn ({len(slow_ids)} episodes, {slow['turns']} turns, -n 1): "
          f"episodes {episodes_s:.1f} s in all, model {model_s:.1f} s, "
          f"harness share {figures['harness_share']:.1%} of an episode's wall time")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
