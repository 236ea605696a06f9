"""Runs a task's grader script (Harbor's tests/test.sh) in the verifier sandbox and signs its reward.

Executed as ``python -I script_runner.py SCRIPT TIMEOUT WORKDIR REWARD_DIR ENV_JSON [OUTPUT_BYTES]``
by the harness's own Python, the way runner.py is: it imports nothing from the workspace nor
from pytest_termrl, the MAC key arrives on a pipe read once and closed before the script
starts, and the signed result leaves on a pipe no child inherits. For a reward grader the
script's output is kept only as a log tail for people and the verdict is the reward file
the script wrote; with OUTPUT_BYTES > 0 (a parsed grader, Terminal-Bench's run-tests.sh)
the last OUTPUT_BYTES of its output are signed too, for the harness to parse.

- The process makes itself non-dumpable first, so code the grader runs (the agent's
  programs, under the same uid) can neither ptrace it nor read its memory for the key.
- ``pytest`` on the script's PATH is the harness's trusted pytest (plugin autoload off),
  since graders call it and the sandbox's system Python has none (``python3 -m pytest`` and
  ``python -m pytest`` run it too, as ``python3 -m pip`` runs the pip stand-in); ``pip``, ``pip3``,
  ``uv``, ``uvx``, ``apt-get``, ``curl``, ``wget`` and ``add-apt-repository`` (``tools.TOOLS``) are
  the offline stand-ins of standins/inside/tools.py, and what they stood in for is signed with
  the result (``stood_in``).
- When the script ends (or times out), every other process of this uid in the sandbox is
  killed before the reward is read, so nothing left running can rewrite it afterwards.
- The reward file is opened without following links or blocking: a FIFO, a link or a
  directory there is no reward.
- What the script leaves in ``/logs/artifacts`` (Harbor's artifacts folder) is signed with
  the result, regular files only and within a size cap, for the harness to keep in the run
  directory; what does not fit is named, not sent.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time

SHIM_DIR = "/tmp/termrl-grader-bin"
STANDIN_LOG = f"{SHIM_DIR}/standins.log"
STANDINS_AT = "/opt/termrl/runner-standins"
"""Where the stand-in tools' folder (pytest_termrl/standins/inside) is mounted beside the runners."""
PYTHONS = ("python3", "python")
"""The interpreters the grader's PATH routes ``-m pytest`` (the trusted pytest) and ``-m pip`` (the stand-in) of."""
_PYTHON_SHIM = """#!/bin/sh
# {name}: the system's, but `{name} -m pytest` is the trusted pytest and `{name} -m pip` the offline pip.
__route() {{
  while [ $# -gt 0 ]; do
    case "$1" in
      -m) case "$2" in
            pytest|py.test) shift 2; exec {shims}/pytest "$@" ;;
            pip|pip3) shift 2; exec {shims}/pip "$@" ;;
          esac
          return ;;
      -u|-B|-E|-s|-S|-I|-q|-O|-OO|-b|-bb|-d|-v|-P|-R) shift ;;
      *) return ;;
    esac
  done
}}
__route "$@"
for __dir in /usr/local/bin /usr/bin /bin; do
  [ -x "$__dir/{name}" ] && exec "$__dir/{name}" "$@"
done
echo "{name}: command not found" >&2
exit 127
"""
MAX_REWARD_BYTES = 65536
ARTIFACT_FILES = 64
ARTIFACT_BYTES = 1024 * 1024
"""At most this many artifact files, and this many bytes of them in all, go back with the result."""


