"""The daemonless builder against the engine: the same Dockerfile built by both, the trees it makes compared path by path.

The base is the project's own (``termrl-base:1``, built offline by .ci/docker-setup.sh), which
the host stands in for on bwrap; both are Debian of the same release. Compared under the
folders the Dockerfile writes: each path's type, mode, owner, group, link target and the
digest of its bytes. The engine here has the classic builder (no BuildKit), so the
Dockerfile keeps to what both builders do alike: no heredoc, no ``--chmod``, no ``WORKDIR``
made under a ``USER`` (BuildKit gives that folder to the user, the classic builder to root;
the builder follows BuildKit).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import engine_problem, require_engine
from pytest_termrl.sandbox.base import SandboxSettings
from pytest_termrl.sandbox.build.builder import Builder
from pytest_termrl.sandbox.build.step_run import run_step
from pytest_termrl.sandbox.build.store import LayerStore
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend
from pytest_termrl.sandbox.bwrap.overlay import Account

ENGINE_CASE = Path(__file__).resolve().parents[1] / "data" / "build" / "engine"
ROOTS = "/opt/ledger /etc/ledger /var/lib/ledger /srv/ledger /home/ops /usr/local/bin/ledger"
LISTING = (
    f"find {ROOTS} -printf '%p|%y|%m|%U|%G|%l\\n' | sort; "
    f"find {ROOTS} -type f -exec sha256sum {{}} + | sort; "
    "grep -E '^ops:' /etc/passwd /etc/group; "
    "echo \"$TOOL_HOME\""
)


def _engine_listing(tag: str) -> str:
    subprocess.run(["docker", "build", "-q", "-t", tag, str(ENGINE_CASE)], check=True, capture_output=True, text=True,
                   env={**os.environ, "DOCKER_BUILDKIT": "0"}, timeout=600)
    try:
        return subprocess.run(["docker", "run", "--rm", "--network", "none", tag, "sh", "-c", LISTING], check=True,
                              capture_output=True, text=True, timeout=120).stdout
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True)


def _bwrap_listing(store: Path) -> str:
    backend = BwrapBackend(SandboxSettings())
    try:
        builder = Builder(backend.bwrap, backend.workroot, backend.machine_lowers(), LayerStore(store), backend.settings)
        image = builder.build(ENGINE_CASE / "Dockerfile")
        folder = builder.folders.new("compare")
        env = {**dict(image.env), "PATH": "/usr/local/bin:/usr/bin:/bin"}
        result, storage = run_step(builder.bwrap, builder.workroot, folder, builder.lowers_for(image.base), builder.trees(image.layers),
                                   argv=["/bin/sh", "-c", LISTING], account=Account(0, 0, "root", "/root"), groups=(), cwd="/",
                                   env=env, settings=builder.settings, timeout_s=120)
        storage.release()
        shutil.rmtree(folder, ignore_errors=True)
        assert result.exit_code == 0, result.output
        return result.output
    finally:
        backend.close()


def test_the_builder_makes_the_tree_the_engine_makes(tmp_path):
    require_engine(engine_problem())
    engine = _engine_listing(f"termrl-build-compare:{os.getpid()}").splitlines()
    ours = _bwrap_listing(tmp_path / "cache").splitlines()
    assert len(engine) > 20, engine
    differing = sorted(set(engine) ^ set(ours))
    assert not differing, "paths that differ (engine vs builder):\n" + "\n".join(differing)
