"""Find and kill a sandbox's processes from the host, without trusting anything inside."""

from __future__ import annotations

import os
import signal
import subprocess
import time


def proc_files(filename: str):
    """(pid, bytes of /proc/PID/FILENAME) for every process still there when read."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/{filename}", "rb") as handle:
                yield int(name), handle.read()
        except OSError:
            continue


def stat_fields(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (state, ppid, pgrp, session, ...); None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: split after the last ')'.
    return stat[stat.rindex(b")") + 2 :].split()


def session_of(pid: int, zombies: bool = True) -> int | None:
    """The session id of a process; None if it is gone, or (``zombies=False``) if it is a zombie."""
    fields = stat_fields(pid)
    if fields is None or (not zombies and fields[0] == b"Z"):
        return None
    return int(fields[3])


def _parent_map() -> dict[int, int]:
    parents = {}
    for pid, stat in proc_files("stat"):
        # The command name may hold spaces and parentheses: split after the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        parents[pid] = int(fields[1])
    return parents


def descendants(root_pid: int) -> list[int]:
    """Every live descendant of root_pid, parents before children."""
    children: dict[int, list[int]] = {}
    for pid, ppid in _parent_map().items():
        children.setdefault(ppid, []).append(pid)
    found, frontier = [], [root_pid]
    while frontier:
        pid = frontier.pop(0)
        for child in sorted(children.get(pid, [])):
            found.append(child)
            frontier.append(child)
    return found


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def stop_then_kill(pids: list[int]) -> None:
    """SIGSTOP every pid, then SIGKILL every pid: none runs on (a shell into the rest of its command,
    a fork bomb into new children) while the others die. Pids gone or not ours are passed over."""
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


def kill_descendants(root_pid: int, spare: set[int], patience_s: float = 0.4) -> int:
    """SIGKILL root_pid's descendants except ``spare``, again until none are left (fork bombs).

    Between rounds it waits for the killed to go, briefly at first: a shell and its few
    children are gone within a millisecond or two.
    """
    killed = 0
    deadline = time.monotonic() + patience_s
    pause = 0.001
    while True:
        victims = [pid for pid in descendants(root_pid) if pid not in spare]
        if not victims:
            break
        kill_all(victims)
        killed += len(victims)
        if time.monotonic() >= deadline:
            break
        time.sleep(pause)
        pause = min(pause * 2, 0.02)
    return killed


def kill_process_tree(process: subprocess.Popen, wait_s: float = 10.0) -> None:
    """SIGKILL a process started here and everything under it, then reap it."""
    kill_descendants(process.pid, spare=set())
    try:
        process.kill()
    except ProcessLookupError:
        pass
    try:
        process.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        pass
