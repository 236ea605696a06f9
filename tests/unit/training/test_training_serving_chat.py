"""GRPO on the embedded model: TRL renders, splices and parses turns exactly as the embedded server does.

The tokenizer is the bundled GGUF's (transformers' and llama.cpp's); TRL's own code does the
probing, the tool-suffix splicing and the reply parsing, so what is checked is what the
trainer will do. A tiny random Gemma 3 with the real vocabulary size stands in for the model
where generation is checked.
"""

from __future__ import annotations

import types

import pytest

torch = pytest.importorskip("torch")
trl_utils = pytest.importorskip("trl.chat_template_utils")

from pytest_termrl.serving import chat_format  # noqa: E402
from pytest_termrl.agents.conversation import tool_schemas  # noqa: E402
from pytest_termrl.serving.embedded import ensure_embedded_model  # noqa: E402
from pytest_termrl.training.embedded.render import ServingTokenizer  # noqa: E402
from pytest_termrl.training.embedded.serving_chat import (  # noqa: E402
    end_turn_after_call,
    reply_message,
    stop_turns_at_calls,
    use_serving_chat_format,
)
from pytest_termrl.training.embedded.sft_gguf import hf_tokenizer  # noqa: E402

TOOLS = tool_schemas()
SCRIPT = "python3 - <<'PY'\nprint(\"a \\\"quoted\\\" path\")\nPY"


def call(command: str) -> dict:
    return {"type": "function", "function": {"name": "bash", "arguments": {"command": command}}}


def start() -> list[dict]:
    return [{"role": "system", "content": "You are careful."}, {"role": "user", "content": "Count the lines of /home/user/a.txt."}]


@pytest.fixture(scope="module")
def serving():
    return ServingTokenizer(ensure_embedded_model())


@pytest.fixture(scope="module")
def tokenizer(serving):
    return use_serving_chat_format(hf_tokenizer(ensure_embedded_model()), serving)


def test_prompts_are_the_servers_text_and_ids_in_every_calling_convention(tokenizer, serving):
    messages = start()
    text = chat_format.render_prompt(messages, TOOLS)
    ids = serving.encode(text)
    assert tokenizer.apply_chat_template(messages, tools=TOOLS, add_generation_prompt=True, tokenize=False) == text
    assert tokenizer.apply_chat_template(messages, tools=TOOLS, add_generation_prompt=True, return_dict=False) == ids
    batched = tokenizer.apply_chat_template(conversation=[messages], tools=TOOLS, add_generation_prompt=True, tokenize=True, return_dict=True)
    assert batched["input_ids"] == [ids] and batched["attention_mask"] == [[1] * len(ids)]
    assert ids[0] == serving.llama.token_bos() and text.endswith(chat_format.GENERATION_PROMPT)
    # transformers' own tokenizer reads the text the same way (TRL decodes and logs with it)
    assert tokenizer.encode(text) == ids
    with pytest.raises(ValueError, match="return_tensors"):
        tokenizer.apply_chat_template(messages, tools=TOOLS, return_tensors="pt")


def test_trl_accepts_the_format_for_multi_turn_tool_training(tokenizer):
    assert trl_utils.supports_tool_calling(tokenizer)
    assert trl_utils.is_chat_template_prefix_preserving(tokenizer)
    assert tokenizer.eos_token == chat_format.END
    # A Jinja rendering that bypasses the installed method fails instead of rendering something else.
    from jinja2 import TemplateError

    with pytest.raises(TemplateError, match="chat_format"):
        type(tokenizer).apply_chat_template(tokenizer, start(), tokenize=False)


