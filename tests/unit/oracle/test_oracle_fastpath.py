"""The live manifest (kernel events) against a full manifest, after every command of random sequences.

Each sequence runs in a real bwrap sandbox whose task works in /app (the home's second
mount), so changes come through both names. After every command the live state must equal
``take_manifest(home, full=True)`` entry for entry, the paths it reports must cover every
path that changed, and a tracker fed by it must latch exactly what a tracker fed by full
manifests latches.
"""

from __future__ import annotations

import os
import random
import shlex
from pathlib import Path

import pytest

from pytest_termrl.agents.builtin import CommandsAgent
from pytest_termrl.episode import EpisodeSpec
from pytest_termrl.harness import Harness
from pytest_termrl.oracle.live import LiveManifest
from pytest_termrl.oracle.manifest import take_manifest
from pytest_termrl.oracle.policy import CollateralTracker, Permission, Policy
from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend
from pytest_termrl.tasks.model import Task
from pytest_termrl.tasks.suite import load_suite

CORE_CONTRACTS = Path(__file__).resolve().parents[3] / "task_suites" / "core" / "contracts.jsonl"

DIRS = ["", "d0", "d1", "d0/e0", "d1/e1", "d2"]
FILES = ["f0", "f1", "f2.txt", "notes", "x y"]
ROOTS = ["/home/user", "/app"]

# Writes through a shared mapping, the descriptor closed first: only the bytes change.
MMAP_ONCE = r"""
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
if os.fstat(fd).st_size:
    m = mmap.mmap(fd, 0)
    os.close(fd)
    m[0:1] = bytes([(m[0] + 1) % 256])
    m.flush()
    m.close()
else:
    os.close(fd)
"""
# Keeps a file mapped across commands and writes into it on request, never flushing.
MMAP_DAEMON = r"""
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0)
os.close(fd)
open("/tmp/mapped.ready", "w").close()
n = 0
while n < 10000:
    if os.path.exists(f"/tmp/go.{n}"):
        m[n % len(m)] = (m[n % len(m)] + 1) % 256
        open(f"/tmp/done.{n}", "w").close()
        n += 1
    time.sleep(0.002)
"""


def _q(path: str) -> str:
    return shlex.quote(path)