def _write_shims() -> None:
    os.makedirs(SHIM_DIR, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    plugins = os.path.join(here, "pytest_plugins")  # --ctrf (Harbor's template asks for pytest-json-ctrf's report)
    for name in ("pytest", "py.test"):
        path = os.path.join(SHIM_DIR, name)
        with open(path, "w") as handle:
            handle.write(f'#!/bin/sh\nPYTHONPATH="{plugins}${{PYTHONPATH:+:$PYTHONPATH}}" PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 '
                         f'exec "{sys.executable}" -m pytest -p no:cacheprovider -p termrl_ctrf "$@"\n')
        os.chmod(path, 0o755)
    sys.path.insert(0, STANDINS_AT)
    import tools  # the stand-ins' one table: which installers they meet

    sys.path.pop(0)
    for name in tools.TOOLS:  # type: ignore[attr-defined]  # the checker may take the repository's tools/ folder for this module
        path = os.path.join(SHIM_DIR, name)
        with open(path, "w") as handle:
            handle.write(f'#!/bin/sh\nexec "{sys.executable}" -I "{STANDINS_AT}/tools.py" {name} "$@"\n')
        os.chmod(path, 0o755)
    for name in PYTHONS:
        path = os.path.join(SHIM_DIR, name)
        with open(path, "w") as handle:
            handle.write(_PYTHON_SHIM.format(name=name, shims=SHIM_DIR))
        os.chmod(path, 0o755)


def _stood_in() -> list[str]:
    """What the stand-ins did, one line each (written by code running as the agent's user: a log, not a verdict)."""
    text = _read_small(STANDIN_LOG) or ""
    return [line[:300] for line in text.splitlines() if line.strip()][:50]


def _kill_others() -> None:
    """SIGKILL every process this uid may signal, but this one: the script's leftovers."""
    me = os.getpid()
    ancestors: set[int] = set()
    pid = os.getppid()
    while pid > 1 and pid not in ancestors:
        ancestors.add(pid)
        try:
            with open(f"/proc/{pid}/stat") as handle:
                pid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    for _ in range(20):
        hit = False
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            if pid in (me, 1) or pid in ancestors:
                continue
            try:
                os.kill(pid, signal.SIGKILL)
                hit = True
            except (ProcessLookupError, PermissionError):
                pass
        if not hit:
            return
        time.sleep(0.02)


def _read_small(path: str) -> str | None:
    """Text of a regular file, not following links, never blocking; None otherwise."""
    data, _ = read_capped(path, MAX_REWARD_BYTES)
    return None if data is None else data.decode(errors="replace")


def read_capped(path: str, limit: int) -> tuple[bytes | None, str | None]:
    """Bytes of a regular file not over ``limit``, not following links, never blocking; else (None, why not)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return None, f"unreadable ({exc.strerror})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "not a regular file"
        if info.st_size > limit:
            return None, f"{info.st_size} bytes, over the {limit} left"
        return os.read(fd, limit + 1)[:limit], None
    finally:
        os.close(fd)


def collect_artifacts(folder: str) -> tuple[dict[str, str], list[str]]:
    """({relative path: base64 of its bytes}, [what was left out and why]) of the files under ``folder``."""
    import base64

    kept: dict[str, str] = {}
    left_out: list[str] = []
    budget = ARTIFACT_BYTES
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(top, d)))
        for name in sorted(files):
            path = os.path.join(top, name)
            rel = os.path.relpath(path, folder)
            if len(kept) >= ARTIFACT_FILES:
                left_out.append(f"{rel}: over {ARTIFACT_FILES} files")
                continue
            data, why = read_capped(path, budget)
            if data is None:
                left_out.append(f"{rel}: {why}")
                continue
            budget -= len(data)
            kept[rel] = base64.b64encode(data).decode("ascii")
    return kept, left_out[:50]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if value == value and abs(value) != float("inf") else None


def read_reward(reward_dir: str) -> tuple[float | None, str | None, dict[str, float], str | None]:
    """(reward, source, detail, problem): reward.txt first, then reward.json, as Harbor reads them.

    reward.json's ``reward`` key is the reward when present; else every named reward
    counts and the reward is the least of them (the task passes when all reach the threshold).
    """
    text = _read_small(os.path.join(reward_dir, "reward.txt"))
    if text is not None:
        try:
            value = _number(float(text.strip()))
        except ValueError:
            value = None
        if value is None:
            return None, "reward.txt", {}, f"reward.txt does not hold a number: {text.strip()[:80]!r}"
        return value, "reward.txt", {}, None
    text = _read_small(os.path.join(reward_dir, "reward.json"))
    if text is None:
        return None, None, {}, "the script wrote no reward (/logs/verifier/reward.txt or reward.json)"
    try:
        data = json.loads(text)
    except ValueError:
        return None, "reward.json", {}, "reward.json is not valid JSON"
    if _number(data) is not None:
        return _number(data), "reward.json", {}, None
    if not isinstance(data, dict):
        return None, "reward.json", {}, "reward.json is neither a number nor an object"
    detail = {str(k): number for k, number in ((k, _number(v)) for k, v in data.items()) if number is not None}
    if "reward" in data:
        value = _number(data["reward"])
        if value is None:
            return None, "reward.json", detail, "reward.json's 'reward' is not a number"
        return value, "reward.json", detail, None
    if not detail:
        return None, "reward.json", detail, "reward.json names no numeric reward"
    # Named rewards without a 'reward' key: the task passes when every one reaches the
    # threshold, so the reward is the least of them.
    return min(detail.values()), "reward.json", detail, None


def main(argv: list[str]) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import channel  # type: ignore[import-not-found]  # a sibling, by bare name: it runs as a script

    sys.path.pop(0)  # the tests must not import the harness's modules by accident

    dumpable_off = channel.non_dumpable()
    key = channel.read_key()
    result_fd = channel.result_fd()
    script, timeout_s, workdir, reward_dir, env_json = argv[1], float(argv[2]), argv[3], argv[4], argv[5]
    output_bytes = int(argv[6]) if len(argv) > 6 else 0
    sys.dont_write_bytecode = True
    os.makedirs(reward_dir, exist_ok=True)
    for name in ("reward.txt", "reward.json"):
        try:
            os.unlink(os.path.join(reward_dir, name))
        except FileNotFoundError:
            pass
    _write_shims()
    env = {
        "HOME": os.environ.get("HOME", "/home/user"),
        "USER": os.environ.get("USER", "user"),
        "LOGNAME": os.environ.get("LOGNAME", "user"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "SHELL": "/bin/bash",
        "TMPDIR": "/tmp",
        "PATH": f"{SHIM_DIR}:/usr/local/bin:/usr/bin:/bin",
        "TEST_DIR": os.path.dirname(script),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "TERMRL_STANDIN_LOG": STANDIN_LOG,
        **json.loads(env_json),
    }
    logs = os.path.dirname(reward_dir)
    os.makedirs(os.path.join(logs, "agent"), exist_ok=True)
    os.makedirs(os.path.join(logs, "artifacts"), exist_ok=True)
    started = time.monotonic()
    timed_out = False
    with open("/tmp/termrl-grader.log", "w+b") as log:
        os.unlink(log.name)
        process = subprocess.Popen(
            ["bash", script], cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, close_fds=True,
        )
        try:
            exit_code = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            exit_code = None
        _kill_others()
        if timed_out:
            process.wait()
        duration = time.monotonic() - started
        size = log.seek(0, os.SEEK_END)
        log.seek(max(0, size - max(4000, output_bytes)))
        captured = log.read().decode(errors="replace")
        tail = captured[-4000:]
    reward, source, detail, problem = read_reward(reward_dir)
    artifacts, artifacts_left_out = collect_artifacts(os.path.join(logs, "artifacts"))
    channel.send_signed(
        result_fd,
        key,
        {
            "exit_code": exit_code,
            "timed_out": timed_out,
            "reward": reward,
            "reward_source": source,
            "reward_detail": detail,
            "problem": problem,
            "output_tail": tail,
            "duration_s": round(duration, 3),
            "non_dumpable": dumpable_off,
            "stood_in": _stood_in(),
            "artifacts": artifacts,
            "artifacts_left_out": artifacts_left_out,
            **({"output": captured, "output_truncated": size > output_bytes} if output_bytes > 0 else {}),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