def test_prompt_plus_turns_plus_trls_tool_suffixes_is_the_servers_prompt(tokenizer, serving):
    """TRL builds a rollout by concatenation: prompt ids, each generated turn (ending at
    ``<end_of_turn>``), then the ids of the tool result from a dummy conversation. The whole
    must be the prompt the server would build for the same conversation."""
    from trl import GRPOTrainer

    trainer = types.SimpleNamespace(processing_class=tokenizer, _tokenizer=tokenizer, chat_template=None, _is_vlm=False, chat_template_kwargs={})
    messages = start()
    ids = tokenizer.apply_chat_template(messages, tools=TOOLS, add_generation_prompt=True, return_dict=False)
    for command, output in (("wc -l /home/user/a.txt", "3 /home/user/a.txt\n[exit code: 0]"), (SCRIPT, "a \"quoted\" path\n[exit code: 0]")):
        turn = serving.encode(chat_format.call_text("bash", {"command": command}, {"bash": TOOLS[0]}, "t") + chat_format.CALL_CLOSE + chat_format.END)[1:]
        message = tokenizer.parse_response(turn, prefix=ids, tools=TOOLS)
        assert message["tool_calls"] == [call(command)]
        tool = [{"role": "tool", "name": "bash", "content": output}]
        ids = ids + turn + GRPOTrainer._get_tool_suffix_ids(trainer, tool)
        messages = messages + [{"role": "assistant", "content": "", "tool_calls": [call(command)]}] + tool
        assert ids == serving.encode(chat_format.render_prompt(messages, TOOLS))


def test_replies_are_read_as_the_agent_reads_them(tokenizer, serving):
    def parse(text: str) -> dict:
        return trl_utils.parse_response(tokenizer, serving.encode(text)[1:], prefix=[2], tools=TOOLS)

    end = chat_format.CALL_CLOSE + chat_format.END
    assert parse(f"{SCRIPT}{end}") == {"role": "assistant", "content": "", "tool_calls": [call(SCRIPT)]}
    # prose as comments rides along in the command, which the shell ignores
    assert parse(f"# Checking.\nls{end}")["tool_calls"] == [call("# Checking.\nls")]
    assert parse(f"# Done.\nexit{end}") == {"role": "assistant", "content": "Done."}
    # cut off by the length limit inside a call: no call is run (the harness's rule too)
    assert "tool_calls" not in parse("rm -rf /home/us")
    # a second block in one turn is not run: the server stops at the first
    assert parse(f"ls{chat_format.CALL_CLOSE}\n{chat_format.CALL_OPEN}pwd{end}")["tool_calls"] == [call("ls")]
    # a tool this format cannot offer (JSON arguments): TRL reads the turn as text (its fallback)
    json_tool = [{"type": "function", "function": {"name": "edit", "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "n": {"type": "integer"}}}}}]
    with pytest.raises(ValueError):
        reply_message(f"not json{chat_format.CALL_CLOSE}", json_tool)
    fallback = trl_utils.parse_response(tokenizer, serving.encode(f"not json{chat_format.CALL_CLOSE}")[1:], prefix=[2], tools=json_tool)
    assert "tool_calls" not in fallback and "not json" in fallback["content"]


def tiny_gemma(vocab: int):
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(0)
    config = Gemma3TextConfig(vocab_size=vocab, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                              num_key_value_heads=1, head_dim=8, max_position_embeddings=512, sliding_window=16)
    return Gemma3ForCausalLM(config).eval()


def test_generation_ends_the_turn_right_after_a_closing_tag_and_nowhere_else(tokenizer, serving):
    model = tiny_gemma(len(tokenizer))
    end = tokenizer.convert_tokens_to_ids(chat_format.END)
    stop_turns_at_calls(model, end_turn_after_call(serving, end))
    closed = serving.encode(chat_format.render_prompt(start(), TOOLS) + "ls" + chat_format.CALL_CLOSE)
    opened = serving.encode(chat_format.render_prompt(start(), TOOLS) + "ls\n")
    batch = torch.tensor([closed, closed[:1] + opened[1:] + [opened[-1]] * (len(closed) - len(opened))])
    with torch.no_grad():
        out = model.generate(batch, attention_mask=torch.ones_like(batch), max_new_tokens=3, do_sample=True, temperature=1.0,
                             eos_token_id=[end], pad_token_id=tokenizer.pad_token_id)
    assert out[0, len(closed)].item() == end
    # the untouched row samples from the random model: over a 262k vocabulary, never END by chance here
    assert end not in out[1, len(closed):].tolist()
