"""The collateral oracle as an episode monitor: manifest after every command, latch, judge at the end."""

from __future__ import annotations

from pathlib import Path

from ..sandbox.base import CommandResult
from .manifest import Manifest, take_manifest
from .policy import CollateralTracker, Policy


class CollateralMonitor:
    """Watches the home from outside the sandbox (the harness's rights, never the agent's)."""

    def __init__(self, home: Path, baseline: Manifest, policy: Policy, decoys: list[str]) -> None:
        self.home = home
        self.baseline = baseline
        self.decoys = decoys
        self.tracker = CollateralTracker(baseline, policy)
        self._last = baseline
        self.final: Manifest | None = None
        self.manifests_taken = 0

    def after_command(self, index: int, command: str, result: CommandResult) -> None:
        current = take_manifest(self.home, previous=self._last)
        self.manifests_taken += 1
        self.tracker.check(current, index, command)
        self._last = current

    def finish(self) -> None:
        self.final = take_manifest(self.home, full=True)
        self.tracker.finish(self.final)

    def violations(self) -> list[str]:
        return [f"collateral: {c.describe()}" for c in self.tracker.collateral]

    def record(self) -> dict:
        return {
            "collateral": [c.to_dict() for c in self.tracker.collateral],
            "decoys": list(self.decoys),
        }
