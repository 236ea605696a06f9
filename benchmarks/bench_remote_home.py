"""What a remote docker engine's per-command cost does as the home grows.

In remote mode (``local=False``, or a ``DOCKER_HOST`` on another machine) the whole home
comes back after every command and replaces the mirror, so the collateral oracle then
re-hashes every file (new inodes). For homes of growing size, prints the median of
``run("true")`` and of the oracle's incremental manifest after it.

    python benchmarks/bench_remote_home.py
    DOCKER_HOST=ssh://root@build-box python benchmarks/bench_remote_home.py --runs 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from pytest_termrl.oracle.manifest import take_manifest
from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.docker import DockerBackend

HOMES = {
    "empty": "true",
    "1,000 files of 1 KB": "mkdir d; for i in $(seq 1000); do head -c 1024 /dev/urandom > d/f$i; done",
    "one 50 MB file": "head -c 50000000 /dev/urandom > big",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here as JSON (per home, in ms)")
    args = parser.parse_args(argv)
    homes: dict[str, dict] = {}
    backend = DockerBackend(SandboxSettings(command_timeout_s=120), local=False)
    print(f"{'home':24}  {'per command ms':>15}  {'oracle manifest ms':>19}")
    try:
        for label, setup in HOMES.items():
            sandbox = backend.create("bench-home")
            try:
                assert sandbox.run(setup).exit_code == 0
                manifest = take_manifest(sandbox.home, full=True)
                commands, manifests = [], []
                for _ in range(args.runs):
                    started = time.perf_counter()
                    sandbox.run("true")
                    commands.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    manifest = take_manifest(sandbox.home, manifest)
                    manifests.append(time.perf_counter() - started)
            finally:
                sandbox.close()
            print(f"{label:24}  {statistics.median(commands) * 1000:15.0f}  {statistics.median(manifests) * 1000:19.0f}")
            homes[label] = {"command_ms": statistics.median(commands) * 1000, "manifest_ms": statistics.median(manifests) * 1000}
    finally:
        backend.close()
    if args.json:
        figures = {"runs": args.runs, "address": backend.api.base_url, "homes": homes}
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
