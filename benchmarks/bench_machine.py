"""What a whole-machine sandbox costs on bwrap, next to the native one, measured in one run.

- start to first command: a native task's sandbox (the spare started ahead) and a root
  task's whole-machine sandbox, cold (its layer is written before its shell starts) and
  for the task's next episode (the spare made and prepared ahead for that task);
- the verifier's snapshot of a machine whose lowers are the host's system folders (GBs)
  after a command changed 10 files: a copy of the upper layer alone;
- one verifier run on that snapshot (a cold start: the grader's own upper, as root);
- a native home's snapshot of the same 10 files, for the ratio.

    python benchmarks/bench_machine.py --repeat 15
"""

from __future__ import annotations

import argparse
import json
import secrets
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from pytest_termrl.sandbox.base import IsolatedRequest
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend
from pytest_termrl.settings import SandboxSettings
from pytest_termrl.tasks.model import Task

CHANGE_TEN = "for i in $(seq 10); do echo changed-$i > /etc/bench-$i.conf; done; echo x >> /etc/hostname"


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def lowers_size(backend: BwrapBackend) -> str:
    folders = [str(lowers[-1]) for lowers in backend.machine_lowers().slots.values()]
    out = subprocess.run(["du", "-sc", "--apparent-size", "-B1M", *folders], capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1].split()[0] + " MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    backend = BwrapBackend(SandboxSettings())
    scratch = Path(backend.workroot) / f"bench-{secrets.token_hex(4)}"
    scratch.mkdir()
    tmp = Path("/tmp")
    native_task = Task(id="bench", title="b", instruction="-", root=tmp)
    cold_a, cold_b, again = (Task(id=name, title="b", instruction="-", root=tmp, user="root", workdir="/root")
                             for name in ("bench-a", "bench-b", "bench-again"))
    figures: dict[str, list[float]] = {k: [] for k in ("native_start", "machine_start", "machine_spare_start", "machine_snapshot", "native_snapshot", "machine_verifier_run", "lowers_build")}
    try:
        started = time.perf_counter()
        backend.machine_lowers()
        figures["lowers_build"].append(ms(started))
        for index in range(args.repeat):
            started = time.perf_counter()
            sandbox = backend.create("native", native_task)
            sandbox.prepare(native_task)
            sandbox.run("true")
            figures["native_start"].append(ms(started))
            sandbox.run("for i in $(seq 10); do echo changed-$i > ~/bench-$i.txt; done")
            started = time.perf_counter()
            sandbox.snapshot(scratch / f"native-{index}")
            figures["native_snapshot"].append(ms(started))
            sandbox.close()
            time.sleep(0.05)  # the next spare's shell starts meanwhile, as between episodes

            # Cold: two tasks taken in turn (never the same twice in a row, so no spare; their decoys' templates made once).
            task = (cold_a, cold_b)[index % 2]
            time.sleep(0.15)  # the starter thread idle, as after an episode of seconds
            started = time.perf_counter()
            machine = backend.create("machine", task)
            machine.prepare(task)
            machine.run("true")
            figures["machine_start"].append(ms(started))
            machine.close()
        for index in range(args.repeat + 2):  # a task played again and again: from its third sandbox, the spare made ahead
            time.sleep(0.15)  # the spare for its next episode is made meanwhile, as while an episode plays
            started = time.perf_counter()
            machine = backend.create("machine", again)
            machine.prepare(again)
            machine.run("true")
            if index >= 2:
                figures["machine_spare_start"].append(ms(started))
            time.sleep(0.15)  # the next spare is made while the episode plays
            machine.run(CHANGE_TEN)
            snap = scratch / f"machine-{index}"
            started = time.perf_counter()
            machine.snapshot(snap)
            figures["machine_snapshot"].append(ms(started))
            root = machine.layered_root(snap, None)
            request = IsolatedRequest(snap, ["true"], [], b"k", 30.0, machine.settings, "/root", None, root)
            started = time.perf_counter()
            run = backend.run_isolated(request)
            figures["machine_verifier_run"].append(ms(started))
            if run.returncode != 0:
                print(f"verifier run failed: {run.log}", file=sys.stderr)
                return 1
            machine.close()
        size = lowers_size(backend)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        backend.close()
    median = {k: statistics.median(v) for k, v in figures.items()}
    print(f"python {sys.version.split()[0]}; bwrap as root; median of {args.repeat} (the lowers once); the machine's lowers: host system folders, {size}")
    print(f"{'what':<44}{'ms':>10}")
    rows = [
        ("native task: start to first command (spare)", "native_start"),
        ("root task: start to first command (cold)", "machine_start"),
        ("root task: start to first command (spare)", "machine_spare_start"),
        ("lowers made (once per process)", "lowers_build"),
        ("native snapshot, 10 files changed", "native_snapshot"),
        ("machine snapshot, 10 files changed", "machine_snapshot"),
        ("verifier run on the machine snapshot (cold)", "machine_verifier_run"),
    ]
    for label, key in rows:
        print(f"{label:<44}{median[key]:>10.2f}")
    print(f"root task start / native start: cold {median['machine_start'] / median['native_start']:.1f}x, "
          f"spare {median['machine_spare_start'] / median['native_start']:.1f}x; "
          f"machine snapshot / native snapshot: {median['machine_snapshot'] / median['native_snapshot']:.2f}x")
    if args.json:
        args.json.write_text(json.dumps({"median_ms": median, "lowers": size, "repeat": args.repeat}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
