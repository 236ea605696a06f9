"""Files the harness places in a live sandbox between an episode's steps, and the hook and check it runs there.

A multi-step task's step may bring files of its own (Harbor's ``steps/<name>/workdir/``), put
in the workdir before the step's agent begins, and a setup hook among them (``setup.sh``), run
in the workdir as the agent's user, then the step's own healthcheck. All go through the sandbox's own shell, in a subshell so
that the agent's folder and variables stay as they were, so they work on every backend and
whatever the sandbox is (the agent's home, the whole machine): the files are written as the
agent's user would write them, owned by it, and nothing the agent left in the way (a link
where a file goes) is followed from outside the sandbox. A link or a file the agent put where
a placed file goes is replaced; a folder there cannot be, and the placement fails naming it.

The script writes each file with bash's own ``printf`` (octal escapes for what is not plain
text), so nothing beyond bash is needed in the sandbox.
"""

from __future__ import annotations

import os
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import SandboxError, SetupFailed
from ..tasks.model import Healthcheck
from .base import Sandbox
from .healthcheck import wait_healthy

CHUNK = 1 << 15
"""Bytes of a file written by one ``printf``."""


class PlacementFailed(SandboxError):
    """The harness could not place a step's files or its setup hook failed; the message says which and why."""


@dataclass(frozen=True)
class Placed:
    """What a placement put in the workdir: every path, relative to it, in the order written (folders first)."""

    paths: tuple[str, ...]


def _printf_format(data: bytes) -> str:
    """``data`` as a single-quoted ``printf`` format that prints exactly those bytes."""
    out = []
    for byte in data:
        char = chr(byte)
        if char == "%":
            out.append("%%")
        elif 32 <= byte < 127 and char not in "'\\":
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return "'" + "".join(out) + "'"


def placement_script(source: Path, workdir: str) -> tuple[str, tuple[str, ...]]:
    """(the bash that places ``source``'s tree in ``workdir``, the relative paths it places), folders before what they hold."""
    lines = ["(", "set -e", "umask 022", f"cd -- {shlex.quote(workdir)}"]
    placed: list[str] = []
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source).as_posix()
        at = shlex.quote("./" + rel)
        mode = path.lstat().st_mode
        placed.append(rel)
        if stat.S_ISLNK(mode):
            lines += [f"rm -f -- {at}", f"ln -s -- {shlex.quote(os.readlink(path))} {at}"]
        elif stat.S_ISDIR(mode):
            lines.append(f"if [ -L {at} ] || {{ [ -e {at} ] && [ ! -d {at} ]; }}; then rm -f -- {at}; fi")
            lines.append(f"[ -d {at} ] || mkdir -m {stat.S_IMODE(mode) | 0o700:04o} -- {at}")
        else:
            data = path.read_bytes()
            lines += [f"rm -f -- {at}", f": > {at}"]
            lines += [f"printf {_printf_format(data[i:i + CHUNK])} >> {at}" for i in range(0, len(data), CHUNK)]
            lines.append(f"chmod {stat.S_IMODE(mode) | 0o600:04o} -- {at}")
    lines.append(")")
    return "\n".join(lines) + "\n", tuple(placed)


def place_files(sandbox: Sandbox, source: Path, workdir: str, timeout_s: float, what: str) -> Placed:
    """Copy ``source``'s tree into ``workdir`` inside ``sandbox``, as the agent's user; raise PlacementFailed naming ``what``."""
    script, placed = placement_script(source, workdir)
    result = sandbox.run(script, timeout_s)
    if result.exit_code != 0 or result.timed_out:
        why = "it ran out of time" if result.timed_out else f"exit code {result.exit_code}"
        raise PlacementFailed(f"{what}: the files could not be placed in {workdir} ({why}): {result.output.strip()[-600:]}")
    return Placed(placed)


def run_hook(sandbox: Sandbox, hook: str, workdir: str, timeout_s: float, what: str) -> str:
    """Run ``hook`` (relative to ``workdir``) with bash in ``workdir`` as the agent's user; its output, or PlacementFailed."""
    script = f"( cd -- {shlex.quote(workdir)} && bash {shlex.quote('./' + hook)} )"
    result = sandbox.run(script, timeout_s)
    if result.exit_code != 0 or result.timed_out:
        why = f"it ran past {timeout_s:g}s" if result.timed_out else f"exit code {result.exit_code}"
        raise PlacementFailed(f"{what} failed ({why}): {result.output.strip()[-600:]}")
    return result.output


def check_healthy(sandbox: Sandbox, check: Healthcheck, workdir: str, what: str) -> None:
    """Try ``check`` in ``workdir`` in the sandbox's shell until it passes (Harbor's rules, :mod:`.healthcheck`), wherever
    the agent left the shell; PlacementFailed naming ``what``."""
    try:
        wait_healthy(lambda command, timeout_s: sandbox.run(f"( cd -- {shlex.quote(workdir)} && {command} )", timeout_s), check)
    except SetupFailed as exc:
        raise PlacementFailed(f"{what}: {exc}") from None
