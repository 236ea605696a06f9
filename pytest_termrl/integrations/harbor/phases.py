"""Which phase of a Harbor trial a call into the environment belongs to, read from Harbor's own call chain.

Agent set-up (an installed agent's own installs), the agent's run, Harbor's log and
artifact collection and the verifier's ``test.sh`` all reach the environment the same
way, through ``exec`` and the file transfers. Harbor 0.25 has trial hooks
(``TrialEvent.AGENT_START``...), but they are registered on the trial by the job, and an
environment loaded by import path holds no handle to either; so the phase is read from
the trial's fixed order instead: the coroutine that made the call runs inside exactly one
of Harbor's phase methods (``Trial._setup_agent``, ``Trial._run_agent_phase``,
``Verifier.verify``...), and the innermost one on the call chain names the phase. A
call made from none of them (a task an agent spawned) is ``None``: the caller decides.
"""

from __future__ import annotations

import enum
import sys
from types import FrameType


class Phase(enum.Enum):
    SETUP = "setup"
    """Environment health check, skills upload, agent (and user-agent, bridge) set-up."""
    AGENT = "agent"
    """The agent's run: every command here is judged by the oracle."""
    COLLECT = "collect"
    """Harbor downloading the agent's logs and the artifacts, after the run."""
    VERIFY = "verify"
    """The verifier: reward files reset, tests uploaded, ``test.sh`` run, its folder downloaded."""


HARBOR_PHASE_METHODS: dict[str, Phase] = {
    "_run_agent_phase": Phase.AGENT,
    "_setup_agent": Phase.SETUP,
    "_setup_user_agent": Phase.SETUP,
    "_setup_bridge": Phase.SETUP,
    "_upload_injected_skills": Phase.SETUP,
    "run_healthcheck": Phase.SETUP,
    "_prepare": Phase.SETUP,
    "_sync_agent_output": Phase.COLLECT,
    "_download_agent_logs": Phase.COLLECT,
    "_upload_agent_logs": Phase.COLLECT,
    "_collect_artifacts_phased": Phase.COLLECT,
    "_recover_outputs": Phase.COLLECT,
    "_close_bridge": Phase.COLLECT,
    "verify": Phase.VERIFY,
    "_run_verifier": Phase.VERIFY,
    "_run_shared_verifier": Phase.VERIFY,
    "_run_separate_verifier": Phase.VERIFY,
    "_run_step_verifier": Phase.VERIFY,
}
"""Harbor 0.25's trial and verifier methods, each the phase its calls belong to (the innermost wins)."""


def current_phase(frame: FrameType | None = None) -> Phase | None:
    """The phase of the Harbor method nearest on the call chain (an awaited coroutine's caller is its ``f_back``)."""
    frame = frame if frame is not None else sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("harbor."):
            phase = HARBOR_PHASE_METHODS.get(frame.f_code.co_name)
            if phase is not None:
                return phase
        frame = frame.f_back
    return None
