"""The persistent shell inside a real sandbox: state carries over, timeouts, restarts,
odd input and output, and no process outlives the sandbox."""

from __future__ import annotations

import json
import os
import re
import resource
import time

import pytest

from pytest_termrl.sandbox.base import IsolatedRequest
from pytest_termrl.sandbox.output import REPLACED_OUTPUT
from pytest_termrl.sandbox.shell import TIMEOUT_EXIT_CODE
from pytest_termrl.settings import OUTPUT_CAP_CHARS

from .fixtures import backend, make_sandbox, termrl_backend_factory  # noqa: F401  (fixtures)
from .host import host_pids_appearing, host_pids_with, unique_sleep
from .scripts import dedent

STATE = dedent(
    """
    mkdir -p work/deep && cd work/deep
    COUNT=41
    export EXPORTED=yes
    greet() { echo "hi $1"; }
    declare -a ARR=(one "two words" three)
    declare -A MAP=([k]=v)
    umask 027
    """
)
CHECK = 'pwd; echo $((COUNT + 1)); greet there; echo "${ARR[1]}|${#ARR[@]}"; echo ${MAP[k]}; env | grep ^EXPORTED=; umask'
CHECKED = ["/home/user/work/deep", "42", "hi there", "two words|3", "v", "EXPORTED=yes", "0027"]


@pytest.fixture
def sandbox(make_sandbox):
    box = make_sandbox("shell", output_cap_chars=OUTPUT_CAP_CHARS)
    assert box.run(STATE).exit_code == 0
    return box


def assert_state(sandbox) -> None:
    result = sandbox.run(CHECK)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == CHECKED


def test_state_carries_over(sandbox):
    assert_state(sandbox)
    assert sandbox.run("cd ..; COUNT=1").exit_code == 0
    assert sandbox.run("pwd; echo $COUNT").output.split() == ["/home/user/work", "1"]


def test_exit_code_of_last_command(sandbox):
    assert sandbox.run("false").exit_code == 1
    assert sandbox.run("(exit 7)").exit_code == 7
    assert sandbox.run("true").exit_code == 0


def test_timeout_kills_the_command_and_keeps_state(sandbox):
    started = time.monotonic()
    result = sandbox.run("sleep 60", timeout_s=1)
    assert time.monotonic() - started < 10
    assert result.timed_out and result.exit_code == TIMEOUT_EXIT_CODE == 124
    assert_state(sandbox)


def test_the_rest_of_a_timed_out_command_does_not_run(sandbox):
    # The agent is told the command was killed; nothing of it may run afterwards.
    result = sandbox.run("sleep 60; echo late > ~/late.txt", timeout_s=1)
    assert result.timed_out
    time.sleep(0.3)
    assert not (sandbox.home / "late.txt").exists()
    assert_state(sandbox)


@pytest.mark.parametrize(
    ("command", "timeout_s"),
    [
        ("exit 3", 10),
        ("exec true", 10),
        ("while :; do :; done", 1),
        ("mkfifo /tmp/fifo; read x < /tmp/fifo", 1),
        ("kill -9 $$", 10),
    ],
    ids=["exit", "exec", "builtin_loop", "fifo_read", "kill_self"],
)
def test_shell_killers_come_back_with_state(sandbox, command, timeout_s):
    started = time.monotonic()
    result = sandbox.run(command, timeout_s=timeout_s)
    assert time.monotonic() - started < timeout_s + 8
    assert result.shell_restarted
    assert_state(sandbox)
    # And the restarted shell restarts again.
    assert sandbox.run("exit 1").shell_restarted
    assert_state(sandbox)


@pytest.mark.parametrize("command", ["while :; do :; done", "mkfifo /tmp/fifo; read x < /tmp/fifo"], ids=["builtin_loop", "fifo_read"])
def test_a_wedged_shell_is_a_timeout(sandbox, command):
    result = sandbox.run(command, timeout_s=1)
    assert result.timed_out and result.exit_code == 124 and result.shell_restarted
    assert_state(sandbox)


