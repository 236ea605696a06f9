"""The rendering contract: a training example is the token sequence the embedded server builds.

The server side is llama-cpp-python's own code path, in this process: the request goes
through the server's request model (``CreateChatCompletionRequest``, dumped as its route
dumps it), then ``Llama.create_chat_completion`` with the chat handler ``embedded serve``
registers, then ``create_completion``; the ids are taken where that path hands them to
``generate`` (the model is loaded vocabulary-only, so nothing is evaluated). The training
side is :mod:`pytest_termrl.training.embedded.render`.
"""

from __future__ import annotations

import json

import pytest

from pytest_termrl.agents.conversation import tool_schemas
from pytest_termrl.serving.embedded import CHAT_FORMAT, ensure_embedded_model, install_chat_format
from pytest_termrl.training.data import chat_messages
from pytest_termrl.training.embedded.render import RenderError, ServingTokenizer, render_example, serving_segments

SYSTEM = "You are a careful shell agent. Quote \"paths\" & check <things> first; don't guess."
TASK = "Count the ERROR lines in logs/app.log and write the number to out/errors.txt (ünïcode: café)."


def call(i: int, command: str) -> dict:
    return {"id": f"call_{i}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}


CONVERSATION = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": TASK},
    {"role": "assistant", "content": "", "tool_calls": [call(1, "cat logs/app.log | head -n 3")]},
    {"role": "tool", "tool_call_id": "call_1", "content": "cat: logs/app.log: Permission denied\n[exit code 1]"},
    {"role": "assistant", "content": "", "tool_calls": [call(2, "chmod u+r logs/app.log && grep -c '^ERROR' logs/app.log > out/errors.txt")]},
    {"role": "tool", "tool_call_id": "call_2", "content": "[exit code 0]"},
    {"role": "assistant", "content": "Done: out/errors.txt holds the count <3>."},
]


class _Prompt(Exception):
    """Raised where the server's code path hands the prompt ids to generation."""


@pytest.fixture(scope="module")
def server_llama():
    from llama_cpp import Llama

    install_chat_format()  # what `embedded serve` does before the server starts
    llama = Llama(model_path=str(ensure_embedded_model()), vocab_only=True, verbose=False,
                  chat_format=CHAT_FORMAT, n_ctx=4096)

    def generate(tokens, **kwargs):
        raise _Prompt(list(tokens))

    llama.generate = generate
    return llama


def server_prompt_ids(llama, messages: list[dict]) -> list[int]:
    """The ids the running server would feed the model for this request (the openai agent's)."""
    from llama_cpp.server.types import CreateChatCompletionRequest

    body = CreateChatCompletionRequest(model="gemma-3-270m-q4_k_m", messages=messages, tools=tool_schemas(),
                                       tool_choice="auto", max_tokens=256)
    kwargs = body.model_dump(exclude={"n", "logit_bias_type", "user", "min_tokens"})  # as the server's route does
    with pytest.raises(_Prompt) as got:
        llama.create_chat_completion(**kwargs)
    return got.value.args[0]


@pytest.fixture(scope="module")
def tokenizer():
    return ServingTokenizer(ensure_embedded_model())


def test_rendered_example_is_the_servers_prompt_token_for_token(server_llama, tokenizer):
    example = render_example(CONVERSATION, tool_schemas(), tokenizer)
    # The whole conversation, as the server renders it when asked for the next turn.
    full = server_prompt_ids(server_llama, CONVERSATION)
    assert full[: len(example.input_ids)] == example.input_ids
    assert tokenizer.llama.detokenize(full[len(example.input_ids):], special=True) == b"```bash\n"
    # Every assistant turn: what the server fed the model right before it is a prefix of the example.
    starts = []
    for k, message in enumerate(CONVERSATION):
        if message["role"] != "assistant":
            continue
        prompt = server_prompt_ids(server_llama, CONVERSATION[:k])
        assert example.input_ids[: len(prompt)] == prompt, f"turn {k}"
        assert example.assistant_masks[len(prompt) - 1] == 0 and example.assistant_masks[len(prompt)] == 1, f"turn {k}"
        starts.append(len(prompt))
    assert len(starts) == 3


