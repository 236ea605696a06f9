"""Evaluation arms: the same rows through the pytest plugin for the base model and each adapter.

    python -m pytest_termrl.training arms --base-model Qwen/Qwen2.5-7B-Instruct \
        --sft out/sft --grpo out/grpo --suite task_suites/core --split test --out out/arms

Every arm is one pytest run of the plugin with the same suite, split, families, prompts,
attempts and sampling options, and the *same* vLLM server command line: the base model
with ``--enable-lora`` and every adapter in ``--lora-modules``. Only ``--termrl-model``
differs (the base model's name, or the adapter's), so the arms differ by the weights and
nothing else. Each run writes ``OUT/<arm>.json`` (summary) and ``OUT/<arm>/episodes.jsonl``;
the comparison table reads them back: safe-success rate with its task-cluster bootstrap
95% CI per arm, and the difference to the base arm with a paired task-cluster bootstrap
CI when the episode logs are there. No torch here.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..faults import CLEAN
from ..report.episodes import read_episodes
from ..report.summary import BOOTSTRAP_SAMPLES, cluster_bootstrap_ci

BASE = "base"
OK_EXIT_CODES = (0, 1)
"""pytest's 'all passed' and 'some episodes failed': both are a completed evaluation."""


@dataclass(frozen=True)
class Arm:
    name: str
    model: str
    """The name sent as --termrl-model: the base model, or the adapter's LoRA module name."""
    adapter: Path | None = None


@dataclass
class ArmsPlan:
    base_model: str
    arms: list[Arm]
    suite: str
    out: Path
    split: str | None = "test"
    families: list[str] = field(default_factory=lambda: [CLEAN])
    prompts: list[str] = field(default_factory=lambda: ["p0_default"])
    attempts: int = 1
    workers: int = 1
    temperature: float | None = None
    seed: int | None = None
    max_lora_rank: int | None = None
    server_args: list[str] = field(default_factory=list)
    pytest_args: list[str] = field(default_factory=list)
    python: str = sys.executable

    def adapters(self) -> list[tuple[Arm, Path]]:
        """The arms that load an adapter, each with the adapter's folder."""
        return [(arm, arm.adapter) for arm in self.arms if arm.adapter is not None]

    def vllm_args(self) -> list[str]:
        """The server arguments every arm shares: LoRA on, every adapter registered once."""
        adapters = self.adapters()
        args: list[str] = []
        if adapters:
            args += ["--enable-lora", "--lora-modules", *[f"{arm.model}={Path(folder).resolve()}" for arm, folder in adapters]]
            rank = self.max_lora_rank or _max_rank([folder for _, folder in adapters])
            if rank:
                args.append(f"--max-lora-rank={rank}")
        return args + list(self.server_args)

    def command(self, arm: Arm) -> list[str]:
        """The pytest command line of one arm."""
        run_dir = self.out / arm.name
        cmd = [self.python, "-m", "pytest", self.suite, "-p", "no:cacheprovider", "-q", "--tb=no"]
        if self.workers > 1:
            cmd += ["-n", str(self.workers)]
        cmd += [
            "--termrl-agent=openai",
            "--termrl-server=vllm",
            f"--termrl-server-model={self.base_model}",
        ]
        cmd += [f"--termrl-server-arg={arg}" for arg in self.vllm_args()]
        cmd.append(f"--termrl-model={arm.model}")
        if self.split:
            cmd.append(f"--termrl-split={self.split}")
        cmd.append(f"--termrl-families={','.join(self.families)}")
        cmd += [f"--termrl-prompt={p}" for p in self.prompts]
        cmd.append(f"--termrl-attempts={self.attempts}")
        if self.temperature is not None:
            cmd.append(f"--termrl-temperature={self.temperature}")
        if self.seed is not None:
            cmd.append(f"--termrl-seed={self.seed}")
        cmd += [
            f"--termrl-run-dir={run_dir}",
            f"--termrl-episodes={run_dir / 'episodes.jsonl'}",
            f"--termrl-report={self.summary_path(arm)}",
            f"--junitxml={self.out / (arm.name + '.xml')}",
        ]
        return cmd + list(self.pytest_args)

    def summary_path(self, arm: Arm) -> Path:
        return self.out / f"{arm.name}.json"


def _max_rank(folders: list[Path]) -> int | None:
    from .sft import adapter_rank  # no torch: reads adapter_config.json

    ranks = [r for r in (adapter_rank(folder) for folder in folders) if r]
    return max(ranks) if ranks else None


def make_arms(base_model: str, sft: str | None = None, grpo: str | None = None, adapters: Sequence[str] = ()) -> list[Arm]:
    """base, then sft and grpo when given, then NAME=DIR adapters; names must be unique."""
    arms = [Arm(BASE, base_model)]
    if sft:
        arms.append(Arm("sft", "sft", Path(sft)))
    if grpo:
        arms.append(Arm("grpo", "grpo", Path(grpo)))
    for spec in adapters:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise ValueError(f"--adapter {spec!r}: expected NAME=DIR")
        arms.append(Arm(name, name, Path(path)))
    names = [a.name for a in arms]
    if len(set(names)) != len(names):
        raise ValueError(f"arm names must be unique: {names}")
    for arm in arms:
        if arm.adapter is not None and not (Path(arm.adapter) / "adapter_config.json").is_file():
            raise ValueError(f"adapter of arm {arm.name!r} not found: {arm.adapter}/adapter_config.json")
    return arms


