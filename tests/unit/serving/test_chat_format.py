"""The embedded chat format reads back every tool-call form it renders, and reads a console transcript as one."""

from __future__ import annotations

import json

import pytest

from pytest_termrl.agents.conversation import tool_schemas
from pytest_termrl.serving import chat_format as cf

TOOLS = tool_schemas()
TASK = [{"role": "system", "content": "Be careful."}, {"role": "user", "content": "Count the lines."}]


def call(command: str) -> dict:
    return {"id": "c", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}


def generated(message: dict) -> str:
    """What the model writes for ``message``: its trainable piece, as the server receives it (the END token aside)."""
    (piece,) = [s.text for s in cf.segments([*TASK, message], TOOLS) if s.trainable]
    return piece.removesuffix(cf.END)


@pytest.mark.parametrize("message, content, commands", [
    ({"role": "assistant", "content": "", "tool_calls": [call("wc -l a.txt")]}, "", ["wc -l a.txt"]),
    ({"role": "assistant", "content": None, "tool_calls": [call("cat <<'EOF' > f\n```\nEOF")]}, "", None),
    ({"role": "assistant", "content": "Counting.", "tool_calls": [call("wc -l a.txt")]}, "", ["# Counting.\nwc -l a.txt"]),
    ({"role": "assistant", "content": "", "tool_calls": [call("python3 - <<'PY'\nprint(1)\nPY\n")]}, "", ["python3 - <<'PY'\nprint(1)\nPY\n"]),
    ({"role": "assistant", "content": "Done: 3 lines."}, "Done: 3 lines.", []),
    ({"role": "assistant", "content": ""}, "", []),
    ({"role": "assistant", "content": "", "tool_calls": [call("ls"), call("pwd")]}, "", ["ls"]),
], ids=["call", "fence-inside", "prose-and-call", "script", "done-with-prose", "done", "two-calls"])
def test_every_rendered_turn_reads_back_as_the_agent_gets_it(message, content, commands):
    reply = cf.parse_reply(generated(message), TOOLS)
    if commands is None:  # a command holding a line that is a fence: cut there, the one form the format cannot carry
        assert [json.loads(c["arguments"])["command"] for c in reply.tool_calls] == ["cat <<'EOF' > f"]
        return
    assert reply.content == content
    assert [json.loads(c["arguments"])["command"] for c in reply.tool_calls] == commands
    assert all(c["name"] == "bash" for c in reply.tool_calls)


def test_the_prompt_ends_inside_the_shells_block_and_shows_every_output():
    messages = [*TASK, {"role": "assistant", "content": "", "tool_calls": [call("wc -l a.txt")]},
                {"role": "tool", "tool_call_id": "c", "content": "3 a.txt\n[exit code: 0]"}]
    prompt = cf.render_prompt(messages, TOOLS)
    assert prompt.startswith("Be careful.\n\n") and "## Task\n\nCount the lines.\n\n## Terminal session\n\n" in prompt
    assert prompt.endswith("```bash\nwc -l a.txt\n```<end_of_turn>\n```text\n3 a.txt\n[exit code: 0]\n```\n```bash\n")


def test_a_console_transcript_runs_its_prompted_lines_only():
    reply = cf.parse_reply("$ cat grades.txt\nstudent: ann\n$ cat <<EOF > b\n> x\n> EOF\n```", TOOLS)
    assert json.loads(reply.tool_calls[0]["arguments"]) == {"command": "cat grades.txt\ncat <<EOF > b\nx\nEOF"}
    # a dollar sign that is not a prompt stays
    assert json.loads(cf.parse_reply("echo $HOME\n```", TOOLS).tool_calls[0]["arguments"]) == {"command": "echo $HOME"}


def test_a_block_cut_by_the_token_limit_is_no_call_and_a_stopped_one_is():
    assert cf.parse_reply("rm -rf /home/us", TOOLS).tool_calls == []
    assert cf.parse_reply(cf.close_stopped_call("ls -la"), TOOLS).tool_calls[0]["arguments"] == json.dumps({"command": "ls -la"})


def test_what_the_format_cannot_render_is_named():
    with pytest.raises(cf.ChatFormatError, match=r"messages\[1\]\.role: expected system, user, assistant or tool, got 'function'"):
        cf.segments([TASK[0], {"role": "function", "content": "x"}], TOOLS)
    with pytest.raises(cf.ChatFormatError, match="offers one shell tool; got 2 tools"):
        cf.render_prompt(TASK, TOOLS * 2)
    with pytest.raises(cf.ChatFormatError, match="messages: the conversation has no user message"):
        cf.segments(TASK[:1], TOOLS)
