"""LoRA SFT on rejection-sampled episodes with TRL's SFTTrainer and PEFT.

    python -m pytest_termrl.training sft --data data/sft.jsonl --model Qwen/Qwen2.5-7B-Instruct --out out/sft

The data is what ``training data`` writes: conversational rows (``messages`` and
``tools``). The loss covers assistant turns only (``assistant_only_loss``: TRL swaps in
the template's training variant with ``{% generation %}`` markers), so the model learns
its tool calls and final replies, never the task text or the tool output. The adapter is
written with ``save_pretrained`` (``adapter_config.json`` + ``adapter_model.safetensors``),
the layout ``vllm serve BASE --enable-lora --lora-modules NAME=DIR`` loads; the command
refuses settings vLLM cannot serve (modules_to_save, DoRA, lm_head or embedding targets).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from .config import to_dict

VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
METADATA_FILE = "termrl_training.json"


@dataclass
class SftOptions:
    data: list[str] = field(default_factory=list, metadata={"help": "SFT JSONL file(s) written by `training data`"})
    model: str | None = field(default=None, metadata={"help": "base model: hub id or local folder"})
    out: str | None = field(default=None, metadata={"help": "folder for the adapter"})
    init_adapter: str | None = field(default=None, metadata={"help": "continue training this adapter instead of a new one"})
    max_steps: int = field(default=-1, metadata={"help": "optimizer steps (-1: use num_train_epochs)"})
    num_train_epochs: float = 2.0
    learning_rate: float = 1e-4
    lr_scheduler_type: str = "cosine"
    warmup_steps: float = field(default=0.03, metadata={"help": "warm-up steps, or a fraction of the steps when below 1"})
    weight_decay: float = 0.0
    per_device_train_batch_size: int = 1
    gradient_accumulation_steps: int = 8
    max_length: int = field(default=8192, metadata={"help": "tokens per example (longer ones are cut)"})
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_target_modules: list[str] = field(default_factory=lambda: ["all-linear"])
    gradient_checkpointing: bool = False
    bf16: bool | None = field(default=None, metadata={"help": "bf16 training (default: when the GPU supports it)"})
    dtype: str = field(default="auto", metadata={"help": "dtype the base model is loaded in (auto, bfloat16, float32)"})
    attn_implementation: str | None = None
    logging_steps: int = 10
    seed: int = 0
    report_to: str = "none"

    def check(self) -> None:
        missing = [name for name in ("model", "out") if not getattr(self, name)]
        if not self.data:
            missing.insert(0, "data")
        if missing:
            raise ValueError(f"sft needs {', '.join('--' + m for m in missing)}")
        for name in self.data:
            if not Path(name).is_file():
                raise ValueError(f"--data: file not found: {name}")


@dataclass
class SftResult:
    out: Path
    losses: list[float]
    metrics: dict
    trainer: object = None
    model: object = None


def torch_dtype(name: str):
    import torch

    if name in ("auto", None):
        return "auto"
    return getattr(torch, name)


def use_bf16(flag: bool | None) -> bool:
    import torch

    if flag is not None:
        return flag
    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


def lora_config(r: int, alpha: int, dropout: float, targets: list[str], layers: list[int] | None = None):
    """``layers``: adapt only these transformer blocks (None: all of them)."""
    from peft import LoraConfig

    target = "all-linear" if list(targets) == ["all-linear"] else list(targets)
    return LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=target, bias="none", task_type="CAUSAL_LM",
                      layers_to_transform=layers)


def load_model_and_tokenizer(model_name: str, dtype: str = "auto", attn_implementation: str | None = None):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kwargs = {"dtype": torch_dtype(dtype)}
    if attn_implementation:
        kwargs["attn_implementation"] = attn_implementation
    model = AutoModelForCausalLM.from_pretrained(model_name, **kwargs)
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def load_sft_dataset(files: list[str]):
    from datasets import load_dataset

    dataset = load_dataset("json", data_files=[str(f) for f in files], split="train")
    missing = {"messages", "tools"} - set(dataset.column_names)
    if missing:
        raise ValueError(f"{', '.join(files)}: not SFT data from `training data` (missing {', '.join(sorted(missing))})")
    return dataset.select_columns(["messages", "tools"])


def train_sft(options: SftOptions, callbacks: list | None = None) -> SftResult:
    options.check()
    if options.model is None or options.out is None:  # check() has named what is missing
        raise ValueError("sft needs --model and --out")
    import torch
    from peft import PeftModel
    from trl import SFTConfig, SFTTrainer

    out = Path(options.out)
    model, tokenizer = load_model_and_tokenizer(options.model, options.dtype, options.attn_implementation)
    dataset = load_sft_dataset(options.data)
    peft_config = None
    if options.init_adapter:
        model = PeftModel.from_pretrained(model, options.init_adapter, is_trainable=True)
    else:
        peft_config = lora_config(options.lora_r, options.lora_alpha, options.lora_dropout, options.lora_target_modules)
    args = SFTConfig(
        output_dir=str(out / "checkpoints"),
        max_steps=options.max_steps,
        num_train_epochs=options.num_train_epochs,
        learning_rate=options.learning_rate,
        lr_scheduler_type=options.lr_scheduler_type,
        warmup_steps=options.warmup_steps,
        weight_decay=options.weight_decay,
        per_device_train_batch_size=options.per_device_train_batch_size,
        gradient_accumulation_steps=options.gradient_accumulation_steps,
        max_length=options.max_length,
        assistant_only_loss=True,
        packing=False,
        activation_checkpointing=options.gradient_checkpointing,
        bf16=use_bf16(options.bf16),
        logging_steps=options.logging_steps,
        save_strategy="no",
        report_to=options.report_to,
        seed=options.seed,
        use_cpu=not torch.cuda.is_available(),
        dataloader_num_workers=0,
    )
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=peft_config,
        callbacks=callbacks,
    )
    output = trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    if not losses or not all(math.isfinite(x) for x in losses):
        raise RuntimeError(f"SFT loss is not finite: {losses}")
    save_adapter(trainer.model, out, {"command": "sft", "base_model": options.model, "options": to_dict(options), "metrics": output.metrics, "examples": len(dataset)})
    return SftResult(out=out, losses=losses, metrics=dict(output.metrics), trainer=trainer, model=trainer.model)


def save_adapter(model, out: Path, metadata: dict) -> Path:
    """Write the LoRA adapter (only) in the layout vLLM's --lora-modules loads, plus our metadata."""
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    problems = vllm_adapter_problems(out)
    if problems:
        raise RuntimeError(f"adapter in {out} cannot be served by vLLM: {'; '.join(problems)}")
    (out / METADATA_FILE).write_text(json.dumps(metadata, indent=2, sort_keys=True, default=str) + "\n")
    return out