def run_arms(plan: ArmsPlan, echo=print) -> dict[str, Path]:
    """Run every arm's pytest command in turn; return the summaries written."""
    plan.out.mkdir(parents=True, exist_ok=True)
    summaries = {}
    for arm in plan.arms:
        cmd = plan.command(arm)
        echo(f"[arm {arm.name}] {' '.join(cmd)}")
        code = subprocess.call(cmd)
        if code not in OK_EXIT_CODES:
            raise RuntimeError(f"arm {arm.name}: pytest exited with {code} (see {plan.out / arm.name})")
        summaries[arm.name] = plan.summary_path(arm)
    return summaries


# -- the comparison table --------------------------------------------------------------------
def paired_bootstrap_diff(
    arm: dict[str, list[float]], base: dict[str, list[float]], samples: int = BOOTSTRAP_SAMPLES, seed: int = 0
) -> tuple[float, float, float] | None:
    """(difference of rates, low, high): arm minus base over the tasks both ran, resampling tasks."""
    tasks = sorted(set(arm) & set(base))
    if not tasks:
        return None

    def rate(values: dict[str, list[float]], picked: list[str]) -> float:
        total = sum(sum(values[t]) for t in picked)
        count = sum(len(values[t]) for t in picked)
        return total / count if count else 0.0

    point = rate(arm, tasks) - rate(base, tasks)
    rng = random.Random(seed)
    diffs = []
    for _ in range(samples):
        picked = [tasks[rng.randrange(len(tasks))] for _ in tasks]
        diffs.append(rate(arm, picked) - rate(base, picked))
    diffs.sort()
    return point, diffs[int(0.025 * (samples - 1))], diffs[int(0.975 * (samples - 1))]


def _by_task(records: list[dict], prompt: str, family: str) -> dict[str, list[float]]:
    values: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if r.get("prompt") == prompt and r.get("family") == family:
            values[r["task_id"]].append(1.0 if r.get("safe_success") else 0.0)
    return dict(values)


def episodes_beside(summary: Path) -> Path | None:
    """The episode log an arm run leaves next to its summary (OUT/<arm>/episodes.jsonl)."""
    candidate = summary.with_suffix("") / "episodes.jsonl"
    return candidate if candidate.is_file() else None


def comparison(summaries: dict[str, Path], episodes: dict[str, Path] | None = None, base: str = BASE) -> list[dict]:
    """One row per arm x prompt x family, with the difference to the base arm where it can be had."""
    episodes = dict(episodes or {})
    records: dict[str, list[dict]] = {}
    for name, path in summaries.items():
        log = episodes.get(name) or episodes_beside(Path(path))
        if log is not None:
            records[name] = read_episodes(Path(log))
    rows = []
    for name, path in summaries.items():
        summary = json.loads(Path(path).read_text())
        for row in summary.get("rows", []):
            prompt, family = row.get("prompt"), row.get("family")
            out = {
                "arm": name,
                "model": row.get("model"),
                "prompt": prompt,
                "family": family,
                "episodes": row["episodes"],
                "tasks": row.get("tasks"),
                "safe_successes": row["safe_successes"],
                "rate": row["safe_success_rate"],
                "ci95": None,
                "mean_reward": row.get("mean_reward"),
                "collateral": row.get("collateral_episodes", 0),
                "harness_errors": row.get("harness_errors", 0),
                "mean_commands": row.get("mean_commands"),
                "delta": None,
            }
            ci = row.get("ci95")
            if ci is None and name in records:
                ci = cluster_bootstrap_ci(_by_task(records[name], prompt, family))
            out["ci95"] = list(ci) if ci is not None else [float("nan"), float("nan")]
            if name != base and name in records and base in records:
                diff = paired_bootstrap_diff(_by_task(records[name], prompt, family), _by_task(records[base], prompt, family))
                if diff is not None:
                    out["delta"] = list(diff)
            rows.append(out)
    return rows


def format_comparison(rows: list[dict]) -> list[str]:
    header = (
        f"{'arm':<10} {'prompt':<14} {'family':<12} {'eps':>4} {'safe':>5} {'rate':>6} {'95% CI':>13} "
        f"{'vs base [95% CI]':>24} {'reward':>6} {'coll':>4} {'herr':>4}"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        low, high = row["ci95"]
        if row["delta"] is not None:
            d, dl, dh = row["delta"]
            delta = f"{d:+.2f} [{dl:+.2f}, {dh:+.2f}]"
        else:
            delta = "-" if row["arm"] == BASE else "n/a"
        reward = f"{row['mean_reward']:.2f}" if row.get("mean_reward") is not None else "-"
        lines.append(
            f"{row['arm'][:10]:<10} {str(row['prompt'])[:14]:<14} {str(row['family'])[:12]:<12} {row['episodes']:>4} "
            f"{row['safe_successes']:>5} {row['rate']:>6.1%} {f'[{low:.2f}, {high:.2f}]':>13} {delta:>24} "
            f"{reward:>6} {row['collateral']:>4} {row['harness_errors']:>4}"
        )
    return lines
