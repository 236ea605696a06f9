"""The trained adapter, served: PEFT LoRA on the embedded GGUF -> GGUF LoRA -> llama.cpp ``lora_path``.

A few SFT steps (transformers loads the bundled Q4_K_M GGUF, dequantized) on examples
rendered as the server renders them; the adapter is converted with the ``gguf`` package's
tensor-name map and loaded by llama-cpp-python next to the same base GGUF the server
serves. The check: on prompts cut from the training conversation, llama.cpp with the
adapter picks the same next token as transformers with the adapter, and the change the
adapter makes to the logits (adapter minus base) points the same way in both.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_termrl.agents.conversation import tool_schemas
from pytest_termrl.serving.embedded import ensure_embedded_model
from pytest_termrl.training.embedded.gguf_lora import AdapterConversionError, base_architecture, convert_peft_lora
from pytest_termrl.training.embedded.render import ServingTokenizer, render_example
from pytest_termrl.training.embedded.sft_gguf import GgufSftOptions, train_gguf_sft

pytestmark = pytest.mark.slow


def call(i: int, command: str) -> dict:
    return {"id": f"call_{i}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}


def conversation(task: str, commands: list[str]) -> list[dict]:
    messages = [{"role": "system", "content": "You are a shell agent. Use the bash tool."}, {"role": "user", "content": task}]
    for i, command in enumerate(commands, 1):
        messages += [{"role": "assistant", "content": "", "tool_calls": [call(i, command)]},
                     {"role": "tool", "tool_call_id": f"call_{i}", "content": "[exit code 0]"}]
    return messages + [{"role": "assistant", "content": "Done."}]


EXAMPLES = [
    conversation("Count the ERROR lines of app.log into errors.txt.", ["ls -la", "grep -c ERROR app.log > errors.txt"]),
    conversation("Sort names.txt into sorted.txt.", ["ls -la", "sort names.txt > sorted.txt"]),
]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("adapter")
    data = root / "sft.jsonl"
    tools = json.dumps(tool_schemas())
    data.write_text("".join(json.dumps({"messages": m, "tools": tools}) + "\n" for m in EXAMPLES))
    options = GgufSftOptions(data=[str(data)], out=str(root / "sft"), max_steps=6, learning_rate=2e-3, lora_r=8, lora_alpha=16,
                             max_length=512, threads=2)
    return train_gguf_sft(options)


def hf_last_logits(model, ids: list[int]) -> np.ndarray:
    import torch

    with torch.no_grad():
        return model(input_ids=torch.tensor([ids]), logits_to_keep=1).logits[0, -1].float().numpy()


def llama_last_logits(llama, ids: list[int]) -> np.ndarray:
    """The next-token logits after ``ids`` (the Llama needs ``logits_all=True`` to keep them)."""
    llama.reset()
    llama.eval(ids)
    return np.array(llama.scores[llama.n_tokens - 1], dtype=np.float32)


def test_served_adapter_moves_the_next_token_as_the_trained_model_does(trained):
    from llama_cpp import Llama

    assert trained.losses[-1] < trained.losses[0], trained.losses
    base = ensure_embedded_model()
    tokenizer = ServingTokenizer(base)
    prompts = []
    for messages in EXAMPLES:
        example = render_example(messages, tool_schemas(), tokenizer)
        ids, mask = example.input_ids, example.assistant_masks
        starts = [p for p in range(1, len(ids)) if mask[p] and not mask[p - 1]]
        prompts += [ids[:p] for p in starts] + [ids[: p + 3] for p in starts]  # turn starts, and 3 tokens in

    model = trained.model.eval()
    with model.disable_adapter():
        hf_base = [hf_last_logits(model, p) for p in prompts]
    hf_lora = [hf_last_logits(model, p) for p in prompts]
    served_base = Llama(model_path=str(base), n_ctx=1024, n_threads=2, logits_all=True, verbose=False)
    base_logits = [llama_last_logits(served_base, p) for p in prompts]
    del served_base
    served = Llama(model_path=str(base), lora_path=str(trained.gguf_adapter), n_ctx=1024, n_threads=2, logits_all=True, verbose=False)
    lora_logits = [llama_last_logits(served, p) for p in prompts]

    changed, differ = 0, []
    for i, prompt in enumerate(prompts):
        if int(np.argmax(lora_logits[i])) != int(np.argmax(hf_lora[i])):
            differ.append(f"prompt {i}: {tokenizer.llama.detokenize(prompt[-8:])!r}")
        delta_served, delta_hf = lora_logits[i] - base_logits[i], hf_lora[i] - hf_base[i]
        cosine = float(delta_served @ delta_hf / (np.linalg.norm(delta_served) * np.linalg.norm(delta_hf)))
        assert cosine > 0.9, f"prompt {i}: the adapter moves the served logits elsewhere (cosine {cosine:.3f})"
        changed += int(np.argmax(hf_lora[i]) != np.argmax(hf_base[i]))
    # Q4_K_M weights served against their float32 dequantization: a near tie may fall either way.
    assert len(differ) <= max(1, len(prompts) // 10), differ
    assert changed >= 1, "the adapter changed no top token; the check would not tell a missing adapter apart"


def test_conversion_writes_llama_cpp_names_and_refuses_what_it_cannot_serve(trained, tmp_path):
    import gguf

    reader = gguf.GGUFReader(str(trained.gguf_adapter))
    names = sorted(t.name for t in reader.tensors)
    arch, blocks = base_architecture(ensure_embedded_model())
    assert arch == "gemma3" and len(names) == blocks * 7 * 2
    assert "blk.0.attn_q.weight.lora_a" in names and f"blk.{blocks - 1}.ffn_down.weight.lora_b" in names
    field = reader.fields["adapter.lora.alpha"]
    assert float(field.parts[field.data[0]][0]) == 16.0

    config = json.loads((trained.out / "adapter_config.json").read_text())
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "adapter_config.json").write_text(json.dumps({**config, "use_dora": True}))
    (bad / "adapter_model.safetensors").write_bytes((trained.out / "adapter_model.safetensors").read_bytes())
    with pytest.raises(AdapterConversionError, match=r"adapter_config.json: use_dora is set"):
        convert_peft_lora(bad, ensure_embedded_model(), tmp_path / "bad.gguf")
    with pytest.raises(AdapterConversionError, match=r"adapter_config.json: missing; expected a PEFT LoRA adapter folder"):
        convert_peft_lora(tmp_path, ensure_embedded_model(), tmp_path / "none.gguf")
