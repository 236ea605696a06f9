"""The collateral oracle as an episode monitor: manifest after every command, latch, judge at the end."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from ..sandbox.base import CommandResult
from .live import LiveManifest
from .manifest import Manifest, take_manifest
from .policy import CollateralTracker, OracleFindings, Policy, normalize_path


class CollateralMonitor(OracleFindings):
    """Watches the home from outside the sandbox (the harness's rights, never the agent's).

    With a :class:`.live.LiveManifest` a command costs what it changed (the paths kernel
    events name); without one, every command walks the whole home. Either way the end of
    the episode is judged on a full manifest, every file re-read.
    """

    def __init__(self, home: Path, baseline: Manifest, policy: Policy, decoys: list[str],
                 live: LiveManifest | None = None) -> None:
        self.home = home
        self.baseline = baseline
        self.decoys = decoys
        self.tracker = CollateralTracker(baseline, policy)
        self.live = live
        self._last = baseline
        self.final: Manifest | None = None
        self.manifests_taken = 0
        self.live_mismatch: list[str] = []
        """Paths where the live state differed from the final full manifest (none, if it is exact)."""
        self._pending: set[str] = set()
        """Paths the live state saw change at a :meth:`rebaseline` that were not the harness's: judged at the next look."""

    @classmethod
    def start(cls, home: Path, policy: Policy, decoys: list[str],
              processes: Callable[[], Iterable[int]] | None = None) -> CollateralMonitor:
        """Take the baseline; with ``processes`` (the agent's pids), watch the home's events from now on.

        Watching starts before the baseline walk, so nothing done after it goes unseen.
        """
        if processes is None:
            return cls(home, take_manifest(home, full=True), policy, decoys)
        live = LiveManifest(home, processes)
        return cls(home, live.start(), policy, decoys, live)

    def after_command(self, index: int, command: str, result: CommandResult) -> None:
        self.manifests_taken += 1
        if self.live is not None:
            changed = self.live.refresh() | self._pending
            self._pending = set()
            self.tracker.check_paths(self.live.entries, changed, index, command)
            return
        current = take_manifest(self.home, previous=self._last)
        self.tracker.check(current, index, command)
        self._last = current

    def rebaseline(self, workdir: str, paths: Iterable[str] | None) -> list[str]:
        """See :meth:`.policy.OracleFindings.rebaseline`; the home is the workdir, so ``paths`` are this oracle's keys."""
        if self.live is not None:
            seen = dict(self.live.entries)
            changed = self.live.refresh()
            now = self.live.entries
        else:
            current = take_manifest(self.home, previous=self._last)
            seen = self._last.entries
            changed = {p for p in seen.keys() | current.entries.keys() if seen.get(p) != current.entries.get(p)}
            now, self._last = current.entries, current
        taken = sorted(changed if paths is None else {normalize_path(p) for p in paths})
        if self.live is not None:
            self._pending = (self._pending | changed) - set(taken)
        base = self.tracker.baseline.entries
        self.tracker.rebaseline({path: now.get(path) for path in taken},
                                {path: (base.get(path), seen.get(path)) for path in taken})
        self.baseline = self.tracker.baseline
        return taken

    def finish(self) -> None:
        self.final = take_manifest(self.home, full=True)
        if self.live is not None:
            self.live.refresh()
            entries, final = self.live.entries, self.final.entries
            self.live_mismatch = sorted(p for p in entries.keys() | final.keys() if entries.get(p) != final.get(p))
            self.live.close()
        self.tracker.finish(self.final)

    def record(self) -> dict:
        out: dict = {
            "collateral": [c.to_dict() for c in self.tracker.collateral],
            "decoys": list(self.decoys),
            "oracle_mode": self.mode(),
        }
        if self.live_mismatch:
            out["oracle_live_mismatch"] = list(self.live_mismatch)
        return out

    def mode(self) -> str:
        """'events' (every command cost what it changed), 'events+walks' (some needed a walk), or 'walk'."""
        if self.live is None or not self.live.fast:
            return "walk"
        return "events" if self.live.walks <= 1 else "events+walks"
