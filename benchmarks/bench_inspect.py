"""Inspect's per-sample sandbox set-up and teardown: the ``termrl`` provider next to Inspect's own ``docker`` provider.

Inspect calls a provider's ``sample_init`` before each sample and its ``sample_cleanup``
after it; this times exactly those two calls, on the same core tasks, for both providers
in one run, and prints the medians and the ratio docker / termrl.

- termrl: the task folder as the config (bwrap whole-machine sandbox; the image's layers
  are built once and cached, the task's files laid in, its decoys planted).
- docker: per task an image built here with ``docker build`` FROM the locally built base
  image (``termrl-base:1``; .ci/docker-setup.sh builds it): the task's environment copied
  into /home/user and its setup.sh run as the agent's user, as a native task is prepared;
  a compose file names that image (``x-local: true``: nothing is pulled), no network, as a
  termrl sandbox has none. Needs a docker engine and compose v2 (.ci/compose-setup.sh).

Each provider's ``task_init`` and one untimed sample per task come first (images built,
caches warm), then ROUNDS samples per task are timed. When docker cannot run here the
termrl figures are printed and the reason the docker side did not run is said.

    python benchmarks/bench_inspect.py
    python benchmarks/bench_inspect.py --rounds 5 --tasks checksum_verify,log_error_counts --json out/bench_inspect.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from pytest_termrl.integrations.inspect import TermrlSandbox
from pytest_termrl.tasks.importers import load_task_dir
from pytest_termrl.tasks.model import Task

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "task_suites" / "core"
TASKS = "checksum_verify,csv_pivot_monthly,dedupe_contacts,json_active_users,log_error_counts"
BASE_IMAGE = os.environ.get("TERMRL_DOCKER_IMAGE", "termrl-base:1")


def engine_version() -> str | None:
    done = subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"], capture_output=True, text=True, timeout=30)
    return done.stdout.strip() or None if done.returncode == 0 else None


def inspect_engine_floor() -> str:
    """The oldest Docker Engine Inspect's docker provider accepts."""
    from inspect_ai.util._sandbox.docker import prereqs  # noqa: PLC0415

    return prereqs.DOCKER_ENGINE_REQUIRED_VERSION


def below(version: str, floor: str) -> bool:
    def parts(v: str) -> tuple[int, ...]:
        return tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in v.split("+")[0].split(".")[:3])
    return parts(version) < parts(floor)


def accept_old_engine() -> None:
    """Let Inspect's docker provider run on an engine older than it asks for: only its engine-version check is
    replaced (compose's is kept); the figures then say so."""
    from inspect_ai.util._sandbox.docker import prereqs  # noqa: PLC0415

    floor = engine_version() or "0"
    original = prereqs.validate_docker_engine

    async def validate_docker_engine(version: str = floor) -> None:
        await original(floor)

    prereqs.validate_docker_engine = validate_docker_engine  # type: ignore[assignment]


def docker_problem() -> str | None:
    """Why Inspect's docker provider cannot run here (None: it can)."""
    if shutil.which("docker") is None:
        return "no docker CLI"
    info = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True, timeout=30)
    if info.returncode != 0 or not info.stdout.strip():
        return "no docker engine answers (run .ci/docker-setup.sh): " + (info.stderr.strip().splitlines() or ["?"])[-1]
    compose = subprocess.run(["docker", "compose", "version", "--short"], capture_output=True, text=True, timeout=30)
    if compose.returncode != 0 or not compose.stdout.strip().lstrip("v").startswith("2"):
        return "no docker compose v2 (run .ci/compose-setup.sh)"
    image = subprocess.run(["docker", "image", "inspect", BASE_IMAGE], capture_output=True, text=True, timeout=30)
    if image.returncode != 0:
        return f"the base image {BASE_IMAGE} is not built (run .ci/docker-setup.sh)"
    version, floor = engine_version() or "?", inspect_engine_floor()
    if version == "?" or below(version, floor):
        return f"Inspect's docker provider requires Docker Engine >= {floor}; this engine is {version}"
    return None


def docker_config(task: Task, work: Path) -> str:
    """A compose file for the task's image, built here FROM the local base image; its path."""
    folder = work / task.id
    (folder / "home").mkdir(parents=True)
    if task.environment_dir is not None and task.environment_dir.is_dir():
        shutil.copytree(task.environment_dir, folder / "home", dirs_exist_ok=True)
    lines = [f"FROM {BASE_IMAGE}", "COPY --chown=1000:1000 home/ /home/user/", "USER user", "WORKDIR /home/user"]
    if task.setup_script is not None and task.setup_script.is_file():
        shutil.copy(task.setup_script, folder / "setup.sh")
        lines[2:2] = ["COPY setup.sh /opt/termrl-setup.sh"]
        lines.append("RUN bash /opt/termrl-setup.sh")
    (folder / "Dockerfile").write_text("\n".join(lines) + "\n")
    tag = image_tag(task)
    built = subprocess.run(["docker", "build", "-q", "-t", tag, str(folder)], capture_output=True, text=True,
                           env={**os.environ, "DOCKER_BUILDKIT": "0"}, timeout=600)
    if built.returncode != 0:
        raise RuntimeError(f"docker build of {task.id} failed: {built.stderr.strip()[-2000:]}")
    compose = folder / "compose.yaml"
    compose.write_text(
        "services:\n  default:\n"
        f"    image: {tag}\n    x-local: true\n    init: true\n    network_mode: none\n"
        "    command: tail -f /dev/null\n    working_dir: /home/user\n    user: user\n")
    return str(compose)


