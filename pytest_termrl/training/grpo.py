"""GRPO with TRL's GRPOTrainer on real, multi-turn episodes of the harness.

    python -m pytest_termrl.training grpo --model Qwen/Qwen2.5-7B-Instruct --suite task_suites/core \
        --split train --families clean --out out/grpo

Rows: one per task x family (x ``--repeats``) of the suite's split, in an order fixed by
``--salt`` (TRL's own shuffling is off, so the salt alone decides it). Each row's prompt
is exactly the conversation the openai agent opens an evaluation episode with (system
prompt, task, command budget sentence). Rollouts: TRL's ``environment_factory`` makes one
:class:`~pytest_termrl.training.env.TermrlEnvironment` per rollout; its ``bash`` tool runs
the model's commands in a fresh sandbox and its ``get_reward`` returns the harness's
``EpisodeOutcome.reward`` from the verifier and the collateral oracle. The tool schema the
model sees is the openai agent's ``BASH_TOOL``, the one it meets in evaluation.
Every rollout's episode record (transcript included) goes to ``--episodes`` (default
``OUT/rollouts.jsonl``), so GRPO rollouts can feed the SFT data builder too.

``--gguf FILE`` (or ``embedded``) trains the model of a GGUF as the embedded llama.cpp
server serves it: loaded by transformers' GGUF support, prompts and tool results rendered
and replies parsed in the server's chat format (:mod:`.serving_chat`), a turn ended right
after its tool call as the server ends it; the adapter is written as a GGUF LoRA too.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..serving import chat_format
from ..agents.base import EpisodeLimits
from ..agents.conversation import tool_schemas
from ..faults import CLEAN
from ..harness import default_harness
from ..settings import SandboxSettings, VerifierSettings
from .config import to_dict
from .data import grpo_rows
from .env import RolloutSession
from .sft import load_model_and_tokenizer, lora_config, save_adapter, use_bf16

if TYPE_CHECKING:
    from .embedded.render import ServingTokenizer


@dataclass
class GrpoOptions:
    model: str | None = field(default=None, metadata={"help": "base model: hub id or local folder (with --gguf: a model of the GGUF's vocabulary)"})
    gguf: str | None = field(default=None, metadata={"help": "train the model of this GGUF ('embedded': the embedded server's), "
                                                             "rendered and parsed in the server's chat format"})
    threads: int = field(default=0, metadata={"help": "torch threads (0: leave torch's default)"})
    out: str | None = field(default=None, metadata={"help": "folder for the adapter"})
    suite: str = field(default="task_suites/core", metadata={"help": "suite folder (with contracts.jsonl and splits.json)"})
    split: str = field(default="train", metadata={"help": "split whose tasks are played (train, dev_search, dev_monitor, any; never test)"})
    families: list[str] = field(default_factory=lambda: [CLEAN], metadata={"help": "fault families"})
    tasks: list[str] | None = field(default=None, metadata={"help": "only these task ids"})
    prompt: str = field(default="p0_default", metadata={"help": "system prompt by name or path"})
    salt: str = field(default="termrl", metadata={"help": "salt of the row order (and of fault targets)"})
    repeats: int = field(default=1, metadata={"help": "rows per task x family"})
    init_adapter: str | None = field(default=None, metadata={"help": "start from this adapter (e.g. the SFT one)"})
    episodes: str | None = field(default=None, metadata={"help": "JSONL of every rollout's episode (default OUT/rollouts.jsonl)"})
    results: str | None = field(default=None, metadata={"help": "also write the per-step rewards (the trainer's and the harness's) here"})
    max_steps: int = 100
    max_minutes: float = field(default=0.0, metadata={"help": "stop after the step that passes this many minutes of training (0: no limit)"})
    num_generations: int = 8
    per_device_train_batch_size: int = 8
    gradient_accumulation_steps: int = 1
    steps_per_generation: int | None = None
    num_iterations: int = 1
    learning_rate: float = 1e-5
    lr_scheduler_type: str = "constant"
    beta: float = field(default=0.0, metadata={"help": "KL coefficient (0: no reference model)"})
    loss_type: str | None = field(default=None, metadata={"help": "TRL loss type (default: TRL's)"})
    temperature: float = 1.0
    top_p: float = 1.0
    max_completion_length: int = field(default=4096, metadata={"help": "tokens of all turns of a rollout, tool output included"})
    max_tool_calls: int = field(default=EpisodeLimits.max_tool_calls, metadata={"help": "tool calls per episode (the harness's limit and TRL's tool-loop bound)"})
    max_commands: int | None = field(default=EpisodeLimits.max_commands, metadata={"help": "disclosed command budget per episode"})
    command_timeout_s: float = field(default=SandboxSettings.command_timeout_s, metadata={"flag": "--command-timeout", "help": "seconds per command"})
    test_timeout_s: float = field(default=VerifierSettings.test_timeout_s, metadata={"flag": "--test-timeout", "help": "seconds per hidden test"})
    episode_timeout_s: float = field(default=EpisodeLimits.wall_clock_s, metadata={"flag": "--episode-timeout", "help": "wall-clock seconds per episode"})
    output_cap_chars: int = field(default=SandboxSettings.output_cap_chars, metadata={"flag": "--output-cap", "help": "characters of output shown per command"})
    sandbox: str = "bwrap"
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_target_modules: list[str] = field(default_factory=lambda: ["all-linear"])
    use_vllm: bool = False
    vllm_mode: str = field(default="colocate", metadata={"help": "colocate (one process) or server (trl vllm-serve)"})
    vllm_gpu_memory_utilization: float = 0.35
    vllm_server_base_url: str | None = None
    gradient_checkpointing: bool = False
    bf16: bool | None = None
    dtype: str = "auto"
    attn_implementation: str | None = None
    logging_steps: int = 1
    save_steps: int = field(default=0, metadata={"help": "save a checkpoint every N steps (0: only the final adapter)"})
    seed: int = 0
    report_to: str = "none"

    def check(self) -> None:
        missing = [name for name in ("out",) if not getattr(self, name)]
        if not self.model and not self.gguf:
            missing.insert(0, "model (or --gguf)")
        if missing:
            raise ValueError(f"grpo needs {', '.join('--' + m for m in missing)}")


@dataclass
class GrpoResult:
    out: Path
    losses: list[float]
    metrics: dict
    session: RolloutSession
    trainer: object = None
    steps: list[dict] = field(default_factory=list)
    """Per optimizer step: the trainer's logged mean reward, its spread, the loss."""


