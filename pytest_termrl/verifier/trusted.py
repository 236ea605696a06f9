"""Run a trusted runner on a snapshot of the home, in a fresh sandbox, and take its signed result.

What every grader shares: the snapshot (always removed, any exception a harness error),
with the limits of the sandbox it was copied from and, where the task grades beside the
agent, the agent's network (:class:`GradedHome`); the harness's own interpreter mounted
read-only, the runners' folder mounted at ``RUNNER_INSIDE``, and a fresh key per run, so
that only the runner's authenticated body counts (:mod:`.channel`).
"""

from __future__ import annotations

import secrets
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..sandbox.base import IsolatedRequest, LayeredRoot, Sandbox, SandboxBackend, SandboxSettings, TrustedMount
from ..standins.inside import tools as standin_tools
from . import inside
from .inside.channel import authenticated_body
from .inside.script_runner import STANDINS_AT
from .verdict import Verdict

RUNNERS_DIR = Path(inside.__file__).parent.resolve()
"""The folder of the trusted runners (:mod:`.inside`: runner.py, script_runner.py, channel.py), shipped as package data."""
RUNNER_INSIDE = "/opt/termrl/runner"
STANDINS_DIR = Path(standin_tools.__file__).parent.resolve()
"""The stand-in tools' folder (:mod:`pytest_termrl.standins.inside`), mounted where the script runner looks for it."""


def trusted_toolchain() -> list[TrustedMount]:
    """The harness's own interpreter and site-packages, at their host paths, read-only."""
    prefixes = sorted({Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), Path(sys.prefix)})
    mounts = []
    for prefix in prefixes:
        if not any(prefix != other and other in prefix.parents for other in prefixes):
            mounts.append(TrustedMount(prefix, str(prefix)))
    return mounts


def runner_mounts() -> list[TrustedMount]:
    """The runners' folder and the trusted toolchain: what every grader's sandbox gets."""
    return [TrustedMount(RUNNERS_DIR, RUNNER_INSIDE), TrustedMount(STANDINS_DIR, STANDINS_AT), *trusted_toolchain()]


def runner_argv(runner: str, *args: str) -> list[str]:
    """The command line of a trusted runner inside the sandbox: the harness's Python, isolated mode."""
    return [sys.executable, "-I", f"{RUNNER_INSIDE}/{runner}", *args]


@dataclass(frozen=True)
class GradedHome:
    """A copy of the agent's home to grade, with what every trusted run on it takes from the sandbox it came from."""

    path: Path
    settings: SandboxSettings
    """The sandbox's settings: a task's cpus and memory hold for its grader too."""
    network: str | None = None
    """The agent's network, for a task graded beside the agent (a server it left running answers); None: the run's own."""
    root: LayeredRoot | None = None
    """A whole-machine task's snapshot as layers (``path`` is then the snapshot's folder, not a home)."""

    def request(self, argv: list[str], mounts: list[TrustedMount], secret: bytes, timeout_s: float, cwd: str) -> IsolatedRequest:
        """One trusted run of ``argv`` on this copy."""
        return IsolatedRequest(self.path, argv, mounts, secret, timeout_s, self.settings, cwd, self.network, self.root)


def grade_snapshot(
    backend: SandboxBackend,
    sandbox: Sandbox,
    scratch: Path | None,
    grade: Callable[[GradedHome, Path], Verdict],
    failed: Callable[[str], Verdict],
    *,
    beside_agent: bool = False,
    grader_user: str | None = None,
) -> Verdict:
    """Copy the home, grade the copy with ``grade(graded home, snapshot folder)``, always remove it.

    ``beside_agent``: the grader's runs join ``sandbox``'s network (:meth:`.Sandbox.grading_network`).
    ``grader_user``: who grades a whole-machine snapshot (None: root).
    Any exception is the harness's failure, turned into a verdict by ``failed``.
    """
    started = time.monotonic()
    snap_dir = (scratch or backend.workroot) / f"snap-{secrets.token_hex(6)}"
    try:
        home = sandbox.snapshot(snap_dir)
        network = sandbox.grading_network() if beside_agent else None
        root = sandbox.layered_root(home, grader_user)
        verdict = grade(GradedHome(home, sandbox.settings, network, root), snap_dir)
    except Exception as exc:  # noqa: BLE001 - any failure here is the harness's, reported as such
        verdict = failed(f"{type(exc).__name__}: {exc}")
    finally:
        shutil.rmtree(snap_dir, ignore_errors=True)
    verdict.duration_s = time.monotonic() - started
    return verdict


def run_signed(backend: SandboxBackend, home: GradedHome, argv: list[str], mounts: list[TrustedMount], timeout_s: float, cwd: str, what: str) -> tuple[dict | None, str]:
    """Run a trusted runner on a fresh key: (its authenticated body, "") or (None, why there is none)."""
    key = secrets.token_bytes(32)
    run = backend.run_isolated(home.request(argv, mounts, key, timeout_s, cwd))
    if run.timed_out:
        return None, f"{what} did not finish within {timeout_s:g} s"
    body = authenticated_body(run.payload, key)
    if body is None:
        tail = run.log.strip().splitlines()[-5:]
        return None, f"no authenticated result came back from {what}: " + " | ".join(tail)
    return body, ""
