"""The GGUF SFT loss: output layer at labelled positions only, optionally over the data's
tokens only, and LoRA on the top blocks only. A tiny random Gemma 3 stands in for the
bundled model (same architecture class, same soft-capping), so these run in seconds."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from pytest_termrl.training.sft import lora_config  # noqa: E402
from pytest_termrl.training.embedded.sft_gguf import (  # noqa: E402
    GgufSftOptions,
    block_linear_names,
    data_vocabulary,
    loss_at_labels,
    top_layers,
)

VOCAB = 320


def tiny_gemma(layers: int = 4, softcap: float | None = 30.0):
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(0)
    config = Gemma3TextConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=layers,
                              num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=256,
                              sliding_window=16, final_logit_softcapping=softcap)
    return Gemma3ForCausalLM(config).eval()


def example(seed: int = 1, length: int = 40, prompt: int = 25):
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, 200, (1, length), generator=generator)
    labels = ids.clone()
    labels[:, :prompt] = -100
    return {"input_ids": ids, "labels": labels}


def reference_loss(model, inputs) -> float:
    """Cross-entropy from the model's own full logits, the textbook way."""
    logits = model(input_ids=inputs["input_ids"]).logits[0, :-1]
    targets = inputs["labels"][0, 1:]
    keep = targets != -100
    return float(torch.nn.functional.cross_entropy(logits[keep], targets[keep], reduction="sum"))


@pytest.mark.parametrize("softcap", [30.0, None])
def test_the_whole_vocabulary_as_the_loss_vocabulary_is_the_full_loss(softcap):
    model, inputs = tiny_gemma(softcap=softcap), example()
    with torch.no_grad():
        full, count = loss_at_labels(model, inputs)
        restricted, count2 = loss_at_labels(model, inputs, torch.arange(VOCAB))
    assert count == count2 == 15
    assert float(full) == pytest.approx(reference_loss(model, inputs), rel=1e-5)
    assert float(restricted) == pytest.approx(float(full), rel=1e-5)


def test_a_smaller_loss_vocabulary_drops_terms_of_the_normaliser_only():
    model, inputs = tiny_gemma(), example()
    vocab = data_vocabulary([{"input_ids": inputs["input_ids"][0].tolist()}])
    assert vocab.tolist() == sorted(set(inputs["input_ids"][0].tolist()))
    with torch.no_grad():
        full, _ = loss_at_labels(model, inputs)
        restricted, _ = loss_at_labels(model, inputs, vocab)
        logits = model(input_ids=inputs["input_ids"]).logits[0, :-1]
    targets = inputs["labels"][0, 1:]
    keep = targets != -100
    expected = torch.nn.functional.cross_entropy(logits[keep][:, vocab], torch.searchsorted(vocab, targets[keep]), reduction="sum")
    assert float(restricted) == pytest.approx(float(expected), rel=1e-5)
    assert float(restricted) < float(full)


def test_positions_of_turn_ending_labels_take_the_whole_vocabulary():
    """With ``full_ids``, a position whose label is among them is scored against every token
    (the textbook term), the others against the loss vocabulary only; a full-only label need
    not be in the loss vocabulary at all."""
    model, inputs = tiny_gemma(), example()
    targets = inputs["labels"][0, 1:]
    keep = targets != -100
    ending = int(targets[keep][3])
    vocab = torch.tensor(sorted(set(inputs["input_ids"][0].tolist()) - {ending}))
    full_ids = torch.tensor([ending])
    with torch.no_grad():
        mixed, count = loss_at_labels(model, inputs, vocab, full_ids)
        logits = model(input_ids=inputs["input_ids"]).logits[0, :-1][keep]
    labels = targets[keep]
    at_end = labels == ending
    ce = torch.nn.functional.cross_entropy
    expected = ce(logits[at_end], labels[at_end], reduction="sum") + ce(logits[~at_end][:, vocab], torch.searchsorted(vocab, labels[~at_end]), reduction="sum")
    assert count == 15 and int(at_end.sum()) >= 1
    assert float(mixed) == pytest.approx(float(expected), rel=1e-5)
    with torch.no_grad():  # every label full: the full loss; none: the restricted one
        assert float(loss_at_labels(model, inputs, vocab, torch.tensor(sorted(set(labels.tolist()))))[0]) == pytest.approx(float(loss_at_labels(model, inputs)[0]), rel=1e-5)
    with pytest.raises(ValueError, match="not in the loss vocabulary"):
        loss_at_labels(model, inputs, vocab)


def test_the_full_softmax_tokens_must_be_single_tokens():
    from pytest_termrl.serving.embedded import ensure_embedded_model
    from pytest_termrl.training.embedded.render import ServingTokenizer
    from pytest_termrl.training.embedded.sft_gguf import full_softmax_ids

    tokenizer = ServingTokenizer(ensure_embedded_model())
    assert full_softmax_ids(tokenizer, ["<end_of_turn>"]).tolist() == [106]
    assert full_softmax_ids(tokenizer, []) is None
    with pytest.raises(ValueError, match="--loss-full-tokens '</tool_call>': expected one token"):
        full_softmax_ids(tokenizer, ["</tool_call>"])


def test_a_label_outside_the_loss_vocabulary_is_refused():
    model, inputs = tiny_gemma(), example()
    with pytest.raises(ValueError, match="not in the loss vocabulary"):
        loss_at_labels(model, inputs, torch.tensor([1, 2, 3]))


def test_lora_on_the_top_blocks_only_trains_those_blocks():
    from peft import get_peft_model

    model = tiny_gemma(layers=4)
    names = block_linear_names(model)
    assert names == ["down_proj", "gate_proj", "k_proj", "o_proj", "q_proj", "up_proj", "v_proj"]
    peft = get_peft_model(model, lora_config(4, 8, 0.0, names, top_layers(4, 2)))
    trained = {n for n, p in peft.named_parameters() if p.requires_grad}
    assert trained and all(".layers.2." in n or ".layers.3." in n for n in trained)
    assert len(trained) == 2 * 2 * len(names)  # A and B, per module, per block
    inputs = example()
    total, count = loss_at_labels(peft, inputs, data_vocabulary([{"input_ids": inputs["input_ids"][0].tolist()}]))
    (total / count).backward()
    grads = [p.grad for n, p in peft.named_parameters() if p.requires_grad and "lora_B" in n]
    assert all(g is not None for g in grads) and any(float(g.abs().sum()) > 0 for g in grads)


def test_layer_counts_and_loss_vocabulary_are_checked():
    assert top_layers(18, 0) is None
    assert top_layers(18, 9) == list(range(9, 18))
    for bad in (-1, 19):
        with pytest.raises(ValueError, match="--lora-layers"):
            top_layers(18, bad)
    with pytest.raises(ValueError, match="--loss-vocab 'some'"):
        GgufSftOptions(data=["x"], out="y", loss_vocab="some").check()
