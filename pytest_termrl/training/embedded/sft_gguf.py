"""LoRA SFT of a GGUF model (the embedded Gemma 3 270M) on examples rendered as its server renders them.

    python -m pytest_termrl.training sft-gguf --data data/sft.jsonl --out out/sft [--gguf FILE]

The base model is the GGUF the server serves, loaded by transformers' GGUF support
(``gguf_file=``, dequantized to float32); the examples are ``training data`` rows rendered
by :mod:`.render` with llama.cpp's own tokenizer, so the ids are the server's prompt ids
and the loss covers assistant turns only (labels -100 elsewhere). TRL's SFTTrainer runs
the steps; its loss is replaced by one that sends only the positions that carry loss
through the output layer (262k wide for Gemma: most of a step's cost otherwise). The
adapter is saved with ``save_pretrained`` and written next to it as a GGUF LoRA adapter
(:mod:`.gguf_lora`) for ``--lora_path``.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..config import to_dict

GGUF_ADAPTER = "adapter.gguf"
METADATA_FILE = "termrl_training.json"


@dataclass
class GgufSftOptions:
    data: list[str] = field(default_factory=list, metadata={"help": "SFT JSONL file(s) written by `training data`"})
    out: str | None = field(default=None, metadata={"help": "folder for the adapter (PEFT and GGUF)"})
    gguf: str | None = field(default=None, metadata={"help": "base GGUF (default: the embedded model)"})
    max_steps: int = 20
    learning_rate: float = 5e-4
    lr_scheduler_type: str = "constant"
    warmup_steps: float = 0.0
    per_device_train_batch_size: int = 1
    gradient_accumulation_steps: int = 1
    max_length: int = field(default=1024, metadata={"help": "tokens per example (longer ones keep their start)"})
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    lora_target_modules: list[str] = field(default_factory=lambda: ["all-linear"])
    lora_layers: int = field(default=0, metadata={"help": "adapt only the top N transformer blocks (0: all); the backward pass "
                                                          "then stops at the lowest adapted block, which is most of a step's cost"})
    loss_vocab: str = field(default="full", metadata={"help": "softmax of the loss over the 'full' vocabulary or only the "
                                                              "tokens that occur in the 'data' (much cheaper: Gemma's output "
                                                              "layer is 262k wide)"})
    loss_full_tokens: list[str] = field(default_factory=lambda: ["<end_of_turn>"], metadata={
        "help": "with --loss-vocab data, positions whose label is one of these tokens take the softmax over the whole "
                "vocabulary: where a turn ends the model must beat every token, not only the data's (a handful of positions)"})
    threads: int = field(default=0, metadata={"help": "torch threads (0: leave torch's default)"})
    logging_steps: int = 1
    seed: int = 0

    def check(self) -> None:
        if not self.data:
            raise ValueError("sft-gguf needs --data")
        if not self.out:
            raise ValueError("sft-gguf needs --out")
        if self.loss_vocab not in ("full", "data"):
            raise ValueError(f"--loss-vocab {self.loss_vocab!r}: expected 'full' or 'data'")
        for name in self.data:
            if not Path(name).is_file():
                raise ValueError(f"--data: file not found: {name}")


@dataclass
class GgufSftResult:
    out: Path
    gguf_adapter: Path
    losses: list[float]
    examples: int
    seconds: dict
    trainer: object = None
    model: object = None


def load_gguf_model(gguf_path: Path | str, threads: int = 0):
    """The GGUF as a float32 transformers causal LM (dequantized), on the CPU."""
    import torch
    from transformers import AutoModelForCausalLM

    if threads:
        torch.set_num_threads(threads)
    path = Path(gguf_path)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    # The weights are plain float32 now; the GGUF "quantizer" left on the model only makes
    # the trainer refuse it as a quantized model.
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        quantizer.remove_quantization_config(model)
    return model


def read_rows(files: list[str]) -> list[dict]:
    rows = []
    for name in files:
        for lineno, line in enumerate(Path(name).read_text().splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            for key in ("messages", "tools"):
                if key not in row:
                    raise ValueError(f"{name}:{lineno}: field {key!r} missing; expected SFT rows from `training data`")
            rows.append(row)
    return rows


def rendered_dataset(rows: list[dict], tokenizer, max_length: int):
    """A ``datasets.Dataset`` of ``input_ids`` / ``labels`` (-100 outside assistant turns)."""
    from datasets import Dataset

    from .render import render_rows

    records = []
    for example in render_rows(rows, tokenizer):
        ids, labels = example.input_ids[:max_length], example.labels[:max_length]
        if any(label != -100 for label in labels[1:]):
            records.append({"input_ids": ids, "labels": labels})
    if not records:
        raise ValueError(f"no example keeps an assistant token within --max-length {max_length}")
    return Dataset.from_list(records)


def loss_at_labels(model, inputs: dict, vocab=None, full_ids=None):
    """Summed next-token cross-entropy and its count, with the output layer applied only where a label is.

    ``vocab`` (a sorted 1-d tensor of token ids, every label among them): the softmax is taken
    over those rows of the output layer only, e.g. the tokens that occur in the training data;
    without it, over the whole vocabulary. Gemma's 262k-row output layer costs as much as the
    rest of the network at each labelled position; a few thousand rows cost nothing. Positions
    whose label is in ``full_ids`` still take the whole vocabulary: trained on the data's
    tokens alone, the model never learns to prefer ``<end_of_turn>`` over the tokens the data
    lacks, and writes on past the end of its turn.
    """
    import torch
    import torch.nn.functional as F

    labels = inputs["labels"]
    targets = labels[:, 1:]
    keep = targets != -100
    positions = keep.new_zeros(labels.shape)
    positions[:, :-1] = keep
    if vocab is None:
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs.get("attention_mask"), logits_to_keep=positions, use_cache=False)
        logits = outputs.logits.reshape(-1, outputs.logits.shape[-1])
        return F.cross_entropy(logits.float(), targets[keep], reduction="sum"), int(keep.sum())
    causal = model.get_base_model() if hasattr(model, "get_base_model") else model
    hidden = causal.model(input_ids=inputs["input_ids"], attention_mask=inputs.get("attention_mask"), use_cache=False).last_hidden_state
    rows, labels_kept = hidden[positions.bool()], targets[keep]
    cap = getattr(causal.config, "final_logit_softcapping", None)

    def project(states, weight):
        logits = states @ weight.T
        return (torch.tanh(logits / cap) * cap if cap is not None else logits).float()

    full = torch.isin(labels_kept, full_ids) if full_ids is not None else torch.zeros_like(labels_kept, dtype=torch.bool)
    total = rows.new_zeros(())
    if full.any():
        total = total + F.cross_entropy(project(rows[full], causal.lm_head.weight), labels_kept[full], reduction="sum")
    rest = labels_kept[~full]
    index = torch.searchsorted(vocab, rest)
    if not torch.equal(vocab[index.clamp(max=len(vocab) - 1)], rest):
        raise ValueError("a label is not in the loss vocabulary")
    if len(rest):
        total = total + F.cross_entropy(project(rows[~full], causal.lm_head.weight[vocab]), index, reduction="sum")
    return total, int(keep.sum())


def data_vocabulary(dataset):
    """The sorted token ids that occur anywhere in the examples (prompts and labels: every label is one)."""
    import torch

    ids: set[int] = set()
    for record in dataset:
        ids.update(record["input_ids"])
    return torch.tensor(sorted(ids), dtype=torch.long)


def _trainer_class(vocab=None, full_ids=None):
    from trl import SFTTrainer

    class LabelPositionsSFTTrainer(SFTTrainer):
        """SFTTrainer whose loss projects only the labelled positions onto the vocabulary."""

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            total, count = loss_at_labels(model, inputs, vocab, full_ids)
            denominator = num_items_in_batch if num_items_in_batch is not None else max(count, 1)
            loss = total / denominator
            return (loss, None) if return_outputs else loss

    return LabelPositionsSFTTrainer


def train_gguf_sft(options: GgufSftOptions, callbacks: list | None = None) -> GgufSftResult:
    options.check()
    if options.out is None:  # check() has said so
        raise ValueError("sft-gguf needs --out")
    import torch
    from trl import SFTConfig

    from ...serving.embedded import ensure_embedded_model
    from .gguf_lora import convert_peft_lora
    from .render import ServingTokenizer
    from ..sft import lora_config

    seconds = {}
    started = time.monotonic()
    base = Path(options.gguf) if options.gguf else ensure_embedded_model()
    tokenizer = ServingTokenizer(base)
    rows = read_rows(options.data)
    dataset = rendered_dataset(rows, tokenizer, options.max_length)
    seconds["render"] = time.monotonic() - started

    mark = time.monotonic()
    model = load_gguf_model(base, options.threads)
    seconds["load"] = time.monotonic() - mark
    out = Path(options.out)
    args = SFTConfig(
        output_dir=str(out / "checkpoints"),
        max_steps=options.max_steps,
        learning_rate=options.learning_rate,
        lr_scheduler_type=options.lr_scheduler_type,
        warmup_steps=options.warmup_steps,
        per_device_train_batch_size=options.per_device_train_batch_size,
        gradient_accumulation_steps=options.gradient_accumulation_steps,
        max_length=options.max_length,
        packing=False,
        logging_steps=options.logging_steps,
        save_strategy="no",
        report_to="none",
        seed=options.seed,
        use_cpu=not torch.cuda.is_available(),
        dataloader_num_workers=0,
        bf16=False,
        remove_unused_columns=False,
        # TRL turns it on by default; here memory is plentiful and recomputing the forward
        # pass would cost a third of every step.
        gradient_checkpointing=False,
    )
    layers = top_layers(model.config.num_hidden_layers, options.lora_layers)
    targets = block_linear_names(model) if layers and options.lora_target_modules == ["all-linear"] else options.lora_target_modules
    peft = lora_config(options.lora_r, options.lora_alpha, options.lora_dropout, targets, layers)
    vocab = data_vocabulary(dataset) if options.loss_vocab == "data" else None
    full_ids = full_softmax_ids(tokenizer, options.loss_full_tokens) if vocab is not None else None
    trainer = _trainer_class(vocab, full_ids)(model=model, args=args, train_dataset=dataset, processing_class=hf_tokenizer(base), peft_config=peft, callbacks=callbacks)
    mark = time.monotonic()
    output = trainer.train()
    seconds["train"] = time.monotonic() - mark
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    if not losses or not all(math.isfinite(x) for x in losses):
        raise RuntimeError(f"SFT loss is not finite: {losses}")

    mark = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    trainer.model.save_pretrained(str(out))
    report = convert_peft_lora(out, base, out / GGUF_ADAPTER)
    seconds["convert"] = time.monotonic() - mark
    metadata = {"command": "sft-gguf", "base_gguf": str(base), "options": to_dict(options), "metrics": output.metrics,
                "examples": len(dataset), "loss_vocab_size": None if vocab is None else len(vocab), "losses": losses, "seconds": seconds, "gguf_adapter": report.to_dict()}
    (out / METADATA_FILE).write_text(json.dumps(metadata, indent=2, sort_keys=True, default=str) + "\n")
    return GgufSftResult(out=out, gguf_adapter=report.out, losses=losses, examples=len(dataset), seconds=seconds, trainer=trainer, model=trainer.model)


def full_softmax_ids(tokenizer, tokens: list[str]):
    """The ids of ``--loss-full-tokens`` (each must be one token of the model's vocabulary)."""
    import torch

    ids = []
    for token in tokens:
        encoded = [t for t in tokenizer.encode(token) if tokenizer.piece(t)]  # BOS spells nothing
        if len(encoded) != 1:
            raise ValueError(f"--loss-full-tokens {token!r}: expected one token of the vocabulary, it is {len(encoded)}")
        ids.append(encoded[0])
    return torch.tensor(sorted(set(ids)), dtype=torch.long) if ids else None


def top_layers(blocks: int, count: int) -> list[int] | None:
    """The indices of the top ``count`` of ``blocks`` transformer blocks (None: all)."""
    if count < 0 or count > blocks:
        raise ValueError(f"--lora-layers {count}: expected 0 (all) to {blocks}, the model's block count")
    return list(range(blocks - count, blocks)) if count else None


def block_linear_names(model) -> list[str]:
    """The names of the linear layers of a transformer block: "all-linear" spelled out, which
    PEFT needs when only some blocks are adapted."""
    import torch

    names = {name.rsplit(".", 1)[-1] for name, module in model.named_modules()
             if isinstance(module, torch.nn.Linear) and ".layers." in name}
    if not names:
        raise ValueError("--lora-layers: the model has no linear layers inside numbered blocks (model.layers.N)")
    return sorted(names)


def hf_tokenizer(gguf_path: Path | str):
    """transformers' tokenizer of the GGUF (the trainer's pad and eos ids), converted once and
    kept next to the file: the conversion takes most of a minute, loading it back a second."""
    import os
    import shutil
    import tempfile

    from transformers import AutoTokenizer

    path = Path(gguf_path)
    saved = path.with_name(path.stem + ".tokenizer")
    if not (saved / "tokenizer_config.json").is_file():
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        partial = Path(tempfile.mkdtemp(prefix=f".{saved.name}.", dir=path.parent))
        tokenizer.save_pretrained(str(partial))
        try:
            os.replace(partial, saved)
        except OSError:  # another process saved it first
            shutil.rmtree(partial, ignore_errors=True)
    return AutoTokenizer.from_pretrained(str(saved))