class Commands:
    """Random bash commands over a small pool of names, so they collide: replace, move over, re-create."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.pokes = 0
        self.daemon = False

    def path(self, kind: str = "any") -> str:
        rng = self.rng
        root = rng.choice(ROOTS)
        folder = rng.choice(DIRS)
        if kind == "dir":
            rel = folder or rng.choice(DIRS[1:])
        else:
            rel = f"{folder}/{rng.choice(FILES)}" if folder else rng.choice(FILES)
        return f"{root}/{rel}"

    def next(self) -> str:
        rng = self.rng
        p, q = self.path(), self.path()
        d, e = self.path("dir"), self.path("dir")
        text = "".join(rng.choice("abc\n") for _ in range(rng.randint(0, 40)))
        # Opening a FIFO to write blocks until someone reads: such writes are left out.
        w = f"[ -p {_q(p)} ] || "
        choices = [
            f"{w}printf %s {_q(text)} > {_q(p)}",
            f"{w}printf %s {_q(text)} >> {_q(p)}",
            f"{w}truncate -s {rng.randint(0, 30)} {_q(p)}",
            f"{w}: > {_q(p)}",
            f"{w}printf zz | dd of={_q(p)} conv=notrunc status=none",
            f"{w}printf %s {_q(text[:4])} > {_q(p)}; touch -d '2001-01-01 00:00' {_q(p)}",
            f"mv -f {_q(p)} {_q(q)}",
            f"mv -f {_q(d)} {_q(e)}",
            f"mv -fT {_q(d)} {_q(e)}",
            f"ln -f {_q(p)} {_q(q)}",
            f"ln -sfn {_q(rng.choice(['f0', '../d1', '/etc/passwd', 'missing']))} {_q(p)}",
            f"chmod {rng.choice(['600', '644', '755', '000', '4755'])} {_q(p)}",
            f"chmod {rng.choice(['700', '755', '711'])} {_q(d)}",
            f"rm -f {_q(p)}",
            f"rm -rf {_q(d)}",
            f"rm -f {_q(p)}; printf again > {_q(p)}",
            f"rm -rf {_q(d)}; mkdir -p {_q(d)}/e0 && printf deep > {_q(d)}/e0/f0",
            f"rm -f {_q(p)}; mkdir -p {_q(p)}",
            f"rm -rf {_q(d)}; printf now-a-file > {_q(d)}",
            f"mkdir -p {_q(d)}",
            f"mkfifo {_q(p)}",
            f"cp -a {_q(d)} {_q(e)}",
            f"mkdir -p {_q(d)} && for i in $(seq {rng.randint(20, 300)}); do printf $i > {_q(d)}/m$i; done",
            f"chmod -R {rng.choice(['u+rwX', 'go-w', 'a+r'])} {_q(d)}",
            f"python3 -c {_q(MMAP_ONCE)} {_q(p)}",
            f"{w}printf %s {_q(text)} > {_q(p)}; ln -f {_q(p)} {_q(q)}; [ -p {_q(q)} ] || printf more >> {_q(q)}",
        ]
        if not self.daemon and rng.random() < 0.15:
            self.daemon = True
            target = self.path()
            return (f"rm -rf {_q(target)}; printf 0123456789abcdef > {_q(target)}; "
                    f"(python3 -c {_q(MMAP_DAEMON)} {_q(target)} </dev/null >/dev/null 2>&1 &); "
                    "for i in $(seq 500); do [ -e /tmp/mapped.ready ] && break; sleep 0.01; done")
        if self.daemon and rng.random() < 0.3:
            n = self.pokes
            self.pokes += 1
            return f"touch /tmp/go.{n}; for i in $(seq 500); do [ -e /tmp/done.{n} ] && break; sleep 0.01; done"
        return rng.choice(choices) + " 2>/dev/null; true"


@pytest.fixture(scope="module")
def backend() -> BwrapBackend:
    return BwrapBackend(SandboxSettings(command_timeout_s=20))


def _changed(before: dict, after: dict) -> set[str]:
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


def _play(backend: BwrapBackend, tmp_path: Path, seed: int, steps: int) -> None:
    sandbox = backend.create(f"fastpath-{seed}")
    try:
        sandbox.prepare(Task(id="fastpath", title="fastpath", instruction="", root=tmp_path, workdir="/app"))
        sandbox.run("mkdir -p d0/e0 d1/e1 d2 && printf one > f0 && printf two > d0/f1 && ln -s f0 link "
                    "&& ln f0 d1/f0 && printf three > d0/e0/notes")
        rng = random.Random(seed)
        commands = Commands(rng)
        home = sandbox.home
        live = LiveManifest(home, sandbox.agent_pids)
        baseline = live.start()
        assert baseline.entries == take_manifest(home, full=True).entries
        policy = Policy([Permission("d2", frozenset({"content_changed", "deleted", "mode_changed"}), prefix=True),
                         Permission("f0", frozenset({"type_changed", "content_changed"}))])
        fast, full = CollateralTracker(baseline, policy), CollateralTracker(baseline, policy)
        previous = baseline.entries
        try:
            for index in range(1, steps + 1):
                if rng.random() < 0.08:
                    # A privileged owner change (the agent cannot make one itself).
                    victims = sorted(p for p in previous if p != ".")
                    target = home / rng.choice(victims) if victims else home
                    os.lchown(target, rng.choice([0, 1000, 1234]), rng.choice([0, 1000]))
                    command = f"(harness) chown {target.relative_to(home)}"
                else:
                    command = commands.next()
                    result = sandbox.run(command)
                    assert not result.timed_out, (seed, index, command)
                reported = live.refresh()
                current = take_manifest(home, full=True)
                where = f"seed {seed}, command {index}: {command}"
                differ = sorted(p for p in live.entries.keys() | current.entries.keys()
                                if live.entries.get(p) != current.entries.get(p))
                assert not differ, f"{where}\n  live and full differ at {differ[:10]}"
                missed = _changed(previous, current.entries) - reported
                assert not missed, f"{where}\n  changes not reported: {sorted(missed)[:10]}"
                fast.check_paths(live.entries, reported, index, command)
                full.check(current, index, command)
                assert fast.collateral == full.collateral, where
                assert fast._absent.keys() == full._absent.keys(), where
                previous = current.entries
            final = take_manifest(home, full=True)
            assert fast.finish(final) == full.finish(final)
            assert fast.collateral == full.collateral
        finally:
            live.close()
        # The sequences must exercise the fast path, not its whole-home fallback.
        assert live.fast and live.walks == 1, (live.fast, live.walks)
    finally:
        sandbox.close()


@pytest.mark.parametrize("seed", [2, 3, 4])
def test_live_manifest_equals_full_manifest(backend: BwrapBackend, tmp_path: Path, seed: int) -> None:
    _play(backend, tmp_path, seed, steps=40)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 108))
def test_live_manifest_equals_full_manifest_long(backend: BwrapBackend, tmp_path: Path, seed: int) -> None:
    _play(backend, tmp_path, seed, steps=120)


def test_overflowed_queue_walks_the_home_once(backend: BwrapBackend, tmp_path: Path) -> None:
    """More events than the kernel queues (16,384 by default): one walk of the whole home, still exact."""
    sandbox = backend.create("fastpath-overflow")
    try:
        sandbox.prepare(Task(id="fastpath", title="fastpath", instruction="", root=tmp_path))
        sandbox.run("mkdir -p keep && printf kept > keep/a")
        live = LiveManifest(sandbox.home, sandbox.agent_pids)
        try:
            live.start()
            queued = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
            files = queued // 3 + 1000  # each file: IN_CREATE, IN_MODIFY, IN_CLOSE_WRITE
            # In a folder watched already (a new folder's contents are walked, not queued).
            sandbox.run(f"cd keep && for i in $(seq {files}); do printf $i > f$i; done; chmod 600 a", timeout_s=120)
            changed = live.refresh()
            full = take_manifest(sandbox.home, full=True)
            assert live.walks == 2 and live.fast
            assert live.entries == full.entries
            assert "keep/a" in changed and "keep/f1" in changed and len(changed) == files + 1
            # Watching goes on after the walk: the next command costs what it changed.
            sandbox.run("printf again > /home/user/keep/f1")
            assert live.refresh() == {"keep/f1"} and live.walks == 2
            assert live.entries == take_manifest(sandbox.home, full=True).entries
        finally:
            live.close()
    finally:
        sandbox.close()


def test_episode_oracle_follows_events_and_latches_at_the_command(tmp_path: Path) -> None:
    """Through the harness: the bwrap episode's oracle is the live one, exact at the end, dated per command."""
    suite = load_suite(CORE_CONTRACTS)
    loaded = next(lt for lt in suite.tasks if lt.task.id == "checksum_verify")
    harness = Harness(BwrapBackend(SandboxSettings(command_timeout_s=20)))
    sandbox = harness.new_sandbox(loaded, "fastpath-episode")
    try:
        oracle = harness.watch(loaded, sandbox)
        assert oracle.live is not None and oracle.live.fast
        decoy = oracle.decoys[0]
        agent = CommandsAgent(["true", f"chmod 000 {shlex.quote(decoy)}"])
        outcome = harness.play(EpisodeSpec("core", loaded.task.id), loaded, sandbox, agent, oracle=oracle)
    finally:
        sandbox.close()
    assert oracle.live_mismatch == []
    assert oracle.live.walks == 1 and outcome.to_record().extra["oracle_mode"] == "events"
    found = [c for c in oracle.tracker.collateral if c.path == decoy]
    assert [(c.kind, c.command_index) for c in found] == [("mode_changed", len(outcome.commands))]
    assert not outcome.safe_success and outcome.reward == -1.0