def build_config(options: GrpoOptions, output_dir: Path):
    import torch
    from trl import GRPOConfig

    kwargs: dict[str, Any] = dict(  # GRPOConfig's fields have types of their own
        output_dir=str(output_dir),
        max_steps=options.max_steps,
        per_device_train_batch_size=options.per_device_train_batch_size,
        gradient_accumulation_steps=options.gradient_accumulation_steps,
        num_generations=options.num_generations,
        num_iterations=options.num_iterations,
        learning_rate=options.learning_rate,
        lr_scheduler_type=options.lr_scheduler_type,
        beta=options.beta,
        temperature=options.temperature,
        top_p=options.top_p,
        max_completion_length=options.max_completion_length,
        max_tool_calling_iterations=options.max_tool_calls,
        shuffle_dataset=False,  # the salt fixes the order
        activation_checkpointing=options.gradient_checkpointing,
        bf16=use_bf16(options.bf16),
        logging_steps=options.logging_steps,
        save_strategy="steps" if options.save_steps else "no",
        report_to=options.report_to,
        seed=options.seed,
        use_cpu=not torch.cuda.is_available(),
        use_vllm=options.use_vllm,
        vllm_mode=options.vllm_mode,
        vllm_gpu_memory_utilization=options.vllm_gpu_memory_utilization,
        dataloader_num_workers=0,
    )
    if options.save_steps:
        kwargs["save_steps"] = options.save_steps
    if options.steps_per_generation:
        kwargs["steps_per_generation"] = options.steps_per_generation
    if options.loss_type:
        kwargs["loss_type"] = options.loss_type
    if options.vllm_server_base_url:
        kwargs["vllm_server_base_url"] = options.vllm_server_base_url
    return GRPOConfig(**kwargs)


