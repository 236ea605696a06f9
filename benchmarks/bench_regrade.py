"""What regrading recorded runs costs and finds, in one run.

- this project's own runs on a suite (default: the built-in one): a reference run and a noop
  run are played, then each episode log is regraded at ``-n N``; both must agree with their
  own verdicts on every episode. The reference log is regraded once more with the inferred
  policy in place of the frozen contracts (``--policy inferred``): every finding there is a
  false positive of the inferred policy, since the frozen contracts permit the reference's
  footprint;
- a Harbor-shaped job of ``--trials`` short trials of a whole-machine task built from its
  Dockerfile (the greeting job of ``tests/data/regrade`` repeated), regraded at ``-n N``: the
  time per trial, split into building the sandbox, replaying and grading.

    python benchmarks/bench_regrade.py [--suite task_suites/core] [--trials 100] [-n 2]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "regrade"


def play(suite: Path, agent: str, run_dir: Path, workers: int) -> Path:
    """The episode log of one run of ``agent`` on ``suite``."""
    command = [sys.executable, "-m", "pytest", str(suite), "-p", "no:cacheprovider", "-q", "-n", str(workers),
               f"--termrl-agent={agent}", f"--termrl-run-dir={run_dir}"]
    subprocess.run(command, cwd=run_dir.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return run_dir / "episodes.jsonl"


def regrade(paths: list[Path], tasks: Path, out: Path, workers: int, *extra: str) -> tuple[dict, float]:
    started = time.monotonic()
    command = [sys.executable, "-m", "pytest_termrl.regrade", *map(str, paths), "--tasks", str(tasks), "-n", str(workers),
               "--json", str(out), *extra]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())["summary"], time.monotonic() - started


def harbor_job(folder: Path, trials: int) -> Path:
    """``trials`` trial folders, the greeting job's graded trials in turn, each renamed."""
    sources = sorted(p for p in (DATA / "job").iterdir() if p.is_dir() and (p / "verifier" / "reward.txt").exists())
    for number in range(trials):
        source = sources[number % len(sources)]
        name = f"{source.name}-{number:03d}"
        shutil.copytree(source, folder / name)
        result = json.loads((folder / name / "result.json").read_text())
        result["trial_name"] = name
        (folder / name / "result.json").write_text(json.dumps(result))
    return folder


def line(label: str, summary: dict, elapsed: float) -> str:
    split = ", ".join(f"{k} {v:.3f}" for k, v in summary["per_trial_s"].items())
    return (f"{label}: {summary['regraded']}/{summary['trials']} regraded, agreement {summary['agreed']}/{summary['compared']}, "
            f"collateral in {summary['passing_with_collateral']} of {summary['recorded_passing']} passing; "
            f"{elapsed:.1f} s at -n {summary['workers']} ({elapsed / max(1, summary['trials']):.3f} s per trial; per trial {split})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", type=Path, default=ROOT / "task_suites" / "core")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("-n", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-regrade-") as scratch:
        work = Path(scratch)
        reference = play(args.suite.resolve(), "reference", work / "reference", args.n)
        noop = play(args.suite.resolve(), "noop", work / "noop", args.n)
        ref, ref_s = regrade([reference], args.suite, work / "ref.json", args.n)
        print(line("own reference run, frozen contracts", ref, ref_s))
        empty, empty_s = regrade([noop], args.suite, work / "noop.json", args.n)
        print(line("own noop run, frozen contracts", empty, empty_s))
        inferred, inferred_s = regrade([reference], args.suite, work / "inferred.json", args.n, "--policy", "inferred")
        print(line("own reference run, inferred policy", inferred, inferred_s))
        print(f"inferred policy: {inferred['passing_with_collateral']} false positive(s) in {inferred['recorded_passing']} "
              f"passing reference trials ({inferred['passing_with_collateral'] / max(1, inferred['recorded_passing']):.1%}); "
              f"by kind {inferred['collateral_per_kind']}")
        job = harbor_job(work / "job", args.trials)
        harbor, harbor_s = regrade([job], DATA / "tasks", work / "harbor.json", args.n)
        print(line(f"Harbor-shaped job of {args.trials} whole-machine trials", harbor, harbor_s))
        ok = ref["agreed"] == ref["compared"] == ref["trials"] and empty["agreed"] == empty["compared"] == empty["trials"]
        print(f"own runs regrade to their own verdicts: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
