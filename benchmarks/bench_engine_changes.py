"""The engine's changes API against the change record read from the container's upper layer, measured in one run.

A whole-machine docker sandbox checks the filesystem after every command by reading its
container's overlay2 upper layer from this machine (:mod:`pytest_termrl.oracle.record`). An
engine on another machine offers only its API: ``GET /containers/{id}/changes`` (``docker
diff``) lists changed paths, with no owner, mode or content, which would still have to be
fetched path by path. This measures, on one container of the base image after a command
changed 10 and then 1,000 files:

- one ``container.diff()`` call (median of N);
- one read of the change record of the same upper layer (median of N), each a full read
  (no stat key kept from a previous read: the cost of a first look).

Then the ratio. Needs a local engine with the base image (.ci/docker-setup.sh), as root.

    python benchmarks/bench_engine_changes.py --repeat 10
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from pytest_termrl.oracle.record import ChangeRecord, Slot
from pytest_termrl.sandbox.docker.machine_support import MachineSupport

SIZES = (10, 1000)


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--image", default="termrl-base:1")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    import docker

    client = docker.from_env()
    support = MachineSupport.of(client.info(), True)
    container = client.containers.run(args.image, ["sleep", "600"], detach=True, network_mode="none",
                                      labels={"termrl.bench": "engine-changes"})
    figures: dict[str, float] = {}
    try:
        container.reload()
        layers = container.attrs["GraphDriver"]["Data"]
        record = ChangeRecord((Slot("/", Path(layers["UpperDir"]), tuple(Path(p) for p in layers["LowerDir"].split(":"))),),
                              support.id_base, marks=support.marks)
        made = 0
        for size in SIZES:
            container.exec_run(["sh", "-c", f"mkdir -p /srv/bench && for i in $(seq {made + 1} {size}); do echo $i > /srv/bench/f$i; done"])
            made = size
            listed = len(container.diff())
            read = len(record.read().entries)
            diffs, reads = [], []
            for _ in range(args.repeat):
                start = time.perf_counter()
                container.diff()
                diffs.append(ms(start))
                start = time.perf_counter()
                record.read()
                reads.append(ms(start))
            figures[f"diff_ms_{size}"] = statistics.median(diffs)
            figures[f"record_ms_{size}"] = statistics.median(reads)
            print(f"{size:>5} changed files: the engine's changes API {figures[f'diff_ms_{size}']:8.1f} ms ({listed} paths, "
                  f"no owner, mode or bytes) | the change record {figures[f'record_ms_{size}']:7.2f} ms ({read} objects, "
                  f"described) | {figures[f'diff_ms_{size}'] / figures[f'record_ms_{size}']:6.1f}x")
    finally:
        container.remove(force=True)
    print(f"engine {client.version().get('Version')}, driver {support.driver} on {support.backing_fs}, median of {args.repeat}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
