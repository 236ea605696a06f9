"""The embedded server's chat format behind transformers' tokenizer interface, for TRL's GRPO.

TRL's GRPOTrainer renders prompts and tool results with ``tokenizer.apply_chat_template``,
reads each generated turn with ``tokenizer.parse_response`` and stops a turn at the
tokenizer's EOS. The GGUF's tokenizer carries no chat template, and a Jinja copy of
:mod:`..agents.chat_format` could drift from what the server does; so the format itself goes
behind those two methods of the tokenizer object (:func:`use_serving_chat_format`): text
from ``chat_format.segments`` / ``render_prompt``, ids from llama.cpp's own tokenizer, as
the server builds its prompt, and replies read by ``chat_format.parse_reply``.

The server stops a turn at a block's closing fence (``chat_format.STOP``) and the next prompt then
shows the call closed and the turn ended. Generation here does the same by forcing
``<end_of_turn>`` right after a closing tag (:func:`end_turn_after_call`), so a rollout's
token sequence is the one the served model sees.
"""

from __future__ import annotations

import json
import types

from ...serving import chat_format

REFUSING_TEMPLATE = (
    "{{ raise_exception('this tokenizer renders with pytest_termrl.serving.chat_format; "
    "call its apply_chat_template, not a Jinja template') }}"
)
"""Stands in for ``chat_template`` (TRL requires one to be set): any code that would render
with Jinja instead of the installed method fails loudly rather than render another format."""


def render(conversation: list[dict], tools: list[dict] | None, add_generation_prompt: bool) -> str:
    """The conversation's text, as the embedded server builds it."""
    try:
        if add_generation_prompt:
            text = chat_format.render_prompt(conversation, tools)
        else:
            text = "".join(s.text for s in chat_format.segments(conversation, tools))
    except chat_format.ChatFormatError as exc:
        # TRL's own probes (a template that rejects a conversation) expect Jinja's error type.
        from jinja2 import TemplateError

        raise TemplateError(str(exc)) from None
    return text


def reply_message(text: str, tools: list[dict] | None) -> dict:
    """A generated turn as TRL's assistant message: text before the call, and the one call.

    The harness runs one call a turn (the server stops at the first closing tag), so only
    the first block counts. Arguments come back as a dict, as TRL passes them to the tool.
    """
    for marker in (chat_format.END, "<eos>"):
        cut = text.find(marker)
        if cut >= 0:
            text = text[:cut]
    reply = chat_format.parse_reply(text, tools)
    message: dict = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        call = reply.tool_calls[0]
        arguments = json.loads(call["arguments"])  # a ValueError makes TRL read the turn as text
        if not isinstance(arguments, dict):
            raise ValueError(f"tool call arguments: expected a JSON object, got {call['arguments'][:80]!r}")
        message["tool_calls"] = [{"type": "function", "function": {"name": call["name"], "arguments": arguments}}]
    return message


def use_serving_chat_format(tokenizer, serving):
    """Make ``tokenizer`` (transformers', for the GGUF) render and parse as the embedded server does.

    ``serving``: a :class:`.render.ServingTokenizer` of the same GGUF (the ids). Sets EOS to
    ``<end_of_turn>``, Gemma's end of a turn (TRL stops generation there and cuts the tool
    suffix after it), and marks the tokenizer as having a response parser so TRL uses
    ``parse_response`` rather than look one up by template.
    """

    def apply_chat_template(self, conversation, tools=None, documents=None, chat_template=None, add_generation_prompt=False,
                            continue_final_message=False, tokenize=True, padding=False, truncation=False, max_length=None,
                            return_tensors=None, return_dict=True, return_assistant_tokens_mask=False, tokenizer_kwargs=None, **kwargs):
        unsupported = {"documents": documents, "continue_final_message": continue_final_message, "padding": padding,
                       "truncation": truncation, "return_tensors": return_tensors, "return_assistant_tokens_mask": return_assistant_tokens_mask}
        asked = sorted(name for name, value in unsupported.items() if value)
        if asked:
            raise ValueError(f"apply_chat_template({', '.join(asked)}=...): the serving chat format does not support it")
        batched = bool(conversation) and isinstance(conversation[0], (list, tuple))
        conversations = conversation if batched else [conversation]
        texts = [render(list(c), tools, add_generation_prompt) for c in conversations]
        if not tokenize:  # TRL's probes and logs ask for text only: no tokenizing then
            return texts if batched else texts[0]
        ids = [serving.encode(text) for text in texts]
        if not return_dict:
            return ids if batched else ids[0]
        from transformers import BatchEncoding

        masks = [[1] * len(x) for x in ids]
        return BatchEncoding({"input_ids": ids if batched else ids[0], "attention_mask": masks if batched else masks[0]})

    def parse_response(self, response, prefix=None, tools=None, **kwargs):
        text = response if isinstance(response, str) else serving_text(serving, list(response))
        return reply_message(text, tools)

    tokenizer.apply_chat_template = types.MethodType(apply_chat_template, tokenizer)
    tokenizer.parse_response = types.MethodType(parse_response, tokenizer)
    tokenizer.chat_template = REFUSING_TEMPLATE
    tokenizer.response_template = {"format": chat_format.FORMAT_NAME}
    tokenizer.eos_token = chat_format.END
    return tokenizer


def serving_text(serving, ids: list[int]) -> str:
    """The text of token ids, special tokens spelled out (llama.cpp's pieces)."""
    return b"".join(serving.piece(int(t)) for t in ids).decode("utf-8", errors="replace")


def end_turn_after_call(serving, end_id: int, window: int = 8):
    """A logits processor that makes ``<end_of_turn>`` the only choice right after a block's closing fence."""
    import torch
    from transformers import LogitsProcessor

    close = chat_format.CALL_CLOSE.encode()
    pieces: dict[int, bytes] = {}

    def piece(token: int) -> bytes:
        if token not in pieces:
            pieces[token] = serving.piece(token)
        return pieces[token]

    class EndTurnAfterCall(LogitsProcessor):
        def __call__(self, input_ids, scores):
            for row in range(input_ids.shape[0]):
                tail = b"".join(piece(int(t)) for t in input_ids[row, -window:].tolist())
                if tail.endswith(close):
                    scores[row, :] = -torch.inf
                    scores[row, end_id] = 0.0
            return scores

    return EndTurnAfterCall()


def stop_turns_at_calls(model, processor) -> None:
    """Every ``model.generate`` call (TRL's, on this very object) also applies ``processor``."""
    from transformers import LogitsProcessorList

    generate = model.generate

    def generate_with_stop(*args, **kwargs):
        processors = LogitsProcessorList(kwargs.pop("logits_processor", None) or [])
        processors.append(processor)
        return generate(*args, logits_processor=processors, **kwargs)

    model.generate = generate_with_stop
