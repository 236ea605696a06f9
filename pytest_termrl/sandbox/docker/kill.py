"""Killing every process of the agent in a container, and none of the harness's.

From the host, through the container's cgroup, as root: immune to a full pid table, and
possible only where the engine runs on this machine. Anywhere: a killer script run inside
as the agent's uid, again and again while the pid table is full; as a last resort the
container restarts (the home survives, /tmp does not).
"""

from __future__ import annotations

import time
from pathlib import Path

from ..proctree import stop_then_kill

# Kill every process of the caller's uid except the pids in $1 and itself, until none is
# left: each round stops them all first (so none runs on, forks or sees its child die), then
# kills them. Builtins only inside a round.
KILLER = r"""
spare=" $1 $$ "
for round in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; do
  hit=
  for sig in STOP KILL; do
    for d in /proc/[0-9]*; do
      p=${d#/proc/}
      case $spare in *" $p "*) continue ;; esac
      read -r st < "$d/stat" 2>/dev/null || continue
      st=${st##*) }
      [ "${st%% *}" = Z ] && continue
      kill -$sig "$p" 2>/dev/null && hit=1
    done
  done
  [ -z "$hit" ] && exit 0
  sleep 0.02
done
exit 1
"""


def cgroup_procs(container) -> Path | None:
    """The host path of the ``cgroup.procs`` file of the container's pids cgroup, if it can be read."""
    try:
        container.reload()
        pid = container.attrs["State"]["Pid"]
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except (OSError, KeyError, TypeError):
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            candidate = Path("/sys/fs/cgroup/pids") / path.lstrip("/") / "cgroup.procs"
        elif controllers == "" and len(lines) == 1:
            candidate = Path("/sys/fs/cgroup") / path.lstrip("/") / "cgroup.procs"
        else:
            continue
        if candidate.is_file():
            return candidate
    return None


def kill_through_cgroup(procs: Path, uid: int | None, spare: set[int]) -> None:
    """SIGKILL every process of uid (None: of any uid) in the cgroup but ``spare`` (pids inside the container)."""
    for _ in range(50):
        try:
            pids = [int(p) for p in procs.read_text().split()]
        except OSError:
            return  # the cgroup is gone: so is every process in it
        victims = []
        for pid in pids:
            info = proc_status(pid)
            if info is None or (uid is not None and info["uid"] != uid) or info["state"] == "Z" or info["nspid"] in spare:
                continue
            victims.append(pid)
        if not victims:
            return
        stop_then_kill(victims)  # stopped first, so none runs on while the others die
        time.sleep(0.01)


def kill_inside(api, container, user: str, spare: set[int], api_error: type[Exception]) -> bool:
    """Run the killer in the container as ``user``; restart the container if it never finishes.

    Returns False when the container had to restart (its cgroup may have moved).
    """
    cmd = ["bash", "--noprofile", "--norc", "-c", KILLER, "termrl-kill", " ".join(str(p) for p in sorted(spare))]
    for attempt in range(10):
        try:
            exec_id = api.exec_create(container.id, cmd, user=user, stdin=False)["Id"]
            api.exec_start(exec_id)
            if api.exec_inspect(exec_id).get("ExitCode") == 0:
                return True  # a full pass found nothing left to kill
        except api_error:
            pass
        time.sleep(0.05 * (attempt + 1))  # the pid table is full for a moment: try again
    # Last resort: restart the container (the home survives; /tmp does not).
    try:
        container.restart(timeout=0)
    except api_error:
        pass
    return False


def proc_status(pid: int) -> dict | None:
    """uid, state and innermost-namespace pid of a host process, from /proc; None if it is gone."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            text = handle.read()
    except OSError:
        return None
    info = {"uid": -1, "state": "?", "nspid": -1}
    for line in text.splitlines():
        if line.startswith("Uid:"):
            info["uid"] = int(line.split()[1])
        elif line.startswith("State:"):
            info["state"] = line.split()[1]
        elif line.startswith("NSpid:"):
            info["nspid"] = int(line.split()[-1])
    return info