def use_harness_tool_schema(trainer) -> None:
    """Render the prompts with the openai agent's BASH_TOOL, the schema evaluation sends.

    TRL derives a schema from the environment's ``bash`` method (its docstring adds a
    description to ``command``); the prompts are rendered from ``_env_tools``, which
    accepts JSON schemas, so the evaluation schema goes there. Tool execution does not
    use it (TRL calls the environment's methods by name).
    """
    tools = getattr(trainer, "_env_tools", None)
    if not isinstance(tools, dict):
        raise RuntimeError("this TRL version has no GRPOTrainer._env_tools; check the tool schema rendering")
    schemas = tool_schemas()
    for name in tools:
        tools[name] = list(schemas)


def train_grpo(
    options: GrpoOptions,
    *,
    before_train: Callable[[object, RolloutSession], None] | None = None,
    callbacks: list | None = None,
) -> GrpoResult:
    """Train; ``before_train(trainer, session)`` may instrument the trainer (tests, benchmarks)."""
    options.check()
    if options.out is None:  # check() refuses a missing --out
        raise ValueError("grpo needs --out")
    from datasets import Dataset
    from peft import PeftModel
    from trl import GRPOTrainer

    out = Path(options.out)
    limits = EpisodeLimits(max_tool_calls=options.max_tool_calls, max_commands=options.max_commands, wall_clock_s=options.episode_timeout_s)
    harness = default_harness(
        options.sandbox, [options.prompt], limits=limits, command_timeout_s=options.command_timeout_s,
        output_cap_chars=options.output_cap_chars, test_timeout_s=options.test_timeout_s,
    )
    rows = grpo_rows(
        options.suite, options.split, options.families, salt=options.salt, prompt=options.prompt,
        repeats=options.repeats, tasks=options.tasks, harness=harness,
    )
    dataset = Dataset.from_list(rows)
    if options.threads:
        import torch

        torch.set_num_threads(options.threads)
    serving: ServingTokenizer | None = None
    if options.gguf:
        model, tokenizer, serving = load_gguf_policy(options)
    else:
        if options.model is None:  # check() refuses neither --model nor --gguf
            raise ValueError("grpo needs --model (or --gguf)")
        model, tokenizer = load_model_and_tokenizer(options.model, options.dtype, options.attn_implementation)
    peft_config = None
    if options.init_adapter:
        model = PeftModel.from_pretrained(model, options.init_adapter, is_trainable=True)
    else:
        peft_config = lora_config(options.lora_r, options.lora_alpha, options.lora_dropout, options.lora_target_modules)
    episodes = Path(options.episodes) if options.episodes else out / "rollouts.jsonl"
    rank = int(os.environ.get("RANK", "0"))
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:  # one log per training process (accelerate launch)
        episodes = episodes.with_name(f"{episodes.stem}.rank{rank}{episodes.suffix}")
    session = RolloutSession(harness, model_name=f"grpo:{options.model or options.gguf}", episodes=episodes, finish_batch_together=True)
    args = build_config(options, out / "checkpoints")
    callbacks = list(callbacks or [])
    if options.max_minutes:
        callbacks.append(stop_after(options.max_minutes * 60))
    trainer = GRPOTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=peft_config,
        environment_factory=session.factory,
        callbacks=callbacks,
    )
    use_harness_tool_schema(trainer)
    if serving is not None:
        from .embedded.serving_chat import end_turn_after_call, stop_turns_at_calls

        stop_turns_at_calls(trainer.model, end_turn_after_call(serving, tokenizer.convert_tokens_to_ids(chat_format.END)))
    if before_train is not None:
        before_train(trainer, session)
    try:
        output = trainer.train()
    finally:
        session.close()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    if not all(math.isfinite(x) for x in losses):
        raise RuntimeError(f"GRPO loss is not finite: {losses}")
    rewards = [r.reward for r in session.results]
    steps = step_log(trainer.state.log_history)
    metadata = {
        "command": "grpo", "base_model": options.model or options.gguf, "options": to_dict(options), "metrics": output.metrics,
        "rows": len(rows), "rollouts": len(rewards), "mean_reward": sum(rewards) / len(rewards) if rewards else None,
        "episodes": str(episodes), "steps": steps,
    }
    save_adapter(trainer.model, out, metadata)
    if options.results:
        summary = reward_summary(steps, [r.record for r in session.results])
        summary.update({"options": to_dict(options), "seconds": output.metrics.get("train_runtime")})
        Path(options.results).write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    if serving is not None:  # set exactly when options.gguf is
        from .embedded.gguf_lora import convert_peft_lora
        from .embedded.sft_gguf import GGUF_ADAPTER

        convert_peft_lora(out, Path(serving.path), out / GGUF_ADAPTER)
    return GrpoResult(out=out, losses=losses, metrics=dict(output.metrics), session=session, trainer=trainer, steps=steps)