def vllm_adapter_problems(folder: Path) -> list[str]:
    """Why vLLM would refuse this adapter folder (empty when it can serve it)."""
    folder = Path(folder)
    config_path = folder / "adapter_config.json"
    problems = []
    if not config_path.is_file():
        return [f"no {config_path.name}"]
    if not (folder / "adapter_model.safetensors").is_file() and not (folder / "adapter_model.bin").is_file():
        problems.append("no adapter_model.safetensors")
    config = json.loads(config_path.read_text())
    if config.get("peft_type") != "LORA":
        problems.append(f"peft_type {config.get('peft_type')!r} (vLLM serves LORA)")
    if config.get("modules_to_save"):
        problems.append(f"modules_to_save {config['modules_to_save']} (vLLM serves LoRA weights only)")
    if config.get("use_dora"):
        problems.append("DoRA")
    if config.get("bias", "none") != "none":
        problems.append(f"bias {config.get('bias')!r}")
    if config.get("r") not in VLLM_LORA_RANKS:
        problems.append(f"rank {config.get('r')} (vLLM supports {', '.join(map(str, VLLM_LORA_RANKS))})")
    targets = config.get("target_modules") or []
    targets = [targets] if isinstance(targets, str) else targets
    bad = [t for t in targets if t in ("lm_head", "embed_tokens")]
    if bad:
        problems.append(f"target modules {bad}")
    return problems


def adapter_rank(folder: Path | str) -> int | None:
    path = Path(folder) / "adapter_config.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text()).get("r")
