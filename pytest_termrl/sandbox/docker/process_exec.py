"""One-shot processes in a live docker sandbox (:meth:`.base.Sandbox.exec`), through the engine's exec API.

Another harness (Harbor, Inspect) asks for a command as any user of the machine, in any
folder, with its own variables and input, while the agent's shell lives on. Each is one exec
without a terminal, so stdout and stderr come back apart, in the engine's multiplexed frames
on the hijacked connection (:func:`.exec.attach`); the input goes in on the same connection,
which is then half-closed; the exit code comes from the exec's inspection.

The exec runs a small wrapper first (:data:`WRAPPER`). It waits for one line on its stdin
before it writes anything (output that came with the engine's response headers could be
lost in the client's buffer), names its pid in a first line of stdout that is taken off, and
becomes the command. The engine enters the folder (as root first, as its own exec does: a
user may stand in a folder it cannot read); one that is not there, or not a folder, keeps the
exec from starting and is refused as :class:`SandboxError`, as a user the machine lacks is.
The engine makes every exec's process the leader of a session of its own, which all it
starts stays in; at the timeout every process of that session is killed: from this machine
through the container's cgroup where it can be read (a full process table cannot stop it),
else by a killer run inside as the same user. A child that called ``setsid`` itself escapes,
as from any engine's exec; stopping the sandbox's processes still takes it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from ...errors import SandboxError
from ..base import ExecRequest, ExecResult
from ..build.accounts import ImageUser, resolve_user
from ..bwrap.overlay import ROOT_PATH
from ..layout import AGENT_ENV
from ..proctree import session_of, stop_then_kill
from .exec import ExecStream
from .kill import cgroup_procs
from .machine_layer import root_output

WRAPPER = r"""IFS= read -r _ || exit 125
printf 'termrl-exec %s\n' "$$"
exec "$@"
"""
"""Run as ``sh -c WRAPPER termrl-exec ARGV...``: waits for the go-ahead line, names its pid, becomes ARGV."""

HEADER = b"termrl-exec "
DRAIN_AFTER_KILL_S = 3.0
"""How long the streams may still run once the run's processes are killed (the engine closes them as they exit)."""

# Kill every process of the session $SID (the wrapper's pid: the engine made it a session leader) but this one,
# until none is left; run inside as the exec's user where the container's cgroup cannot be read from here.
SESSION_KILLER = r"""
for round in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  hit=
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = "$$" ] && continue
    read -r st < "$d/stat" 2>/dev/null || continue
    st=${st##*) }
    set -- $st
    [ "$1" = Z ] && continue
    [ "$4" = "$SID" ] && kill -KILL "$p" 2>/dev/null && hit=1
  done
  [ -z "$hit" ] && exit 0
  sleep 0.02
done
exit 1
"""


def exec_in_container(container, request: ExecRequest, default_user: str, workdir: str, default_timeout_s: float) -> ExecResult:
    """Run ``request`` in the started ``container``; ``default_user`` (a docker ``user=``) and ``workdir`` are the task's."""
    spec = (request.user if request.user is not None else default_user).strip() or "0"  # "" names root, as resolve_user reads it
    user = container_user(container, spec)
    cwd = request.cwd or workdir
    if not cwd.startswith("/"):
        cwd = f"{workdir.rstrip('/')}/{cwd}"
    env = exec_env(container, user, request)
    cmd = ["/bin/sh", "-c", WRAPPER, "termrl-exec", *request.argv]
    api = container.client.api
    try:
        stream = ExecStream(api, container.id, cmd, spec, cwd, env)
    except Exception as exc:  # noqa: BLE001 - the engine refused it (a gone container, a full process table)
        raise SandboxError(f"exec in {container.name} could not start: {getattr(exc, 'explanation', None) or exc}") from exc
    try:
        return _collect(stream, container, request, spec, cwd, request.timeout_s or default_timeout_s)
    finally:
        stream.close()


def container_user(container, spec: str) -> ImageUser:
    """``spec`` as an account of the machine as it is now (the agent may have added one): its passwd and group files,
    read through the container's root from this machine where it can be, else by a root exec."""
    container.reload()
    pid = (container.attrs.get("State") or {}).get("Pid")
    try:
        root = Path(f"/proc/{pid}/root/etc")
        passwd, group = (root / "passwd").read_text(errors="replace"), (root / "group").read_text(errors="replace")
    except OSError:
        both = root_output(container, "cat /etc/passwd; echo '#termrl#'; cat /etc/group 2>/dev/null || true", [])
        passwd, _, group = both.partition("#termrl#\n")
    try:
        return resolve_user(spec, passwd, group)
    except ValueError as exc:
        raise SandboxError(f"exec as {spec!r}: {exc}") from None


