"""Why a build step failed, in one message, and the host packages that would have made it pass.

The message names the Dockerfile's line, the step, how it ended (exit code, the build's time
limit, the layer's space) and its last lines of output. The packages come from the offline
stand-ins' refusals (``the package 'X' is not installed here``, ``install the Debian package
X``) and from a command the shell did not find whose Debian package the toolchain table knows.
"""

from __future__ import annotations

import re

from ...errors import SandboxError
from ...tasks.importers.toolchains import TOOLCHAINS
from .record import StepLog

OUTPUT_TAIL_LINES = 25
_STANDIN_REFUSAL = re.compile(r"^(?P<tool>[\w.+-]+)(?: [\w-]+)*: refused: (?P<why>.*)$")
_PACKAGE = re.compile(r"the package '(?P<name>[^']+)'")
_DEBIAN = re.compile(r"(?:the )?Debian package '?(?P<name>[a-z0-9][a-z0-9.+-]*)'?")
_PYPI = re.compile(r"(?:the )?PyPI (?:package|name) '?(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)'?")
_NOT_FOUND = re.compile(r"(?:^|\s)(?:/bin/sh: \d+: |bash: (?:line \d+: )?)?(?P<cmd>[\w.+-]+): (?:command )?not found", re.M)
_APT_TOOLS = {"apt-get", "apt", "add-apt-repository", "curl", "wget", "rustup", "nvm"}


_DEBIAN_NAME = re.compile(r"^[a-z0-9][a-z0-9.+-]{0,100}$")
_PYPI_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,100}[A-Za-z0-9])?$")
"""What a package's name may be: the log is written inside the step, so nothing else reaches a command line printed for the host."""


def missing_packages(standin_lines: tuple[str, ...] | list[str], output: str) -> list[tuple[str, str]]:
    """(manager, package) pairs, 'apt' or 'pip', that the host lacks for this step, in the order they were met.

    Names that are not a valid Debian or PyPI name are dropped: the step itself could have
    written anything into the stand-ins' log.
    """
    return [(manager, name) for manager, name in _found(standin_lines, output)
            if (_DEBIAN_NAME if manager == "apt" else _PYPI_NAME).match(name)]


def _found(standin_lines: tuple[str, ...] | list[str], output: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for line in standin_lines:
        match = _STANDIN_REFUSAL.match(line)
        if not match:
            continue
        tool, why = match.group("tool"), match.group("why")
        debian = _DEBIAN.search(why)
        pypi = _PYPI.search(why)
        named = _PACKAGE.search(why)
        if debian:
            found.append(("apt", debian.group("name")))
        elif pypi:
            found.append(("pip", pypi.group("name")))
        elif named:
            found.append(("apt" if tool in _APT_TOOLS else "pip", named.group("name")))
    for match in _NOT_FOUND.finditer(output):
        tool = TOOLCHAINS.get(match.group("cmd"))
        if tool is not None:
            found.append(("apt", tool.package))
    return list(dict.fromkeys(found))


def failure_message(where: str, step: str, exit_code: int | None, output: str, *, timed_out: bool, storage_full: bool,
                    timeout_s: float, storage_bytes: int) -> str:
    tail = "\n".join(output.rstrip().splitlines()[-OUTPUT_TAIL_LINES:])
    if timed_out:
        why = f"was stopped: the build ran past its {timeout_s:.0f} s (build_timeout_sec)"
    elif storage_full:
        why = f"filled its layer's space ({storage_bytes // (1 << 20)} MiB)"
    else:
        why = f"failed with exit code {exit_code}"
    return f"{where}: {step} {why}; its last output:\n{tail}" if tail else f"{where}: {step} {why} (no output)"


class BuildError(SandboxError):
    """A step of the build failed; the message names the Dockerfile's line, the exit code and the last output."""

    def __init__(self, message: str, steps: tuple[StepLog, ...] = (), missing: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.steps = steps
        self.missing = list(missing or [])
        """(manager, package) the host lacks for the failed step: 'apt' (a Debian package) or 'pip' (a PyPI name)."""