def test_heredoc(sandbox):
    result = sandbox.run(
        dedent(
            """
            cat > notes.txt <<'EOF'
            literal $COUNT `x`
            EOF
            cat <<EOF
            expanded $COUNT
            EOF
            """
        )
    )
    assert result.exit_code == 0
    assert result.output == "expanded 41\n"
    assert (sandbox.home / "work" / "deep" / "notes.txt").read_text() == "literal $COUNT `x`\n"


def test_unbalanced_quotes_fail_and_the_shell_is_fine(sandbox):
    result = sandbox.run("echo 'unbalanced")
    assert result.exit_code not in (0, None)
    assert not result.shell_restarted
    assert "unexpected EOF" in result.output
    bad_if = sandbox.run("if true; then echo x")
    assert bad_if.exit_code not in (0, None) and not bad_if.shell_restarted
    assert_state(sandbox)


def test_binary_output_comes_back_as_str(sandbox):
    result = sandbox.run("head -c 4096 /dev/urandom; printf '\\0\\x1b[31m\\x07end'")
    assert result.exit_code == 0
    assert isinstance(result.output, str)
    assert not [c for c in result.output if ord(c) < 32 and c not in "\n\t"]
    assert result.output.endswith("end")
    json.dumps(result.output)


def test_long_output_is_capped_with_head_tail_and_marked_cut(sandbox):
    total = sum(len(f"{i}\n") for i in range(1, 1_000_001))
    started = time.monotonic()
    result = sandbox.run("seq 1 1000000")
    assert time.monotonic() - started < 10
    assert result.exit_code == 0 and result.output_truncated
    assert len(result.output) < OUTPUT_CAP_CHARS + 100
    assert result.output.startswith("1\n2\n3\n4\n")
    assert result.output.endswith("999999\n1000000\n")
    match = re.search(r"\n\[\.\.\. (\d+) bytes of output cut \.\.\.\]\n", result.output)
    assert match
    head, tail = result.output[: match.start()], result.output[match.end() :]
    assert int(match.group(1)) + len(head) + len(tail) == total
    short = sandbox.run("seq 1 10")
    assert not short.output_truncated and short.output == "".join(f"{i}\n" for i in range(1, 11))


def test_stdin_is_closed(sandbox):
    started = time.monotonic()
    result = sandbox.run("cat; read line; echo read=$?", timeout_s=10)
    assert time.monotonic() - started < 3
    assert not result.timed_out
    assert result.output == "read=1\n"


def test_background_processes_are_gone_after_close(make_sandbox):
    sandbox = make_sandbox("bgshell")
    marker = unique_sleep()
    plain = sandbox.run(f"sleep {marker}1 &")
    daemon = sandbox.run(f"setsid nohup sleep {marker}2 >/dev/null 2>&1 < /dev/null &")
    double_fork = sandbox.run(f"( ( sleep {marker}3 & ) & ) ; disown -a")
    assert plain.exit_code == daemon.exit_code == double_fork.exit_code == 0
    # The commands returned at once despite the sleepers holding no output pipe open.
    assert max(plain.duration_s, daemon.duration_s, double_fork.duration_s) < 2
    assert len(host_pids_appearing(f"sleep {marker}", 3)) == 3
    # The sleepers survive between commands (background jobs are allowed) ... The host may see a
    # sleeper's command line while it is still setsid or nohup, before its last exec: wait for the names.
    deadline = time.monotonic() + 10
    while (count := sandbox.run("pgrep -c -x sleep").output.strip()) != "3" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert count == "3"
    sandbox.close()
    # ... and none survives the sandbox.
    assert host_pids_with(f"sleep {marker}") == []


def test_output_files_do_not_pile_up(sandbox):
    for index in range(20):
        sandbox.run(f"echo {index}")
    folder = sandbox.home.parent
    control = [p for p in folder.rglob("*") if sandbox.home not in p.parents and p != sandbox.home]
    assert len([p for p in control if p.name.startswith("out.")]) <= 2
    assert len([p for p in control if p.name.startswith("cmd.")]) <= 2
    assert len(control) < 12


