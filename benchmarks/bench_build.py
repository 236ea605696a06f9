"""What building a Dockerfile by running it costs on bwrap, next to the engine's ``docker build`` of the same file, in one run.

- an Endless-Terminals-shaped Dockerfile (ten files written by heredocs, a few mkdir/chmod
  steps): the first build in an empty cache, and a rebuild from the cache;
- the same steps with ``printf`` in place of heredocs (the engine here has the classic
  builder, which reads no heredoc) built by the daemonless builder and by ``docker build``
  from ``termrl-base:1`` (each build from scratch: ``--no-cache``), for the ratio;
- ``--polyglot N``: N Aider-Polyglot-shaped Dockerfiles (``FROM buildpack-deps:jammy``, a
  toolchain installed by each language's usual installer, the exercise copied in) built by
  two worker processes into one cache that starts empty, for the total time.

    python benchmarks/bench_build.py --repeat 5 [--polyglot 123] [--no-engine]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from pytest_termrl.sandbox.base import SandboxSettings
from pytest_termrl.sandbox.build.builder import Builder
from pytest_termrl.sandbox.build.store import LayerStore
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend


def endless_dockerfile(base: str, heredocs: bool) -> str:
    lines = [f"FROM {base}", "RUN mkdir -p /home/user/memstats /home/user/logs && chmod 0777 /home/user"]
    for i in range(10):
        rows = [f"host{i:02d} mem_total={4096 * (i + 1)} mem_used={1000 + 37 * i}", f"host{i:02d} swap=0"]
        target = f"/home/user/memstats/host{i:02d}.txt"
        if heredocs:
            lines += [f"RUN cat <<'EOF' > {target}", *rows, "EOF"]
        else:
            lines.append("RUN printf '%s\\n' " + " ".join(f"'{row}'" for row in rows) + f" > {target}")
    lines += ["RUN chmod 0644 /home/user/memstats/*.txt && chown -R 1000:1000 /home/user/memstats /home/user/logs",
              "WORKDIR /home/user"]
    return "\n".join(lines) + "\n"


POLYGLOT_TOOLCHAINS = {
    "python": ["RUN apt-get update && apt-get install -y software-properties-common && add-apt-repository -y ppa:deadsnakes/ppa "
               "&& apt-get update && apt-get install -y python3.11 python3.11-venv && rm -rf /var/lib/apt/lists/*"],
    "go": ["RUN curl -OL https://go.dev/dl/go1.21.5.linux-amd64.tar.gz && tar -C /usr/local -xzf go1.21.5.linux-amd64.tar.gz "
           "&& rm go1.21.5.linux-amd64.tar.gz", "ENV PATH=$PATH:/usr/local/go/bin"],
    "rust": ["RUN curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y", "ENV PATH=/root/.cargo/bin:$PATH"],
    "cpp": ["RUN apt-get update && apt-get install -y cmake g++ && rm -rf /var/lib/apt/lists/*"],
}
POLYGLOT_CHECK = {"python": "python3.11 --version", "go": "go version", "rust": "cargo --version", "cpp": "g++ --version"}


def polyglot_tasks(folder: Path, count: int) -> list[Path]:
    """``count`` task folders shaped like the Aider-Polyglot adapter's: a toolchain per language, an exercise copied in."""
    made = []
    languages = list(POLYGLOT_TOOLCHAINS)
    for i in range(count):
        language = languages[i % len(languages)]
        task = folder / f"polyglot-{language}-{i:03d}"
        task.mkdir(parents=True)
        (task / "exercise.txt").write_text(f"exercise {i} in {language}\n")
        steps = POLYGLOT_TOOLCHAINS[language]
        (task / "Dockerfile").write_text("\n".join(["FROM buildpack-deps:jammy", *steps, "WORKDIR /app", "COPY exercise.txt /app/",
                                                    f"RUN {POLYGLOT_CHECK[language]} > /app/toolchain.txt"]) + "\n")
        made.append(task)
    return made


def _build_many(store: str, tasks: list[str]) -> tuple[int, list[str]]:
    backend = BwrapBackend(SandboxSettings())
    failures = []
    try:
        builder = Builder(backend.bwrap, backend.workroot, backend.machine_lowers(), LayerStore(Path(store)), backend.settings)
        for task in tasks:
            try:
                builder.build(Path(task) / "Dockerfile")
            except Exception as exc:  # noqa: BLE001 - counted and shown, the run goes on
                failures.append(f"{Path(task).name}: {str(exc).splitlines()[0][:200]}")
    finally:
        backend.close()
    return len(tasks), failures


