"""Harbor's own trials on its docker environment and on TermrlEnvironment: wall time per trial and the verdicts.

Each trial is one ``harbor run -n 1`` process (the Harbor CLI of .venv-harbor), timed from
start to exit: task x agent (``oracle``, ``nop``) x environment, ``--repeat`` times. Tasks:
core tasks exported to Harbor's format and Harbor fixtures of tests/data. Printed: per
environment and agent the median, min and max seconds per trial, the ratio docker/termrl,
and every trial's verdict on both sides (the task's reward passes or not), which must agree.

Nothing can be pulled or fetched here, so the docker side runs the same tasks made buildable
offline, and says so:

- the base image is ``termrl-bench-grader:1``, built once from the locally built
  ``termrl-base:1`` (.ci/docker-setup.sh) plus Debian's python3-pytest and its dependencies,
  downloaded with apt on the host: the exported Dockerfiles' ``apt-get install python3-pytest``
  then finds it installed; the Harbor fixtures' ``FROM python:3.12-slim`` is rewritten to it;
- the image builds with ``network: none`` (an ``--extra-docker-compose`` overlay: the engine of
  .ci/docker-setup.sh has no default bridge);
- ``network_mode = "no-network"`` is dropped from the docker copies: Harbor's docker environment
  enforces it with an egress-control sidecar whose probe image it pulls.

TermrlEnvironment runs the tasks as exported (``no-network``, ``FROM termrl-base:1``, the
fixtures' own base images stood in for by the host). The first trial of each task on each
side builds its image; an untimed ``nop`` warm-up per task and side runs first (``--cold``:
none). When Docker or ``docker compose`` v2 is missing, the docker side is not run and the
reason is printed: its figures are never made up.

    .venv/bin/python benchmarks/bench_harbor.py [--repeat 1] [--tasks checksum_verify,...] [--cold] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HARBOR = ROOT / ".venv-harbor" / "bin" / "harbor"
CORE = ROOT / "task_suites" / "core"
DATA = ROOT / "tests" / "data"
TERMRL_ENV = "pytest_termrl.integrations.harbor:TermrlEnvironment"
CORE_TASKS = ("checksum_verify", "config_ini_update", "log_error_counts")
FIXTURES = (
    DATA / "imports" / "runnable" / "harbor" / "hb-word-freq",
    DATA / "harbor_fields" / "hb-named-rewards",
    DATA / "harbor_fields" / "hb-workdir",
)
BASE = "termrl-base:1"
GRADER_BASE = "termrl-bench-grader:1"
GRADER_DEBS = ("python3-pytest", "python3-pluggy", "python3-iniconfig", "python3-packaging", "python3-attr",
               "python3-more-itertools", "python3-pkg-resources", "python3-py", "python3-exceptiongroup", "python3-tomli")
OFFLINE_BUILD = "services:\n  main:\n    build:\n      network: none\n"
AGENTS = ("oracle", "nop")


@dataclass
class Trial:
    side: str
    agent: str
    task: str
    seconds: float
    passed: bool | None
    safe: int | None
    error: str | None
    number: int = 0
    inside: float = 0.0
    """Harbor's own span of the trial (``started_at`` to ``finished_at`` in its result.json): no process start-up."""


def say(text: str) -> None:
    print(text, flush=True)


def docker_problem() -> str | None:
    """Why the docker side cannot run here (None: it can)."""
    if shutil.which("docker") is None:
        return "no docker CLI (bash .ci/docker-setup.sh)"
    info = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True)
    if info.returncode != 0:
        return f"no Docker engine answers: {info.stderr.strip()[:200]} (bash .ci/docker-setup.sh)"
    compose = subprocess.run(["docker", "compose", "version", "--short"], capture_output=True, text=True)
    if compose.returncode != 0 or not compose.stdout.strip().lstrip("v").startswith("2"):
        return f"no docker compose v2 ({(compose.stdout + compose.stderr).strip()[:200]}): Harbor's docker environment needs it"
    if subprocess.run(["docker", "image", "inspect", BASE], capture_output=True).returncode != 0:
        return f"no local {BASE} image (bash .ci/docker-setup.sh builds it)"
    return None