def test_a_dying_shell_is_never_reported_as_a_timeout(make_sandbox):
    # The shell's end (EOF on its output) and its exit status race; whichever comes first,
    # the command did not time out and its status is the shell's.
    sandbox = make_sandbox("dying")
    sandbox.run("KEEP=1")
    for _ in range(10):
        started = time.monotonic()
        result = sandbox.run("exit 3", timeout_s=30)
        assert (result.exit_code, result.timed_out, result.shell_restarted) == (3, False, True)
        assert time.monotonic() - started < 2
        killed = sandbox.run("kill -9 $$", timeout_s=30)
        assert (killed.exit_code, killed.timed_out, killed.shell_restarted) == (137, False, True)
        replaced = sandbox.run("exec true", timeout_s=30)
        assert (replaced.exit_code, replaced.timed_out, replaced.shell_restarted) == (0, False, True)
    assert sandbox.run("echo $KEEP").output == "1\n"


def output_folder_and_number(sandbox) -> tuple[str, int]:
    """Where command output goes inside, and the number of the command that asked."""
    found = sandbox.run("ls -d /run/termrl*/out.*").output.split()
    numbers = sorted(int(path.rsplit(".", 1)[1]) for path in found)
    assert found and numbers[-1] > 1, found
    return found[0].rsplit("/", 1)[0], numbers[-1]


@pytest.mark.parametrize(
    ("replacement", "kind"),
    [("mkfifo", "-p"), ("mkdir", "-d"), ("ln -s /etc/shadow", "-L")],
    ids=["fifo", "dir", "symlink"],
)
def test_replacing_its_own_output_file_does_not_break_the_harness(sandbox, replacement, kind):
    # Whatever the command does to the file its output goes to, run() answers and the
    # sandbox stays usable (an exception here would turn into a harness error).
    folder, _ = output_folder_and_number(sandbox)
    result = sandbox.run(f'f=$(ls -d {folder}/out.* | sort -t. -k2 -n | tail -n 1); rm -f "$f"; {replacement} "$f"; echo hi; [ {kind} "$f" ] && touch ~/replaced')
    assert (sandbox.home / "replaced").exists(), "the command did not manage to replace its output file"
    # Every backend reads it the same way: never through the link, never waiting on the FIFO.
    assert result.output == REPLACED_OUTPUT and "root:" not in result.output
    assert_state(sandbox)
    assert sandbox.run("echo still").output == "still\n"


@pytest.mark.parametrize("planted", ["mkfifo", "mkdir", "ln -s /etc/shadow"], ids=["fifo", "dir", "symlink"])
def test_something_planted_at_the_next_output_file_is_cleared_first(sandbox, planted):
    # A FIFO at the next command's output file would make that command's redirection wait
    # until its timeout; the harness clears the name before every command.
    folder, number = output_folder_and_number(sandbox)
    sandbox.run(f"{planted} {folder}/out.{number + 2}")
    started = time.monotonic()
    result = sandbox.run("echo fine", timeout_s=20)
    assert (result.output, result.exit_code, result.timed_out) == ("fine\n", 0, False)
    assert time.monotonic() - started < 10
    assert_state(sandbox)


def test_shell_and_verifier_wait_on_descriptors_above_1023(make_sandbox, backend, tmp_path):
    # select(2) refuses a descriptor above 1023; a long run (many sandboxes, pooled engine
    # connections) gets there, and every wait must still work.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert hard == resource.RLIM_INFINITY or hard >= 1400, "the test needs more than 1400 descriptors"
    if soft != resource.RLIM_INFINITY and soft < 1400:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1400, hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        sandbox = make_sandbox("highfd")
        sandbox.run("echo kept > f.txt")
        assert max(int(fd) for fd in os.listdir("/proc/self/fd")) > 1023
        assert sandbox.run("cat f.txt").output == "kept\n"
        late = sandbox.run("sleep 30", timeout_s=1)
        assert late.timed_out and sandbox.run("echo again").output == "again\n"
        home = sandbox.snapshot(tmp_path / "snap")
        run = backend.run_isolated(IsolatedRequest(home, ["cat", "/home/user/f.txt"], [], b"k", timeout_s=60, settings=sandbox.settings))
        assert (run.returncode, run.log) == (0, "kept\n")
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
