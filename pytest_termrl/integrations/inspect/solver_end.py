"""The end of the agent's turn, at the moment Inspect's solver ends: before any scorer of the sample runs.

Inspect announces that moment to its hooks (``on_sample_scoring``: "the end of solver
execution and the start of scoring"); this hook ends the turn of the sample's ``termrl``
sandbox there, so the oracle judges the state the solver left whatever scorers follow and
in whatever order (a scorer of the user's that runs commands is not taken for the agent).
The termrl scorers end the turn too (it is idempotent), for a run where this hook is off.
"""

from __future__ import annotations

from inspect_ai.hooks import Hooks, SampleScoring, hooks
from inspect_ai.util import sandbox

from .provider import TermrlSandbox

@hooks(name="termrl_solver_end", description="Ends the agent's turn in termrl sandboxes when the solver ends.")
class SolverEnd(Hooks):
    async def on_sample_scoring(self, data: SampleScoring) -> None:
        try:
            env = sandbox()
        except (ProcessLookupError, LookupError, ValueError):
            return  # a sample without a sandbox
        try:
            machine = env.as_type(TermrlSandbox)  # the provider's object behind Inspect's recording proxy
        except TypeError:
            return  # another provider's sandbox
        await machine.finish()