def test_loss_covers_assistant_turns_only(tokenizer):
    example = render_example(CONVERSATION, tool_schemas(), tokenizer)
    trained = [t for t, m in zip(example.input_ids, example.assistant_masks) if m]
    text = tokenizer.llama.detokenize(trained, special=True).decode()
    assert text == (
        "cat logs/app.log | head -n 3\n```<end_of_turn>"
        "chmod u+r logs/app.log && grep -c '^ERROR' logs/app.log > out/errors.txt\n```<end_of_turn>"
        "# Done: out/errors.txt holds the count <3>.\nexit\n```<end_of_turn>"
    )
    for secret in ("careful shell agent", "ERROR lines", "Permission denied", "exit code"):
        assert secret not in text
    assert example.labels == [t if m else -100 for t, m in zip(example.input_ids, example.assistant_masks)]
    assert example.labels[0] == -100 and sum(example.assistant_masks) == len(trained)


def test_the_model_reads_its_commands_output(server_llama, tokenizer):
    """Every tool result reaches the model, in the turn after the call, in training as in serving."""
    ids = server_prompt_ids(server_llama, CONVERSATION)
    served = tokenizer.llama.detokenize(ids, special=True).decode()
    assert "```text\ncat: logs/app.log: Permission denied\n[exit code 1]\n```" in served
    assert served.index("Permission denied") > served.index("cat logs/app.log | head -n 3")
    example = render_example(CONVERSATION, tool_schemas(), tokenizer)
    assert "Permission denied" in example.text


def test_the_servers_reply_becomes_the_agents_tool_call():
    """What the model writes is parsed back into the call the agent runs, the command verbatim."""
    from pytest_termrl.serving import chat_format

    command = "python3 - <<'PY'\nprint(\"a\\tb\", {'k': 1})\nPY\n"
    text = chat_format.segments([{"role": "user", "content": "x"}, {"role": "assistant", "content": "Fixing.", "tool_calls": [call(1, command)]}], tool_schemas())[-2].text
    reply = chat_format.parse_reply(text.removesuffix(chat_format.END), tool_schemas())
    # the model's prose rides in the command as a comment, which the shell skips
    assert reply.content == "" and [json.loads(c["arguments"]) for c in reply.tool_calls] == [{"command": "# Fixing.\n" + command}]
    # a block the token limit cut before its fence is no call
    assert chat_format.parse_reply("rm -rf /home/us", tool_schemas()).tool_calls == []
    # Generation stops at the closing fence (llama.cpp drops it): closed again, then parsed.
    stopped = text.removesuffix(chat_format.END).removesuffix(chat_format.CALL_CLOSE)
    assert chat_format.close_stopped_call(stopped) == text.removesuffix(chat_format.END)
    done = chat_format.parse_reply(chat_format.close_stopped_call("# All done.\nexit"), tool_schemas())
    assert (done.content, done.tool_calls) == ("All done.", [])
    assert chat_format.parse_reply(chat_format.close_stopped_call("  "), tool_schemas()).tool_calls == []
    two = f"ls{chat_format.CALL_CLOSE}\n{chat_format.CALL_OPEN}pwd{chat_format.CALL_CLOSE}"
    assert [json.loads(c["arguments"]) for c in chat_format.parse_reply(two, tool_schemas()).tool_calls] == [{"command": "ls"}]


def test_sft_rows_of_the_data_command_render_as_the_server_sees_them(server_llama, tokenizer):
    """``training data`` writes arguments as objects; they render as the agent's JSON string did."""
    transcript = [dict(m) for m in CONVERSATION]
    transcript[2] = {"role": "assistant", "content": None, "tool_calls": [call(1, "cat logs/app.log | head -n 3")]}
    messages = chat_messages(transcript)
    assert isinstance(messages[2]["tool_calls"][0]["function"]["arguments"], dict)
    example = render_example(messages, json.dumps(tool_schemas()), tokenizer)
    full = server_prompt_ids(server_llama, CONVERSATION)
    assert full[: len(example.input_ids)] == example.input_ids


def test_unrenderable_conversations_are_refused_by_name(tokenizer):
    with pytest.raises(RenderError, match=r"messages\[1\]\.role: expected system, user, assistant or tool, got 'function'"):
        render_example([CONVERSATION[0], {"role": "function", "content": "x"}], tool_schemas(), tokenizer)
    bad = {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "function": {"name": "bash", "arguments": 3}}]}
    with pytest.raises(RenderError, match=r"messages\[2\]\.tool_calls\[0\]\.function\.arguments: expected a JSON object, got int"):
        render_example([*CONVERSATION[:2], bad], tool_schemas(), tokenizer)
    with pytest.raises(RenderError, match="no assistant text to learn"):
        render_example(CONVERSATION[:2], tool_schemas(), tokenizer)
