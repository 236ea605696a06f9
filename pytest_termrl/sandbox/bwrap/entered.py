"""One-shot processes in a live whole-machine sandbox, started by entering its namespaces.

Another harness (Harbor, Inspect) asks for a command as any user of the machine, in any
folder, with its own variables and input, while the agent's shell lives on. A second
bubblewrap would mount the overlays a second time; instead the process joins the
sandbox's cgroups on the host, then ``nsenter`` takes it into the namespaces of a process
already inside (user, mount, pid, network, ipc, uts, cgroup) and its root, where it is
root of the range and becomes the asked-for user as the agent's shell does: root with a
container engine's default capabilities, anyone else with none.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from ...errors import SandboxError
from ..base import ExecRequest, ExecResult
from ..build.accounts import ImageUser, resolve_user
from ..limits import ResourceLimits
from ..process_io import collect
from ..proctree import session_of, stat_fields
from .overlay import ROOT_CAPABILITIES, ROOT_PATH, Account, enter_as


def inside_pid(pids: list[int]) -> int | None:
    """A process of ``pids`` that lives in the sandbox's user namespace (not bubblewrap's launcher on the host)."""
    own = os.readlink("/proc/self/ns/user")
    for pid in sorted(pids):
        try:
            if os.readlink(f"/proc/{pid}/ns/user") != own:
                return pid
        except OSError:
            continue
    return None


def live_user(pid: int, spec: str) -> ImageUser:
    """``spec`` as an account of the machine as it is now (the agent may have added one), read through ``pid``'s root."""
    root = Path(f"/proc/{pid}/root")
    try:
        passwd = (root / "etc/passwd").read_text(errors="replace")
        group = (root / "etc/group").read_text(errors="replace")
    except OSError:
        passwd = group = ""
    try:
        return resolve_user(spec, passwd, group)
    except ValueError as exc:
        raise SandboxError(f"exec as {spec!r}: {exc}") from None


def root_prefix() -> list[str]:
    """Root inside keeps what the agent's root keeps: a container engine's default capabilities, no new privileges."""
    keep = ",".join(f"+{cap.lower()}" for cap in ROOT_CAPABILITIES)
    return ["setpriv", f"--bounding-set=-all,{keep}", "--no-new-privs", "--"]


def machine_program(pid: int, name: str) -> str:
    """Where the machine that ``pid`` lives in keeps ``name`` (a system program), found in root's PATH: the request's own
    PATH finds the command alone, and may lack the folder of the switch to its user."""
    for folder in ROOT_PATH.split(":"):
        if os.access(f"/proc/{pid}/root{folder}/{name}", os.X_OK):
            return f"{folder}/{name}"
    return name


def exec_entered(pid: int, request: ExecRequest, user: ImageUser, base_env: dict[str, str], workdir: str,
                 limits: ResourceLimits, timeout_s: float) -> ExecResult:
    """Run ``request`` as ``user`` inside the sandbox that ``pid`` lives in; ``base_env`` is the machine's own environment."""
    cwd = request.cwd or workdir
    if not cwd.startswith("/"):
        cwd = f"{workdir.rstrip('/')}/{cwd}"
    if not Path(f"/proc/{pid}/root{cwd}").is_dir():
        raise SandboxError(f"exec: the folder {cwd!r} is not a folder of the sandbox's machine")
    account = Account(user.uid, user.gid, user.name, user.home)
    env = {**base_env, "HOME": user.home, "USER": user.name, "LOGNAME": user.name}
    if user.uid == 0 and base_env.get("PATH") in (None, "/usr/local/bin:/usr/bin:/bin"):
        env["PATH"] = ROOT_PATH
    env.update(dict(request.env))
    switch = root_prefix() if user.uid == 0 else enter_as(account, user.groups)
    switch[0] = machine_program(pid, switch[0])
    nsenter = shutil.which("nsenter") or "nsenter"  # found on this machine's PATH, not the request's
    argv = [nsenter, f"--target={pid}", "--user", "--mount", "--pid", "--net", "--ipc", "--uts", "--cgroup",
            "--root", f"--wd=/proc/{pid}/root{cwd}", "--", *switch, *request.argv]
    process = subprocess.Popen(limits.wrap(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=env, start_new_session=True)
    done = collect(process, request.stdin, timeout_s, request.output_cap_bytes,
                   kill=lambda: kill_session(process.pid, limits))
    return ExecResult(done.returncode, done.stdout, done.stderr, done.timed_out, done.truncated, done.duration_s)


def kill_session(sid: int, limits: ResourceLimits) -> None:
    """SIGKILL every process of the sandbox whose session is the launcher's: the run and all it started (a child that
    called setsid escapes, as from an engine's exec; the sandbox's close still takes it). The launcher (nsenter) is
    left to reap its child and exit, so no zombie is left to the sandbox's init; killed too if it lingers."""
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        inside = [pid for pid in limits.pids() if pid != sid and session_of(pid) == sid]
        if not inside:
            break
        for pid in inside:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)
    if session_of(sid) == sid:
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and _alive(sid):
            time.sleep(0.02)
        try:
            os.kill(sid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _alive(pid: int) -> bool:
    fields = stat_fields(pid)
    return fields is not None and fields[0] != b"Z"