def image_tag(task: Task) -> str:
    return f"termrl-bench-inspect-{task.id.replace('_', '-')}:1"


async def time_provider(provider: Any, configs: dict[str, Any], rounds: int) -> dict[str, list[float]]:
    """Seconds of each timed sample_init and sample_cleanup (the first sample of each task untimed)."""
    setups: list[float] = []
    teardowns: list[float] = []
    for task_id, config in configs.items():
        await provider.task_init(f"bench-{task_id}", config)
    for round_no in range(rounds + 1):
        for task_id, config in configs.items():
            name = f"bench-{task_id}"
            start = time.perf_counter()
            envs = await provider.sample_init(name, config, {"__sample_id__": f"{task_id}-{round_no}"})
            ready = time.perf_counter()
            result = await envs["default"].exec(["true"])
            assert result.success, result.stderr
            between = time.perf_counter()
            await provider.sample_cleanup(name, config, envs, False)
            done = time.perf_counter()
            if round_no > 0:
                setups.append(ready - start)
                teardowns.append(done - between)
    for task_id, config in configs.items():
        await provider.task_cleanup(f"bench-{task_id}", config, True)
    return {"setup_s": setups, "teardown_s": teardowns}


def summary(times: dict[str, list[float]]) -> dict[str, float]:
    setup = statistics.median(times["setup_s"])
    teardown = statistics.median(times["teardown_s"])
    return {"setup_s": setup, "teardown_s": teardown, "per_sample_s": setup + teardown, "samples": len(times["setup_s"])}


async def main_async(args: argparse.Namespace) -> int:
    tasks = [load_task_dir(CORE / name) for name in args.tasks.split(",")]
    figures: dict[str, Any] = {"machine": f"{platform.node()} {os.cpu_count()} cores", "tasks": [t.id for t in tasks],
                               "rounds": args.rounds}
    termrl = await time_provider(TermrlSandbox, {t.id: str(t.root) for t in tasks}, args.rounds)
    figures["termrl"] = summary(termrl)
    problem = docker_problem()
    if problem is not None and args.accept_old_engine and problem.startswith("Inspect's docker provider requires"):
        accept_old_engine()
        figures["docker_caveat"] = problem + " (its engine-version check replaced by --accept-old-engine)"
        problem = None
    if problem is None:
        from inspect_ai.util._sandbox.registry import registry_find_sandboxenv  # noqa: PLC0415

        work = Path(tempfile.mkdtemp(prefix="bench-inspect-"))
        try:
            configs = {t.id: docker_config(t, work) for t in tasks}
            docker = await time_provider(registry_find_sandboxenv("docker"), configs, args.rounds)
            figures["docker"] = summary(docker)
        finally:
            shutil.rmtree(work, ignore_errors=True)
            tags = [image_tag(t) for t in tasks]
            subprocess.run(["docker", "image", "rm", "-f", *tags], capture_output=True, timeout=120)
    else:
        figures["docker"] = None
        figures["docker_not_run"] = problem

    print(f"Inspect per-sample sandbox set-up and teardown, {len(tasks)} core tasks x {args.rounds} rounds "
          f"(medians, seconds; {figures['machine']})")
    print(f"{'provider':<10} {'sample_init':>12} {'sample_cleanup':>15} {'per sample':>11}")
    for name in ("termrl", "docker"):
        row = figures.get(name)
        if row:
            print(f"{name:<10} {row['setup_s']:>12.3f} {row['teardown_s']:>15.3f} {row['per_sample_s']:>11.3f}")
    if figures["docker"]:
        ratio = {k: figures["docker"][k] / figures["termrl"][k] for k in ("setup_s", "teardown_s", "per_sample_s")}
        figures["ratio_docker_over_termrl"] = ratio
        print(f"{'ratio':<10} {ratio['setup_s']:>11.1f}x {ratio['teardown_s']:>14.1f}x {ratio['per_sample_s']:>10.1f}x"
              "   (docker / termrl)")
    else:
        print(f"docker: not run here: {figures['docker_not_run']}")
    if figures.get("docker_caveat"):
        print(f"docker caveat: {figures['docker_caveat']}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed samples per task and provider")
    parser.add_argument("--tasks", default=TASKS, help="core task ids, comma-separated")
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--accept-old-engine", action="store_true",
                        help="run Inspect's docker provider on an engine older than it requires (said in the output)")
    args = parser.parse_args(argv)
    return anyio.run(main_async, args)


if __name__ == "__main__":
    sys.exit(main())