def exec_env(container, user: ImageUser, request: ExecRequest) -> dict[str, str]:
    """The container's own environment, the user's home and name, root's PATH for root, then the request's variables."""
    own = dict(item.partition("=")[::2] for item in (container.attrs.get("Config") or {}).get("Env") or [])
    env = {**own, "HOME": user.home, "USER": user.name, "LOGNAME": user.name}
    if user.uid == 0 and own.get("PATH") in (None, AGENT_ENV["PATH"]):
        env["PATH"] = ROOT_PATH
    env.update(dict(request.env))
    return env


class _Sinks:
    """stdout and stderr, each cut at the cap; the wrapper's first line taken off stdout."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = {1: bytearray(), 2: bytearray()}
        self.truncated = False
        self.head: bytearray | None = bytearray()
        """The wrapper's line while it is still coming (None: taken off)."""
        self.pid: int | None = None

    def add(self, kind: int, chunk: bytes) -> None:
        if kind == 1 and self.head is not None:
            self.head += chunk
            if b"\n" not in self.head and len(self.head) <= 64:
                return
            line, newline, rest = bytes(self.head).partition(b"\n")
            self.head = None
            if line.startswith(HEADER):
                word, chunk = line[len(HEADER):], rest
                self.pid = int(word) if word.isdigit() else None
            else:  # not the wrapper speaking (the engine's own error): output as it came
                chunk = line + newline + rest
        target = self.data.get(kind)
        if target is None:
            return
        room = self.cap - len(target)
        if len(chunk) > room:
            self.truncated = True
        if room > 0:
            target += chunk[:room]

    def started(self) -> bool:
        return self.pid is not None


def _collect(stream: ExecStream, container, request: ExecRequest, user: str, cwd: str, timeout_s: float) -> ExecResult:
    start = time.monotonic()
    sinks = _Sinks(request.output_cap_bytes)
    feeder = threading.Thread(target=_feed, args=(stream, b"\n" + request.stdin), daemon=True)
    feeder.start()
    for kind, data in stream.frames(start + timeout_s):
        sinks.add(kind, data)
    timed_out = stream.timed_out
    if timed_out:
        _kill_session(stream, container, user, sinks.pid)
        for kind, data in stream.frames(time.monotonic() + DRAIN_AFTER_KILL_S):
            sinks.add(kind, data)
    returncode = None if timed_out else stream.exit_code()
    if not sinks.started() and not timed_out:
        said = bytes((sinks.head or b"") + sinks.data[1] + sinks.data[2]).decode(errors="replace").strip()
        if "chdir" in said:  # the engine's runtime could not enter it: "chdir to cwd (...) failed: no such file or directory"
            raise SandboxError(f"exec: the folder {cwd!r} is not a folder of the sandbox's machine ({said[-200:]})")
        raise SandboxError(f"exec in {container.name} could not start (exit {returncode}): {said[-300:]}")
    return ExecResult(returncode, bytes(sinks.data[1]), bytes(sinks.data[2]), timed_out, sinks.truncated,
                      time.monotonic() - start)


def _feed(stream: ExecStream, data: bytes) -> None:
    """The go-ahead line and the input, then end of input (a process that reads no more leaves the rest unread)."""
    view = memoryview(data)
    while view:
        if not stream.send(bytes(view[:65536])):
            break
        view = view[65536:]
    stream.close_stdin()


def _kill_session(stream: ExecStream, container, user: str, inside_pid: int | None) -> None:
    """SIGKILL the run's session: through the container's cgroup from this machine, else by a killer inside as ``user``."""
    try:
        host_pid = stream.api.exec_inspect(stream.exec_id).get("Pid") or None
    except Exception:  # noqa: BLE001 - the container is gone, and everything in it
        return
    procs = cgroup_procs(container) if host_pid else None
    if procs is not None and host_pid is not None and _kill_through_cgroup(procs, host_pid):
        return
    if inside_pid is None:
        return
    try:
        container.exec_run(["sh", "-c", SESSION_KILLER], user=user, environment={"SID": str(inside_pid)})
    except Exception:  # noqa: BLE001 - nothing more to try: stopping the sandbox's processes still takes them
        pass


def _kill_through_cgroup(procs: Path, sid: int, rounds: int = 100) -> bool:
    """SIGKILL every process of the container whose session (as this machine numbers it) is ``sid``, until none is left."""
    for _ in range(rounds):
        try:
            pids = [int(p) for p in procs.read_text().split()]
        except OSError:
            return True  # the cgroup is gone, and every process in it
        victims = [pid for pid in pids if session_of(pid, zombies=False) == sid]
        if not victims:
            return True
        stop_then_kill(victims)
        time.sleep(0.01)
    return False
