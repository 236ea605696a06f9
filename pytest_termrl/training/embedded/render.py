"""Render a conversation into token ids exactly as the embedded llama.cpp server builds its prompt.

The embedded server (``agents/embedded.py``) renders every request with the project's own
chat format, :mod:`pytest_termrl.serving.chat_format`; this module renders a training
example with the same function, so the two cannot drift apart in text. The ids are the
server's too: BOS, then llama.cpp's tokenizer over the whole text with special tokens
parsed (``tests/unit/training/test_training_render.py`` compares them with what the server's own code
path hands to generation). The loss mask covers what the model generates in an assistant
turn (its text and tool calls, up to and including ``<end_of_turn>``), never the prompt,
the task or a tool's output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ...serving import chat_format
from ..data import TrainingDataError


class RenderError(TrainingDataError):
    """A conversation the serving format cannot render as asked (names the message and field)."""


class Tokenizer(Protocol):
    """What rendering needs of a tokenizer: the server's ids and each id's bytes."""

    def encode(self, text: str) -> list[int]: ...

    def piece(self, token: int) -> bytes: ...


@dataclass
class RenderedExample:
    """One training example: token ids, labels (-100 outside assistant turns) and the mask."""

    input_ids: list[int]
    assistant_masks: list[int]
    text: str = ""
    meta: dict = field(default_factory=dict)

    @property
    def labels(self) -> list[int]:
        return [t if m else -100 for t, m in zip(self.input_ids, self.assistant_masks)]

    def to_dict(self) -> dict:
        return {"input_ids": self.input_ids, "assistant_masks": self.assistant_masks, "labels": self.labels, "text": self.text, "meta": self.meta}

    @classmethod
    def from_dict(cls, data: dict) -> "RenderedExample":
        return cls(list(data["input_ids"]), list(data["assistant_masks"]), data.get("text", ""), dict(data.get("meta") or {}))


def serving_segments(messages: list[dict], tools: list[dict] | str) -> list[chat_format.Segment]:
    """The conversation as the server's prompt text, cut into prompt and trainable segments."""
    tool_list: list[dict] = json.loads(tools) if isinstance(tools, str) else tools
    if not tool_list:
        raise RenderError("tools: the openai agent always sends its tools; expected at least one")
    try:
        return chat_format.segments(messages, tool_list)
    except chat_format.ChatFormatError as exc:
        raise RenderError(str(exc)) from None


def render_example(messages: list[dict], tools: list[dict] | str, tokenizer: Tokenizer, meta: dict | None = None) -> RenderedExample:
    """Token ids of the whole conversation (as the server tokenizes its prompt) and the mask.

    A token is trained when its first byte lies in an assistant turn's generated text.
    """
    segments = serving_segments(messages, tools)
    text = "".join(s.text for s in segments)
    ids = tokenizer.encode(text)
    spans, start = [], 0
    for s in segments:
        size = len(s.text.encode("utf-8"))
        if s.trainable:
            spans.append((start, start + size))
        start += size
    mask, offset, pieces = [], 0, bytearray()
    for position, token in enumerate(ids):
        piece = tokenizer.piece(token)
        mask.append(int(bool(piece) and any(a <= offset < b for a, b in spans)))
        offset += len(piece)
        pieces += piece
    if bytes(pieces) != text.encode("utf-8"):
        raise RenderError("the tokenizer's pieces do not spell the rendered text; cannot place the loss mask")
    if not any(mask):
        raise RenderError("the conversation has no assistant text to learn")
    return RenderedExample(ids, mask, text, dict(meta or {}))


class ServingTokenizer:
    """llama.cpp's own tokenizer for a GGUF (vocabulary only, loads in about a second)."""

    def __init__(self, gguf_path: Path | str) -> None:
        from llama_cpp import Llama

        self.path = str(gguf_path)
        self.llama = Llama(model_path=self.path, vocab_only=True, verbose=False)

    def encode(self, text: str) -> list[int]:
        """BOS, then the text with special tokens parsed: what ``create_completion`` feeds the model."""
        bos = [self.llama.token_bos()] if self.llama._model.add_bos_token() else []
        return bos + self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def piece(self, token: int) -> bytes:
        """The token's bytes (the BOS, which the text does not spell, has none)."""
        if token == self.llama.token_bos():
            return b""
        return self.llama.detokenize([token], special=True)


def render_rows(rows: list[dict], tokenizer: Tokenizer) -> list[RenderedExample]:
    """SFT rows (``messages``, ``tools`` as ``training data`` writes them) rendered for training."""
    out = []
    for row in rows:
        meta = {k: row[k] for k in ("task_id", "family", "episode_id", "source") if k in row}
        out.append(render_example(row["messages"], row["tools"], tokenizer, meta))
    return out
