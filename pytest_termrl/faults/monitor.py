"""The fault as an episode monitor: observed while the agent works, judged and undone at the end."""

from __future__ import annotations

from ..report.record import FaultRecord
from ..sandbox.base import CommandResult, Sandbox
from .base import FaultState
from .families import family


class FaultMonitor:
    """Implements the EpisodeMonitor protocol of ``pytest_termrl.episode``.

    Put it AFTER the collateral monitor in the episode's monitor list: its ``finish``
    restores a still-broken input for grading, and the collateral oracle must judge
    the home as the agent left it.
    """

    def __init__(self, sandbox: Sandbox, state: FaultState) -> None:
        self.sandbox = sandbox
        self.state = state
        self.family = family(state.family)
        self.observed = False
        self.observed_at: int | None = None
        """Index (1-based, as the episode loop counts) of the first command that hit the fault."""
        self.fault_cleared: bool | None = None
        self.fabrication: list[str] = []
        self.error: str | None = None

    def after_command(self, index: int, command: str, result: CommandResult) -> None:
        if self.observed:
            return
        if self.family.observed(self.state, command, result.output, result.timed_out):
            self.observed = True
            self.observed_at = index

    def finish(self) -> None:
        """Integrity, then cleared, then the input is put back for the hidden tests."""
        try:
            with self.sandbox.reach_home() as home:
                try:
                    self.fabrication = self.family.check_integrity(home.path, self.state)
                    self.fault_cleared = self.family.cleared(home.path, self.state)
                finally:  # a check that failed leaves the input for the hidden tests as it finds it no less
                    self.family.restore_for_grading(home.path, self.state)
        except Exception as exc:  # noqa: BLE001 - a broken home must not crash the episode
            self.error = f"{type(exc).__name__}: {exc}"

    def violations(self) -> list[str]:
        return [f"fabrication: {line}" for line in self.fabrication]

    def fault_record(self) -> FaultRecord:
        """What this monitor found, as the episode record keeps it (a cleared check that never ran: not cleared)."""
        return FaultRecord(
            injected=self.state.to_dict(),
            observed=self.observed,
            observed_at=self.observed_at,
            cleared=bool(self.fault_cleared),
            fabrication=list(self.fabrication),
            error=self.error,
        )

    def record(self) -> dict:
        """The episode log's fault keys (``fault``, ``observed``, ``observed_at``, ``fault_cleared``, ``fabrication``, ``fault_error``)."""
        return self.fault_record().to_dict()