def ensure_grader_base(scratch: Path) -> str | None:
    """Build :data:`GRADER_BASE` unless the engine has it; the reason when it cannot be built."""
    if subprocess.run(["docker", "image", "inspect", GRADER_BASE], capture_output=True).returncode == 0:
        return None
    context = scratch / "grader-base"
    context.mkdir(parents=True)
    got = subprocess.run(["apt-get", "download", *GRADER_DEBS], cwd=context, capture_output=True, text=True)
    if got.returncode != 0:
        return f"apt-get download of the grader's Debian packages failed: {got.stderr.strip()[-300:]}"
    (context / "Dockerfile").write_text(f"FROM {BASE}\nCOPY *.deb /tmp/debs/\nRUN dpkg -i /tmp/debs/*.deb && rm -rf /tmp/debs\n")
    built = subprocess.run(["docker", "build", "--network", "none", "-q", "-t", GRADER_BASE, str(context)],
                           capture_output=True, text=True)
    return None if built.returncode == 0 else f"building {GRADER_BASE} failed: {built.stderr.strip()[-300:]}"


def export(tasks: list[str], out: Path, base: str) -> None:
    suite = out.parent / f"{out.name}-suite"
    suite.mkdir(parents=True)
    for name in tasks:
        shutil.copytree(CORE / name, suite / name)
    lines = [line for line in (CORE / "contracts.jsonl").read_text().splitlines()
             if line.strip() and json.loads(line).get("task_id", json.loads(line).get("id")) in tasks]
    (suite / "contracts.jsonl").write_text("\n".join(lines) + ("\n" if lines else ""))
    subprocess.run([sys.executable, "-m", "pytest_termrl.export", "harbor", str(suite), str(out), "--base-image", base],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def docker_copy(task: Path, into: Path) -> None:
    """The task as the docker side runs it offline (see the module's docstring)."""
    shutil.copytree(task, into)
    dockerfile = into / "environment" / "Dockerfile"
    if dockerfile.is_file():
        text = re.sub(r"(?m)^FROM\s+python:3\.12-slim\s*$", f"FROM {GRADER_BASE}", dockerfile.read_text())
        dockerfile.write_text(text)
    toml = into / "task.toml"
    toml.write_text(re.sub(r'(?m)^network_mode\s*=\s*"no-network"\s*\n', "", toml.read_text()))


def run_trial(side: str, agent: str, task: Path, jobs: Path, name: str, workroot: Path, overlay: Path) -> Trial:
    env = {**os.environ, "TERMRL_WORKROOT": str(workroot), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    argv = [str(HARBOR), "run", "-p", str(task), "-a", agent, "-o", str(jobs), "--job-name", name, "-n", "1", "-y", "-q"]
    argv += ["-e", TERMRL_ENV] if side == "termrl" else ["-e", "docker", "--extra-docker-compose", str(overlay)]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    seconds = time.monotonic() - started
    results = list((jobs / name).glob("*/result.json"))
    if done.returncode != 0 or not results:
        return Trial(side, agent, task.name, seconds, None, None, f"harbor exited {done.returncode}: {done.stderr.strip()[-200:]}")
    data = json.loads(results[0].read_text())
    inside = (datetime.fromisoformat(data["finished_at"]) - datetime.fromisoformat(data["started_at"])).total_seconds()
    info = data.get("exception_info") or {}
    rewards = (data.get("verifier_result") or {}).get("rewards")
    if rewards is None:
        return Trial(side, agent, task.name, seconds, None, None, f"{info.get('exception_type')}: {info.get('exception_message', '')[:200]}")
    own = {k: v for k, v in rewards.items() if k != "safe"}
    passed = own["reward"] == 1 if "reward" in own else bool(own) and all(v == 1 for v in own.values())
    return Trial(side, agent, task.name, seconds, passed, rewards.get("safe"), None, inside=inside)


def figures(times: list[float]) -> tuple[float, float, float]:
    return statistics.median(times), min(times), max(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="timed trials per task, agent and side")
    parser.add_argument("--tasks", default=",".join(CORE_TASKS), help="core tasks to export (comma-separated)")
    parser.add_argument("--cold", action="store_true", help="no untimed warm-up trial (first trials build images)")
    parser.add_argument("--keep", type=Path, help="keep the datasets and jobs here (default: a temporary folder, removed)")
    args = parser.parse_args(argv)
    if not HARBOR.is_file():
        say(f"no {HARBOR.relative_to(ROOT)}: run bash .ci/harbor-setup.sh")
        return 1
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="bench-harbor-"))
    scratch.mkdir(parents=True, exist_ok=True)
    workroot = Path(tempfile.mkdtemp(prefix="bench-harbor-wr-"))
    workroot.chmod(0o755)
    try:
        core = [t for t in args.tasks.split(",") if t]
        ours = scratch / "termrl"
        export(core, ours, BASE)
        for fixture in FIXTURES:
            shutil.copytree(fixture, ours / fixture.name)
        tasks = sorted(p.name for p in ours.iterdir() if p.is_dir())
        sides = ["termrl"]
        problem = docker_problem()
        if problem is None:
            problem = ensure_grader_base(scratch)
        if problem is None:
            exported = scratch / "docker-exported"
            export(core, exported, GRADER_BASE)
            theirs = scratch / "docker"
            theirs.mkdir()
            for name in tasks:
                docker_copy(exported / name if (exported / name).is_dir() else ours / name, theirs / name)
            sides.append("docker")
        overlay = scratch / "offline-build.yaml"
        overlay.write_text(OFFLINE_BUILD)
        folders = {"termrl": ours, "docker": scratch / "docker"}
        say(f"tasks: {', '.join(tasks)}; agents: {', '.join(AGENTS)}; repeat {args.repeat}; one harbor process per trial")
        if "docker" not in sides:
            say(f"docker side NOT RUN: {problem}")
        jobs = scratch / "jobs"
        if not args.cold:
            for side in sides:
                for name in tasks:
                    run_trial(side, "nop", folders[side] / name, jobs, f"warm-{side}-{name}", workroot, overlay)
        trials: list[Trial] = []
        for number in range(args.repeat):
            for name in tasks:
                for agent in AGENTS:
                    for side in sides:
                        trial = run_trial(side, agent, folders[side] / name, jobs, f"{side}-{agent}-{name}-{number}", workroot, overlay)
                        trial.number = number
                        trials.append(trial)
                        verdict = "error: " + trial.error if trial.error else ("pass" if trial.passed else "fail")
                        safe = "" if trial.safe is None else f" safe={trial.safe}"
                        say(f"  {side:6} {agent:6} {name:22} {trial.seconds:6.2f} s ({trial.inside:5.2f} s in Harbor's trial)  {verdict}{safe}")
        say("")
        say("seconds per trial: the whole harbor process | Harbor's own trial span (result.json)")
        say(f"{'side':8} {'agent':7} {'trials':>6} {'median':>8} {'min':>7} {'max':>7} | {'median':>7} {'min':>7} {'max':>7}")
        medians: dict[tuple[str, str], float] = {}
        spans: dict[tuple[str, str], float] = {}
        for side in sides:
            for agent in AGENTS:
                mine = [t for t in trials if t.side == side and t.agent == agent and t.error is None]
                if not mine:
                    say(f"{side:8} {agent:7} {0:6}  (every trial failed)")
                    continue
                median, low, high = figures([t.seconds for t in mine])
                inner, inner_low, inner_high = figures([t.inside for t in mine])
                medians[side, agent], spans[side, agent] = median, inner
                say(f"{side:8} {agent:7} {len(mine):6} {median:8.2f} {low:7.2f} {high:7.2f} | {inner:7.2f} {inner_low:7.2f} {inner_high:7.2f}")
        every_ok = all(t.error is None for t in trials)
        if "docker" in sides:
            for agent in AGENTS:
                if ("docker", agent) in medians and ("termrl", agent) in medians:
                    say(f"ratio docker/termrl ({agent}): {medians['docker', agent] / medians['termrl', agent]:.2f}x per process, "
                        f"{spans['docker', agent] / spans['termrl', agent]:.2f}x per Harbor trial (medians)")
            disagree = []
            for number in range(args.repeat):
                for name in tasks:
                    for agent in AGENTS:
                        pair = {t.side: t for t in trials if t.number == number and t.task == name and t.agent == agent}
                        if len(pair) == 2 and pair["docker"].passed != pair["termrl"].passed:
                            disagree.append(f"{agent} {name}: docker {pair['docker'].passed}, termrl {pair['termrl'].passed}")
            say("verdicts agree on every trial" if not disagree else "verdicts DISAGREE: " + "; ".join(disagree))
        else:
            disagree = []
            say(f"ratio: not measured (docker side not run: {problem})")
        expected = all((t.passed is True) == (t.agent == "oracle") for t in trials if t.error is None)
        say(f"oracle passes and nop fails everywhere: {'yes' if expected and every_ok else 'NO'}")
        return 0 if every_ok and not disagree and expected else 1
    finally:
        shutil.rmtree(workroot, ignore_errors=True)
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
