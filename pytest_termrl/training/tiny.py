"""A tiny causal LM built on the spot, for the CPU smoke tier and the CPU run of the benchmark.

Nothing is downloaded: a byte-level BPE tokenizer is trained with the ``tokenizers``
library on the text of a task suite (instructions, solutions, environments, tests) and
the system prompts, wrapped as a ``transformers`` fast tokenizer with Qwen2.5's chat
template (so tool calls are rendered and parsed exactly as for a real Qwen2.5 model,
and as vLLM's ``hermes`` tool parser expects), and paired with a randomly initialised
Qwen2 model of a few layers. The folder it writes loads with
``AutoModelForCausalLM.from_pretrained`` / ``AutoTokenizer.from_pretrained`` like any
model on a hub, so every training command is exercised on its real loading path.

    python -m pytest_termrl.training tiny --suite task_suites/core --out /tmp/tiny-lm
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..agents.conversation import tool_schemas

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
"""Qwen2.5's control tokens: pad, turn start, turn end (the end-of-turn is the EOS)."""
ADDED_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
"""Tags of the tool-call format; single tokens, as in the real vocabulary."""


def qwen2_5_chat_template() -> str:
    """Qwen2.5-Instruct's chat template, the very string TRL recognises (it adds the response parser)."""
    import importlib.util

    spec = importlib.util.find_spec("trl")  # read the file: importing trl takes seconds
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("trl is not installed (pip install 'pytest-termrl[train]')")
    return (Path(list(spec.submodule_search_locations)[0]) / "chat_templates" / "qwen2_5.jinja").read_text(encoding="utf-8")


def corpus(suite: Path | None, extra: Sequence[str] = ()) -> list[str]:
    """Texts to train the tokenizer on: every text file of the suite, the prompts, the tool schema."""
    texts: list[str] = list(extra)
    texts.append(json.dumps(tool_schemas()))
    texts.append(json.dumps({"name": "bash", "arguments": {"command": "ls -la"}}))
    roots = [suite] if suite is not None else []
    from ..agents.prompts import REPO_PROMPTS_DIR

    roots.append(REPO_PROMPTS_DIR)
    for root in roots:
        if root is None or not Path(root).is_dir():
            continue
        for path in sorted(Path(root).rglob("*")):
            if not path.is_file() or path.stat().st_size > 200_000 or "__pycache__" in path.parts:
                continue
            try:
                texts.append(path.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, OSError):
                continue
    return texts


def build_tokenizer(texts: list[str], vocab_size: int = 2048):
    """A byte-level BPE fast tokenizer with Qwen2.5's special tokens and chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS + ADDED_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(texts, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
        model_max_length=8192,
        padding_side="left",
    )
    tokenizer.add_tokens(ADDED_TOKENS)
    tokenizer.chat_template = qwen2_5_chat_template()
    return tokenizer


def build_model(tokenizer, *, hidden: int = 64, layers: int = 2, heads: int = 4, kv_heads: int = 2, seed: int = 0, max_positions: int = 8192, initializer_range: float = 0.2):
    """A randomly initialised Qwen2 causal LM sized for the tokenizer."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        initializer_range=initializer_range,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def build_tiny_lm(out: Path, suite: Path | None = None, *, vocab_size: int = 2048, hidden: int = 64, layers: int = 2, seed: int = 0) -> Path:
    """Write a tiny model and its tokenizer to ``out`` (save_pretrained format); return ``out``."""
    out = Path(out)
    tokenizer = build_tokenizer(corpus(suite), vocab_size=vocab_size)
    model = build_model(tokenizer, hidden=hidden, layers=layers, seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(out)
    model.save_pretrained(out)
    return out
