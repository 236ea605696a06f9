"""mini-swe-agent's environment in this project's sandbox: each command it runs goes through the episode loop.

mini-swe-agent's own loop runs in a thread of its own (:mod:`.mini_swe_agent` starts it). Its
environment here does not run anything itself: :meth:`EpisodeEnvironment.execute` hands the
command to the episode loop over a :class:`Handoff` and waits for what the sandbox's shell
returned, so the loop's limits, the collateral oracle and the fault monitor see every command
exactly as they see the built-in agents'. When the loop stops without answering (a budget, a
limit, the wall clock, a crash), closing the handoff wakes the waiting thread with
:class:`EpisodeOver`, which mini-swe-agent's loop takes as its exit: the thread never hangs.
"""

from __future__ import annotations

import platform
import queue
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from minisweagent.exceptions import InterruptAgentFlow, Submitted

from ..report.record import EndReason
from .base import Observation

SUBMIT_SIGNAL = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""The first line of output by which mini-swe-agent's prompts tell the model to submit (``echo`` it)."""

EXIT_STATUS = "EpisodeOver"
"""The ``exit_status`` of a mini-swe-agent run that this project's episode ended (a limit, the server, the loop)."""


class EpisodeOver(InterruptAgentFlow):
    """The episode ends mini-swe-agent's run: its exit message names the end reason (and the error, if any).

    Raised in mini-swe-agent's thread (by the model or the environment); its loop adds the exit
    message and returns, so the reason travels in the trajectory itself.
    """

    def __init__(self, reason: EndReason, detail: str, error: str | None = None, **extra: Any) -> None:
        self.reason = reason
        self.error = error
        super().__init__({
            "role": "exit",
            "content": detail,
            "extra": {"exit_status": EXIT_STATUS, "submission": "", "end_reason": str(reason), "error": error, **extra},
        })


@dataclass(frozen=True)
class Ended:
    """What the thread hands the loop when mini-swe-agent's run is over: the end reason and any harness-side error."""

    reason: EndReason
    error: str | None = None


class Handoff:
    """The rendezvous between mini-swe-agent's thread and the episode loop: commands one way, observations the other.

    Both queues are unbounded, so a put never blocks; after :meth:`close` every wait for an
    observation returns at once with None.
    """

    def __init__(self) -> None:
        self._to_loop: queue.Queue[str | Ended] = queue.Queue()
        self._to_agent: queue.Queue[Observation | None] = queue.Queue()
        self._closed = threading.Event()

    # -- mini-swe-agent's side -------------------------------------------------------------

    def run(self, command: str, wait_s: float) -> Observation | None:
        """Hand ``command`` to the loop and wait for its observation (None: the loop will not run it)."""
        if self._closed.is_set():
            return None
        self._to_loop.put(command)
        try:
            return self._to_agent.get(timeout=max(wait_s, 0.0))
        except queue.Empty:
            return None

    def finished(self, ended: Ended) -> None:
        self._to_loop.put(ended)

    # -- the loop's side -------------------------------------------------------------------

    def next(self, wait_s: float) -> str | Ended | None:
        """The thread's next command, or its end; None when nothing came within ``wait_s`` seconds."""
        try:
            return self._to_loop.get(timeout=max(wait_s, 0.0))
        except queue.Empty:
            return None

    def answer(self, observation: Observation) -> None:
        self._to_agent.put(observation)

    def close(self) -> None:
        """The loop is done: wake a thread waiting for an observation, and refuse every later command."""
        self._closed.set()
        self._to_agent.put(None)

    @property
    def closed(self) -> bool:
        return self._closed.is_set()


@dataclass
class EpisodeEnvironmentConfig:
    """What a trajectory records of the environment (mini-swe-agent's environments keep a ``config``)."""

    shell: str = "the episode's sandbox: one persistent bash (working directory and variables carry over)"
    system: dict[str, str] = field(default_factory=lambda: dict(platform.uname()._asdict()))
    """The kernel the sandbox shares with the host: the ``system``/``release``/``machine`` its prompts show."""


class EpisodeEnvironment:
    """mini-swe-agent's environment protocol over a :class:`Handoff`: ``execute`` runs a command through the episode loop."""

    def __init__(self, handoff: Handoff, deadline: float) -> None:
        self.config = EpisodeEnvironmentConfig()
        self.handoff = handoff
        self.deadline = deadline
        """``time.monotonic()`` past which no observation can come (the episode's wall clock, and a grace)."""
        self.outputs: list[dict[str, Any]] = []
        """What every command it ran returned, in order (the k-th tool call's output)."""

    def execute(self, action: dict, cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        """Run ``action['command']`` in the sandbox (``cwd`` and ``timeout`` are the shell's own: the task's workdir, the command timeout)."""
        observation = self.handoff.run(str(action.get("command", "")), self.deadline - time.monotonic())
        if observation is None:
            raise EpisodeOver(EndReason.STOPPED, "the episode ended before this command ran")
        output = observation_output(observation)
        self.outputs.append(output)
        lines = output["output"].lstrip().splitlines()
        if lines and lines[0].strip() == SUBMIT_SIGNAL and output["returncode"] == 0:
            submission = "\n".join(lines[1:])
            raise Submitted({"role": "exit", "content": submission,
                             "extra": {"exit_status": "Submitted", "submission": submission}})
        return output

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        return {**asdict(self.config), **self.config.system, **kwargs}

    def serialize(self) -> dict:
        return {"info": {"config": {"environment": asdict(self.config),
                                    "environment_type": f"{type(self).__module__}.{type(self).__name__}"}}}


def observation_output(observation: Observation) -> dict[str, Any]:
    """An observation as mini-swe-agent's environments report a command: output, return code, exception info.

    A timeout or a restarted shell is the exception info (a timed-out command's return code is
    -1, as in mini-swe-agent's own environments); the disclosed budget's count and the loop's
    notes are appended to the output as bracketed lines.
    """
    problems = []
    if observation.timed_out:
        problems.append("the command timed out and its processes were killed")
    if observation.shell_restarted:
        problems.append("the shell was restarted; working directory and variables were restored")
    text = observation.output
    notes = []
    if observation.commands_left is not None:
        notes.append(f"[commands left: {observation.commands_left}]")
    if observation.note:
        notes.append(f"[{observation.note}]")
    if notes:
        text = (text.rstrip("\n") + "\n" if text else "") + "\n".join(notes) + "\n"
    code = observation.exit_code
    return {
        "output": text,
        "returncode": -1 if code is None or observation.timed_out else code,
        "exception_info": "; ".join(problems),
    }