def reward_summary(steps: list[dict], records: list[dict]) -> dict:
    """Per step: the mean reward the trainer logged beside the mean of the harness's rewards for
    that step's episodes (rollout records of one batch), and each episode's task and reward."""
    batches: dict[int, list[dict]] = {}
    for record in records:
        batches.setdefault(int(record["rollout"]["batch"]), []).append(record)
    rows = []
    for index, step in enumerate(steps):
        group = batches.get(index, [])
        rewards = [r["reward"] for r in group]
        rows.append({**step, "harness_mean_reward": sum(rewards) / len(rewards) if rewards else None,
                     "episodes": [{"task_id": r["task_id"], "family": r["family"], "reward": r["reward"],
                                   "safe_success": r.get("safe_success"), "commands": r.get("commands_used"),
                                   "end_reason": r.get("end_reason")} for r in group]})
    first, last = (rows[0]["reward"], rows[-1]["reward"]) if rows else (None, None)
    return {"steps": rows, "first_step_reward": first, "last_step_reward": last, "rollouts": len(records)}


def stop_after(seconds: float):
    """A trainer callback that ends training after the step during which ``seconds`` passed."""
    import time

    from transformers import TrainerCallback

    class StopAfter(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            self.started = time.monotonic()

        def on_step_end(self, args, state, control, **kwargs):
            if time.monotonic() - self.started >= seconds:
                control.should_training_stop = True

    return StopAfter()


def step_log(history: list[dict]) -> list[dict]:
    """The trainer's per-step log entries: mean reward (TRL's ``reward``), its spread, the loss."""
    keep = ("step", "reward", "reward_std", "loss", "frac_reward_zero_std")
    return [{k: entry[k] for k in keep if k in entry} for entry in history if "reward" in entry]


def load_gguf_policy(options: GrpoOptions) -> tuple[Any, Any, ServingTokenizer]:
    """Model, tokenizer and llama.cpp tokenizer for a GGUF policy, in the embedded server's chat format."""
    from ..serving.embedded import ensure_embedded_model
    from .embedded.render import ServingTokenizer
    from .embedded.serving_chat import use_serving_chat_format
    from .embedded.sft_gguf import hf_tokenizer, load_gguf_model

    if options.gguf is None:
        raise ValueError("load_gguf_policy needs --gguf")
    path = ensure_embedded_model() if options.gguf == "embedded" else Path(options.gguf)
    if not path.is_file():
        raise ValueError(f"--gguf {options.gguf}: file not found")
    serving = ServingTokenizer(path)
    tokenizer = use_serving_chat_format(hf_tokenizer(path), serving)
    if options.model:
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained(options.model)
    else:
        model = load_gguf_model(path, options.threads)
    return model, tokenizer, serving
