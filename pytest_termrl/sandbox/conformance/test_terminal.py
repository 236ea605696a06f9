"""The terminal session inside a real sandbox: programs that read keys, Ctrl-C, waits that end with the prompt,
the screen as plain text, and a session that ended starting anew.

For a backend whose sandboxes declare ``has_terminal``; a backend without one is skipped here.
"""

from __future__ import annotations

import re

import pytest

from pytest_termrl.sandbox.base import KeystrokeBatch
from pytest_termrl.sandbox.terminal import RESTARTED

from .fixtures import make_sandbox, termrl_backend_factory  # noqa: F401  (fixtures)

PROMPT = re.compile(r"[$#]$")


@pytest.fixture
def sandbox(make_sandbox):
    box = make_sandbox("terminal")
    if not box.has_terminal:
        pytest.skip(f"the {box.backend_name} sandbox declares no terminal session")
    assert box.run("true").exit_code == 0
    return box


def keys(sandbox, *typed: str, wait: float = 10.0, settle: bool = True):
    return sandbox.send_keys(KeystrokeBatch(tuple(typed), max_wait_s=wait, settle=settle))


def last_line(result) -> str:
    return result.output.splitlines()[-1] if result.output else ""


def test_a_python_repl_answers_and_ctrl_d_returns_to_the_shell(sandbox):
    started = keys(sandbox, "python3", "Enter")
    assert last_line(started) == ">>>", started.output
    answer = keys(sandbox, "1+1", "Enter")
    assert answer.output.splitlines()[-2:] == ["2", ">>>"], answer.output
    back = keys(sandbox, "C-d")
    assert PROMPT.search(last_line(back)), back.output
    assert back.exit_code is None and not back.timed_out


def test_ctrl_c_stops_a_command_and_the_prompt_is_back_at_once(sandbox):
    keys(sandbox, "sleep 100", "Enter", wait=2)
    interrupted = keys(sandbox, "C-c", wait=10)
    assert interrupted.duration_s < 2, interrupted
    assert PROMPT.search(last_line(interrupted)) and "^C" in interrupted.output, interrupted.output
    assert "typed after" in keys(sandbox, "echo typed after", "Enter").output


def test_a_heredoc_typed_over_several_batches_writes_its_lines(sandbox):
    keys(sandbox, "cat > f.txt <<EOF", "Enter")
    keys(sandbox, "first line\n")
    keys(sandbox, "second", " line", "Enter")
    done = keys(sandbox, "EOF", "Enter")
    assert PROMPT.search(last_line(done)), done.output
    assert sandbox.run("cat f.txt").output == "first line\nsecond line\n"


def test_the_screen_is_plain_text_of_its_size_and_the_session_starts_where_the_shell_is(sandbox):
    sandbox.run("mkdir -p work && cd work")
    shown = keys(sandbox, r"printf '\033[1;31mred\033[0m \033]0;title\007plain\n'; ls --color=always /; echo $PWD $TERM", "Enter")
    lines = shown.output.splitlines()
    assert "red plain" in lines and "/home/user/work xterm" in lines, shown.output
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", shown.output), repr(shown.output)
    assert keys(sandbox, "stty size", "Enter").output.splitlines()[-2] == "40 160"


def test_the_session_has_the_variables_the_agents_shell_exported_and_not_its_own_ones(sandbox):
    sandbox.run("export GREETING='hello there' MULTI=$'two\\nlines'; LOCAL_ONLY=kept-in-the-shell")
    shown = keys(sandbox, 'echo "[$GREETING] [${LOCAL_ONLY:-unset}]"; printf "%s|" "$MULTI"; echo', "Enter")
    lines = shown.output.splitlines()
    assert "[hello there] [unset]" in lines and lines[lines.index("two") + 1] == "lines|", shown.output


def test_a_settled_wait_ends_when_the_prompt_is_back_and_an_unsettled_one_waits_it_all(sandbox):
    keys(sandbox, "true", "Enter")  # the session starts
    quick = keys(sandbox, "echo hi", "Enter", wait=10)
    assert "hi" in quick.output.splitlines() and not quick.timed_out
    assert quick.duration_s < 1, "the prompt's marker ends the wait, well before the quiet moment"
    whole = keys(sandbox, "echo again", "Enter", wait=1.5, settle=False)
    assert whole.duration_s >= 1.5 and not whole.timed_out and "again" in whole.output


def test_a_session_that_ended_is_started_anew_and_says_so(sandbox):
    keys(sandbox, "cd /tmp", "Enter")
    ended = keys(sandbox, "exit", "Enter")
    assert ended.duration_s < 2 and RESTARTED not in ended.output
    again = keys(sandbox, "echo $PWD", "Enter")
    assert again.output.splitlines()[0] == RESTARTED
    assert "/home/user" in again.output.splitlines()[-2], "a new session starts where the persistent shell is"
    sandbox.run("sleep 5", timeout_s=0.5)  # a timeout kills every process, the terminal's too
    after_kill = keys(sandbox, "echo alive", "Enter")
    assert after_kill.output.startswith(RESTARTED + "\n") and "alive" in after_kill.output
