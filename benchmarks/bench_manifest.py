"""How the safety oracle's per-command cost grows with the size of the home.

For homes of N small files in nested folders it times: the full manifest (the
baseline), the incremental manifest after a command changed one file, the diff against
the baseline, the whole per-command check by walking (incremental manifest + tracker
check, which diffs again: the baseline of the ratio), and the same check by the live
manifest (inotify events, then only the paths they name; the agent's processes stood in
for by this one, whose /proc maps are read every time). Targets of the live check: <= 2 ms
at 1,000 files, <= 50 ms at 100,000.

    python benchmarks/bench_manifest.py                 # 100 .. 100,000 files
    python benchmarks/bench_manifest.py --sizes 1000 --repeat 20
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pytest_termrl.oracle import manifest as manifest_mod
from pytest_termrl.oracle.diff import diff_manifests
from pytest_termrl.oracle.live import LiveManifest
from pytest_termrl.oracle.manifest import take_manifest
from pytest_termrl.oracle.policy import CollateralTracker, Permission, Policy


def build_home(root: Path, files: int, per_dir: int) -> Path:
    """``files`` small files, ``per_dir`` to a folder, 20 folders to a parent folder."""
    home = root / f"home-{files}"
    for i in range(files):
        d, f = divmod(i, per_dir)
        folder = home / f"p{d // 20:03d}" / f"d{d:05d}"
        if f == 0:
            folder.mkdir(parents=True)
        (folder / f"f{f:03d}.txt").write_bytes(b"line %d of a small file\n" % i * 4)
    return home


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def measure(home: Path, repeat: int) -> dict[str, float]:
    full_times = []
    for _ in range(max(1, repeat // 2)):
        t = time.perf_counter()
        baseline = take_manifest(home, full=True)
        full_times.append(ms(t))
    # Let the files age past the racy window, as a real home has between setup and commands.
    time.sleep(manifest_mod.RACY_NS / 1e9 + 0.1)
    previous = take_manifest(home, baseline)
    tracker = CollateralTracker(baseline, Policy([Permission("p000", frozenset({"content_changed"}), prefix=True)]))
    target = home / "p000" / "d00000" / "f000.txt"
    incr, diff, check = [], [], []
    for i in range(repeat):
        with open(target, "ab") as f:  # "the command": one file changed
            f.write(b"x")
        t = time.perf_counter()
        current = take_manifest(home, previous)
        t_incr = ms(t)
        t = time.perf_counter()
        changes = diff_manifests(baseline, current)
        t_diff = ms(t)
        t = time.perf_counter()
        tracker.check(current, i, "echo x >> f000.txt")
        t_check = ms(t)
        assert [c.path for c in changes] == ["p000/d00000/f000.txt"], changes
        incr.append(t_incr)
        diff.append(t_diff)
        check.append(t_incr + t_check)
        previous = current
    live = LiveManifest(home, lambda: [os.getpid()])
    t = time.perf_counter()
    live_baseline = live.start()
    t_live_start = ms(t)
    live_tracker = CollateralTracker(live_baseline, tracker.policy)
    fast = []
    try:
        for i in range(repeat * 3):
            with open(target, "ab") as f:
                f.write(b"y")
            t = time.perf_counter()
            changed = live.refresh()
            live_tracker.check_paths(live.entries, changed, i, "echo y >> f000.txt")
            fast.append(ms(t))
            assert changed == {"p000/d00000/f000.txt"}, changed
        assert live.fast and live.walks == 1, (live.fast, live.walks)
    finally:
        live.close()
    t = time.perf_counter()
    text = previous.to_json()
    t_json = ms(t)
    return {
        "full": statistics.median(full_times),
        "incremental": statistics.median(incr),
        "diff": statistics.median(diff),
        "check": statistics.median(check),
        "live": statistics.median(fast),
        "live_start": t_live_start,
        "json": t_json,
        "json_kb": len(text) / 1024,
        "entries": len(previous),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000, 100_000])
    parser.add_argument("--per-dir", type=int, default=50, help="files per folder (default 50)")
    parser.add_argument("--repeat", type=int, default=10, help="per-command repetitions (median shown)")
    parser.add_argument("--workdir", type=Path, default=None, help="where to build the homes (default: a temp dir)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here as JSON (per size, in ms)")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="termrl-bench-", dir=args.workdir))
    rows = []
    try:
        for n in args.sizes:
            home = build_home(workdir, n, args.per_dir)
            rows.append((n, measure(home, args.repeat if n < 100_000 else max(3, args.repeat // 3))))
            shutil.rmtree(home)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus; median of repeats; "
          "check = incremental manifest + tracker check (diff included); "
          "live = inotify refresh + tracker check of the named paths; walk/live = check / live; "
          "start = the live baseline (full manifest + watches + indexes)")
    header = (f"{'files':>8} {'entries':>8} {'full ms':>9} {'x':>6} {'incr ms':>9} {'x':>6} "
              f"{'diff ms':>8} {'x':>6} {'check ms':>9} {'x':>6} {'live ms':>8} {'x':>6} {'walk/live':>9} {'start ms':>9} "
              f"{'json ms':>8} {'json KB':>8}")
    print(header)
    print("-" * len(header))
    prev: dict[str, float] | None = None
    for n, r in rows:
        def grow(key: str, r: dict[str, float] = r, prev: dict[str, float] | None = prev) -> str:
            return f"{r[key] / prev[key]:6.1f}" if prev and prev[key] > 0 else f"{'':>6}"

        print(f"{n:>8,} {r['entries']:>8,.0f} {r['full']:>9.2f} {grow('full')} {r['incremental']:>9.2f} "
              f"{grow('incremental')} {r['diff']:>8.2f} {grow('diff')} {r['check']:>9.2f} {grow('check')} "
              f"{r['live']:>8.2f} {grow('live')} {r['check'] / r['live']:>8.0f}x {r['live_start']:>9.1f} "
              f"{r['json']:>8.1f} {r['json_kb']:>8.0f}")
        prev = r
    if args.json:
        figures = {"cpus": os.cpu_count(), "python": sys.version.split()[0], "per_dir": args.per_dir,
                   "sizes": {str(n): r for n, r in rows}}
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
