"""The terminal session of the bwrap sandboxes on a real pseudo-terminal, beyond the shipped conformance tests
(tests/unit/sandbox/test_terminal_conformance.py runs those for every backend): full-screen programs (less, vim),
output past the cap, the shell's exported variables, Python's pty module in place of script, the whole-machine
sandbox's change record, and no process left behind."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from conftest import require_root, require_service

from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.base import KeystrokeBatch
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend
from pytest_termrl.sandbox.conformance.test_terminal import keys, last_line  # the shipped suite's helpers
from pytest_termrl.tasks.model import Task

PROMPT = re.compile(r"\$$")


@pytest.fixture(scope="module")
def backend():
    made = BwrapBackend(SandboxSettings(command_timeout_s=10.0))
    yield made
    made.close()


@pytest.fixture
def sandbox(backend):
    made = backend.create("terminal")
    yield made
    made.close()


def test_the_bwrap_and_docker_sandboxes_have_a_terminal_and_a_backend_without_one_says_so():
    from pytest_termrl.sandbox.base import Sandbox
    from pytest_termrl.sandbox.bwrap.backend import BwrapSandbox
    from pytest_termrl.sandbox.bwrap.machine import MachineSandbox
    from pytest_termrl.sandbox.docker.local import DockerSandbox
    from pytest_termrl.sandbox.docker.machine import DockerMachineSandbox
    from pytest_termrl.sandbox.docker.remote import RemoteDockerSandbox

    assert BwrapSandbox.has_terminal and MachineSandbox.has_terminal
    assert DockerSandbox.has_terminal and RemoteDockerSandbox.has_terminal and DockerMachineSandbox.has_terminal
    assert not Sandbox.has_terminal
    bare = BwrapSandbox.__new__(BwrapSandbox)
    bare.backend_name = "plain"
    with pytest.raises(NotImplementedError, match="the plain sandbox has no terminal session"):
        Sandbox.send_keys(bare, KeystrokeBatch(("ls", "Enter")))


def test_less_shows_the_first_screen_and_q_quits_to_the_shells_screen(sandbox):
    require_service(None if os.path.exists("/usr/bin/less") else "no /usr/bin/less", "less")
    sandbox.run("seq 1 500 > long.txt")
    paged = keys(sandbox, "less long.txt", "Enter")
    lines = paged.output.splitlines()
    assert lines[0] == "1" and "39" in lines and "500" not in lines, paged.output
    assert len(lines) <= 40
    back = keys(sandbox, "q")
    assert PROMPT.search(last_line(back)) and "less long.txt" in back.output, back.output
    assert "39" not in back.output.splitlines(), "leaving less shows the shell's screen again"


def test_vim_inserts_text_and_writes_the_file(sandbox):
    vim = next((p for p in ("/usr/bin/vim", "/usr/bin/vim.tiny", "/usr/bin/vi") if os.path.exists(p)), None)
    require_service(None if vim else "no vim, vim.tiny nor vi in /usr/bin", "vim")
    keys(sandbox, f"{vim} notes.txt", "Enter")
    keys(sandbox, "i", "hello from vim")
    keys(sandbox, "Escape")
    done = keys(sandbox, ":wq", "Enter")
    assert PROMPT.search(last_line(done)), done.output
    assert (sandbox.home / "notes.txt").read_text() == "hello from vim\n"


def test_output_still_coming_at_the_cap_is_a_timeout_and_is_cut_head_and_tail(sandbox):
    flood = keys(sandbox, "yes termrl", "Enter", wait=1.5)
    assert flood.timed_out and flood.output_truncated
    assert len(flood.output) < sandbox.settings.output_cap_chars + 200 and "output cut" in flood.output
    stopped = keys(sandbox, "C-c")
    assert PROMPT.search(last_line(stopped)), stopped.output[-500:]


def test_the_session_starts_in_the_shells_directory_with_its_exported_variables(sandbox):
    sandbox.run("mkdir -p work && cd work && export GREETING=hello")
    shown = keys(sandbox, "echo $GREETING from $PWD $TERM", "Enter")
    assert "hello from /home/user/work xterm" in shown.output.splitlines()


def test_without_script_the_session_runs_on_pythons_pty_module(sandbox):
    sandbox.run('mkdir ~/bin-nos && for t in bash python3 setsid stty; do ln -s "$(command -v $t)" ~/bin-nos/$t; done; '
                'export PATH=~/bin-nos')
    shown = keys(sandbox, "IFS= read -r -d '' parent </proc/$PPID/cmdline; echo parent=$parent", "Enter")
    assert "parent=python3" in shown.output.splitlines(), shown.output


def _terminal_pids(pids: list[int]) -> list[int]:
    found = []
    for pid in pids:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if cmdline.startswith(b"script\0") or b"--rcfile\0" in cmdline:
            found.append(pid)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_no_process_is_left_after_stop_processes(sandbox):
    keys(sandbox, "sleep 300 &", "Enter")
    keys(sandbox, "cat", "Enter")  # a program in the foreground, reading the terminal
    pids = sandbox.agent_pids()
    terminal = _terminal_pids(pids)
    assert len(terminal) >= 2, "script and the session's bash are the agent's processes"
    sandbox.stop_processes()
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in pids if _alive(pid)]
    assert sandbox.agent_pids() == []


def test_the_machine_sandboxs_change_record_holds_what_was_typed_and_not_the_fifos(backend, tmp_path):
    require_root("a whole-machine sandbox")
    require_service(BwrapBackend.whole_machine_problem(), "whole-machine sandboxes")
    task = Task(id="typed", title="typed", instruction="-", root=tmp_path, user="user")
    machine = backend.create("typed", task)
    try:
        machine.prepare(task)
        before = set(machine.change_record().read().entries)
        assert machine.has_terminal
        written = keys(machine, "echo typed > ~/typed.txt; id -un", "Enter")
        assert PROMPT.search(last_line(written)) and "user" in written.output.splitlines(), written.output
        keys(machine, "exit", "Enter")
        entries = set(machine.change_record().read().entries)
        changed = entries - before
        assert "/home/user/typed.txt" in changed
        assert changed <= {"/home", "/home/user", "/home/user/typed.txt"}, "the file and the folders it was copied up in"
        assert not [path for path in entries if "term." in path or "termrl" in path], "the FIFOs lie outside the record"
        machine.stop_processes()
        assert machine.agent_pids() == []
    finally:
        machine.close()