def seconds(start: float) -> float:
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--polyglot", type=int, default=0, help="also build this many Aider-Polyglot-shaped images at -n 2")
    parser.add_argument("--no-engine", action="store_true", help="skip the engine's docker build")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-build-"))
    figures: dict[str, object] = {}
    backend = BwrapBackend(SandboxSettings())
    try:
        heredoc = scratch / "endless" / "Dockerfile"
        plain = scratch / "plain" / "Dockerfile"
        for path, text in ((heredoc, endless_dockerfile("ubuntu:22.04", True)), (plain, endless_dockerfile("termrl-base:1", False))):
            path.parent.mkdir(parents=True)
            path.write_text(text)
        first, cached, plain_first = [], [], []
        for i in range(args.repeat):
            builder = Builder(backend.bwrap, backend.workroot, backend.machine_lowers(), LayerStore(scratch / f"cache-{i}"), backend.settings)
            start = time.perf_counter()
            image = builder.build(heredoc)
            first.append(seconds(start))
            start = time.perf_counter()
            again = builder.build(heredoc)
            cached.append(seconds(start))
            assert again.layers == image.layers and all(step.cached for step in again.steps)
            start = time.perf_counter()
            builder.build(plain)
            plain_first.append(seconds(start))
            builder.store.release()
        figures["endless_steps"] = len(image.layers)
        figures["endless_first_build_s"] = round(statistics.median(first), 3)
        figures["endless_cached_rebuild_ms"] = round(statistics.median(cached) * 1000, 1)
        figures["plain_first_build_s"] = round(statistics.median(plain_first), 3)
        print(f"Endless-Terminals-shaped Dockerfile ({len(image.layers)} layers), median of {args.repeat}:")
        print(f"  first build, empty cache:    {figures['endless_first_build_s']:.3f} s   (target < 1 s)")
        print(f"  rebuild from the cache:      {figures['endless_cached_rebuild_ms']:.1f} ms  (target < 50 ms)")
        print(f"  same steps without heredocs: {figures['plain_first_build_s']:.3f} s   (daemonless builder)")
        if not args.no_engine:
            engine = []
            for i in range(args.repeat):
                start = time.perf_counter()
                subprocess.run(["docker", "build", "-q", "--no-cache", "-t", f"bench-build:{i}", str(plain.parent)], check=True,
                               capture_output=True, env={**os.environ, "DOCKER_BUILDKIT": "0"})
                engine.append(seconds(start))
                subprocess.run(["docker", "rmi", "-f", f"bench-build:{i}"], capture_output=True)
            figures["engine_build_s"] = round(statistics.median(engine), 3)
            figures["engine_over_builder"] = round(figures["engine_build_s"] / figures["plain_first_build_s"], 1)  # type: ignore[operator]
            print(f"  docker build --no-cache:     {figures['engine_build_s']:.3f} s   "
                  f"(the engine takes {figures['engine_over_builder']}x the daemonless builder's time)")
        if args.polyglot:
            tasks = [str(p) for p in polyglot_tasks(scratch / "polyglot", args.polyglot)]
            store = scratch / "polyglot-cache"
            LayerStore(store).release()
            start = time.perf_counter()
            with ProcessPoolExecutor(max_workers=2) as pool:
                results = list(pool.map(_build_many, [str(store)] * 2, [tasks[0::2], tasks[1::2]]))
            total = seconds(start)
            failures = [line for _, failed in results for line in failed]
            figures.update(polyglot_images=len(tasks), polyglot_total_s=round(total, 1), polyglot_failures=len(failures),
                           polyglot_layers=len(LayerStore(store).listing()))
            print(f"{len(tasks)} Aider-Polyglot-shaped images, two workers, cache empty at the start: {total:.1f} s "
                  f"({total / len(tasks) * 1000:.0f} ms an image), {figures['polyglot_layers']} layers made, {len(failures)} failed")
            for line in failures[:10]:
                print(f"  failed: {line}")
    finally:
        backend.close()
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
