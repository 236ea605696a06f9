"""What training costs: rollout throughput and one GRPO step, on the real environment.

Two measurements:

- environment only (no model): N rollouts through the training environment, each one
  fresh sandbox + the task's reference solution as its one ``bash`` call + the verifier,
  ended together as a GRPO batch is (verifiers in parallel): rollouts/s and the latency
  of each phase. This is the harness's ceiling on rollout throughput.
- trainer: ``--steps`` GRPO steps of TRL's GRPOTrainer with the environment; the rollout
  phase (generation + tool calls + rewards) is timed apart from the whole step, so the
  table shows rollouts/s with a model, and the time of the optimisation itself.

Without ``--model`` a tiny model is built on the spot (CPU run, proves the script works).
On a GPU box:

    python benchmarks/bench_training.py --model Qwen/Qwen2.5-7B-Instruct --use-vllm \
        --vllm-mode colocate --num-generations 8 --batch 8 --steps 3 --max-completion-length 4096
    python benchmarks/bench_training.py                  # CPU, tiny model, seconds
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

REPO = Path(__file__).resolve().parents[1]
CORE = REPO / "task_suites" / "core"


def summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    return {"median": round(statistics.median(ordered), 4), "min": round(ordered[0], 4), "max": round(ordered[-1], 4), "n": len(ordered)}


def bench_environment(suite: Path, split: str, tasks: list[str] | None, rollouts: int) -> dict:
    """Rollouts through the environment with the reference solution, finished as one batch."""
    from pytest_termrl.training.data import grpo_rows
    from pytest_termrl.harness import default_harness
    from pytest_termrl.training.env import RolloutSession

    harness = default_harness(prompts=["p0_default"])
    rows = grpo_rows(suite, split, ["clean"], tasks=tasks, harness=harness)
    session = RolloutSession(harness, model_name="bench", finish_batch_together=True)
    picked = [rows[i % len(rows)] for i in range(rollouts)]
    envs = [session.factory() for _ in picked]
    started = time.perf_counter()
    for env, row in zip(envs, picked):
        env.reset(**row)
    reset_s = time.perf_counter() - started
    command_times = []
    for env, row in zip(envs, picked):
        solution = (suite / row["task_id"] / "solution.sh").read_text()
        t0 = time.perf_counter()
        env.bash(solution)
        command_times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    rewards = [env.get_reward() for env in envs]
    reward_s = time.perf_counter() - t0
    total = time.perf_counter() - started
    session.close()
    return {
        "rollouts": rollouts,
        "wall_s": round(total, 3),
        "rollouts_per_s": round(rollouts / total, 3),
        "reset_all_s": round(reset_s, 3),
        "first_command_s (includes sandbox setup)": summary(command_times),
        "rewards_all_s (verifiers in parallel)": round(reward_s, 3),
        "mean_reward": sum(rewards) / len(rewards),
    }


def bench_trainer(args, model: str) -> dict:
    from transformers import TrainerCallback

    from pytest_termrl.training.grpo import GrpoOptions, train_grpo

    timings: dict[str, list[float]] = {"rollout_s": [], "step_s": []}

    class StepTimer(TrainerCallback):
        def on_step_begin(self, *a, **k):
            self.t0 = time.perf_counter()

        def on_step_end(self, *a, **k):
            timings["step_s"].append(time.perf_counter() - self.t0)

    def instrument(trainer, session):
        original = trainer._generate_and_score_completions

        def timed(inputs):
            t0 = time.perf_counter()
            output = original(inputs)
            timings["rollout_s"].append(time.perf_counter() - t0)
            return output

        trainer._generate_and_score_completions = timed

    out = Path(tempfile.mkdtemp(prefix="bench-grpo-"))
    options = GrpoOptions(
        model=model, out=str(out), suite=str(args.suite), split=args.split, tasks=args.tasks, repeats=args.repeats,
        max_steps=args.steps, num_generations=args.num_generations, per_device_train_batch_size=args.batch,
        max_completion_length=args.max_completion_length, temperature=args.temperature, init_adapter=args.init_adapter,
        use_vllm=args.use_vllm, vllm_mode=args.vllm_mode, gradient_checkpointing=args.gradient_checkpointing,
        learning_rate=1e-5, logging_steps=1,
    )
    started = time.perf_counter()
    result = train_grpo(options, before_train=instrument, callbacks=[StepTimer()])
    wall = time.perf_counter() - started
    rollouts_per_step = args.batch  # per_device_train_batch_size completions per optimizer step (1 process)
    rollout_s = timings["rollout_s"]
    step_s = timings["step_s"]
    train_only = [s - r for s, r in zip(step_s, rollout_s)]
    tokens = [e.get("num_tokens") for e in result.trainer.state.log_history if "num_tokens" in e]
    return {
        "model": model,
        "steps": len(step_s),
        "rollouts": len(result.session.results),
        "wall_s (incl. model load)": round(wall, 3),
        "step_s": summary(step_s),
        "rollout_phase_s": summary(rollout_s),
        "train_phase_s (step - rollout)": summary(train_only),
        "rollouts_per_s (rollout phase)": round(rollouts_per_step * len(rollout_s) / sum(rollout_s), 3) if rollout_s else None,
        "num_tokens_cumulative": tokens[-1] if tokens else None,
        "mean_reward": sum(r.reward for r in result.session.results) / max(1, len(result.session.results)),
        "losses": result.losses,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="model to train (default: a tiny model built here)")
    parser.add_argument("--init-adapter", default=None)
    parser.add_argument("--suite", type=Path, default=CORE)
    parser.add_argument("--split", default=None, help="split to play (default: train, or any when the suite has no splits.json)")
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: every task of the split)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--env-rollouts", type=int, default=8, help="rollouts of the environment-only measurement (0: skip)")
    parser.add_argument("--steps", type=int, default=2, help="GRPO steps (0: skip the trainer)")
    parser.add_argument("--num-generations", type=int, default=2)
    parser.add_argument("--batch", type=int, default=2, help="per-device train batch (completions per step)")
    parser.add_argument("--max-completion-length", type=int, default=256)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--use-vllm", action="store_true")
    parser.add_argument("--vllm-mode", default="colocate")
    parser.add_argument("--gradient-checkpointing", action="store_true")
    parser.add_argument("--out", "--json", dest="out", default=None, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    args.tasks = [t for t in args.tasks.split(",") if t] or None
    if args.split is None:
        args.split = "train" if (args.suite / "splits.json").is_file() else "any"

    results: dict = {"python": sys.version.split()[0]}
    try:
        import torch
        import transformers
        import trl

        results["versions"] = {"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__}
        results["device"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    except ImportError as exc:
        print(f"the [train] extra is not installed: {exc}", file=sys.stderr)
        return 2
    if args.env_rollouts:
        results["environment"] = bench_environment(args.suite, args.split, args.tasks, args.env_rollouts)
        print(json.dumps({"environment": results["environment"]}, indent=2), flush=True)
    if args.steps:
        model = args.model
        if model is None:
            from pytest_termrl.training.tiny import build_tiny_lm

            model = str(build_tiny_lm(Path(tempfile.mkdtemp(prefix="bench-tiny-")), args.suite))
        results["trainer"] = bench_trainer(args, model)
        print(json.dumps({"trainer": results["trainer"]}, indent=2), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
