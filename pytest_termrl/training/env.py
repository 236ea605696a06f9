"""The training environment: TRL's GRPOTrainer plays real episodes through the harness.

TRL (``environment_factory``) makes one environment object per rollout, calls its
``reset(**row)`` before generation, exposes its public methods as tools (here only
``bash``) during its multi-turn tool loop, and scores each finished rollout with its
``get_reward()``. Behind that interface each rollout is one ordinary episode of the
harness, played by :meth:`Harness.play` on a fresh sandbox in a thread of its own:

* ``reset`` starts the thread: new sandbox, the row's fault (at the contract's frozen
  target, as the plugin's ``termrl_fault`` fixture does), decoys and baseline manifest, then the episode loop, which waits for the model.
* ``bash(command)`` hands the command to the loop through :class:`BridgeAgent` and
  returns the observation text a model gets from the openai agent (output, exit code,
  commands left), after the collateral oracle has seen the command. Once the loop has
  stopped (tool-call limit, command budget, wall clock) a call is answered as not run.
* ``get_reward()`` ends the episode (the model stopped calling the tool), waits for the
  verifier and returns ``EpisodeOutcome.reward``: the same number, computed by the same
  code, as the pytest plugin reports for that episode (-1 with collateral, else
  0.5 x complete + 0.5 x fraction of hidden tests passed). A harness error (a broken
  setup, a grader that could not judge: ``verifier_error``) is no score of the model's:
  ``get_reward`` answers None, which TRL counts as unscorable (left out of its group's
  baseline, advantage 0), unless the oracle saw collateral, which stays -1.

When TRL asks for the first reward of a batch every rollout of that batch has finished
generating, so the session ends them all at once and the verifiers run in parallel.
No torch here: the environment is plain Python and is tested without a model.
"""

from __future__ import annotations

import atexit
import itertools
import json
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..agents.base import Agent, AgentContext, Observation, Turn
from ..agents.conversation import initial_messages
from ..agents.openai_agent import NOT_RUN
from ..episode import EpisodeOutcome, EpisodeSpec
from ..faults import CLEAN
from ..harness import Harness
from ..report.episodes import EpisodeLog
from ..report.record import EndReason, EpisodeRecord, episode_id
from ..tasks.suite import LoadedTask, Suite, load_suite

ENDED_TEXT = "[the command was not run: the episode ended ({reason})]"


# -- the agent the episode loop sees -------------------------------------------------------
_END = object()


class BridgeAgent(Agent):
    """An agent whose commands come from outside: the trainer's model, through ``bash``.

    ``next_turn`` blocks until the environment hands it a command (or the end); the
    observation of each command goes back the same way. The transcript it keeps is the
    episode as the harness saw it (one tool call per command, its result text).
    """

    name = "trl"

    def __init__(self, model: str | None = None) -> None:
        super().__init__()
        self.model = model
        self.commands: queue.Queue = queue.Queue()
        self.observations: queue.Queue = queue.Queue()
        self.context: AgentContext | None = None
        self._pending: str | None = None
        self._seq = 0

    def start(self, context: AgentContext) -> None:
        self.context = context
        self.messages = initial_messages(context)

    def next_turn(self, last: Observation | None) -> Turn:
        if last is not None and self._pending is not None:
            text = last.as_tool_text()
            self.messages.append({"role": "tool", "tool_call_id": self._pending, "content": text})
            self._pending = None
            self.observations.put(text)
        item = self.commands.get()
        if item is _END:
            self.messages.append({"role": "assistant", "content": ""})
            return Turn(end_reason=EndReason.NO_TOOL_CALL)
        self._seq += 1
        self._pending = f"call_{self._seq}"
        self.usage.tool_calls += 1
        call = {"id": self._pending, "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": item})}}
        self.messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        return Turn(command=item)

    def transcript(self) -> list[dict]:
        messages = [dict(m) for m in self.messages]
        if self._pending is not None:
            messages.append({"role": "tool", "tool_call_id": self._pending, "content": NOT_RUN})
        return messages


# -- one rollout = one episode in a thread --------------------------------------------------
@dataclass
class RolloutResult:
    outcome: EpisodeOutcome | None
    record: dict
    reward: float
    """The record's reward (a harness error's is 0, as the plugin reports it)."""

    @property
    def trainer_reward(self) -> float | None:
        """What the trainer gets: None for a harness error without collateral (not the model's score)."""
        if self.record.get("harness_error") and not self.record.get("violations"):
            return None
        return self.reward


class Rollout:
    """One episode played for one rollout; driven by ``run`` (bash) and ``end``."""

    def __init__(self, session: "RolloutSession", row: dict, index: int) -> None:
        self.session = session
        self.row = row
        self.index = index
        self.loaded = session.task(row["suite"], row["task_id"])
        family = row.get("family", CLEAN)
        prompt = row.get("prompt_name") or "p0_default"
        label = episode_id(row["task_id"], family, prompt, f"r{index}")
        self.spec = EpisodeSpec(str(Path(row["suite"])), row["task_id"], family, prompt, attempt=index, label=label)
        self.salt = str(row.get("salt", ""))
        self.agent = BridgeAgent(session.model_name)
        self.commands_sent = 0
        self.ended = threading.Event()
        self.end_reason: str | None = None
        self.result: RolloutResult | None = None
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._play, name=f"termrl-rollout-{index}", daemon=True)
        self._thread.start()

    def _play(self) -> None:
        harness = self.session.harness
        outcome = None
        error = None
        sandbox = None
        try:
            sandbox = harness.new_sandbox(self.loaded, self.spec.id)
            fault = harness.inject(self.loaded, sandbox, self.spec.family)
            outcome = harness.play(self.spec, self.loaded, sandbox, self.agent, fault=fault)
        except Exception as exc:  # noqa: BLE001 - a broken setup is a harness error, scored as a failure
            error = f"{type(exc).__name__}: {exc}"
        finally:
            if sandbox is not None:
                try:
                    sandbox.close()
                except Exception as exc:  # noqa: BLE001
                    error = error or f"sandbox close: {exc}"
        if outcome is not None:
            record = outcome.to_record().to_dict()
            reward = outcome.reward
        else:
            agent = self.agent
            message = error or "episode did not run"
            record = EpisodeRecord.harness_error_record(self.spec, agent.name, message, agent.model, self.loaded.task).to_dict()
            reward = 0.0
        record["rollout"] = {"index": self.index, "batch": self.session.batch, "row_id": self.row.get("row_id"), "salt": self.salt}
        self.result = RolloutResult(outcome, record, reward)
        self.end_reason = record.get("end_reason")
        self.ended.set()
        self.agent.observations.put(_END)  # a command the loop stopped before running
        self._done.set()

    def run(self, command: str) -> str:
        """Run one command of the model's; the observation text (or why it did not run)."""
        with self._lock:
            if self.ended.is_set() or self.end_requested:
                return ENDED_TEXT.format(reason=self.end_reason or EndReason.STOPPED)
            self.commands_sent += 1
            self.agent.commands.put(command)
            reply = self.agent.observations.get()
        if reply is _END:
            return ENDED_TEXT.format(reason=self.end_reason or EndReason.STOPPED)
        return reply

    end_requested = False

    def request_end(self) -> None:
        """The model is done: let the loop stop and the verifier run (returns at once)."""
        if not self.end_requested:
            self.end_requested = True
            self.agent.commands.put(_END)

    def wait(self, timeout: float | None = None) -> RolloutResult:
        if not self._done.wait(timeout):
            raise TimeoutError(f"rollout {self.spec.id} did not finish in {timeout} s")
        assert self.result is not None
        return self.result


class RolloutSession:
    """What the environments of one trainer share: harness, suites, episode log, live rollouts."""

    def __init__(
        self,
        harness: Harness,
        *,
        model_name: str | None = None,
        episodes: Path | None = None,
        finish_batch_together: bool = True,
        verify_timeout_s: float = 1800.0,
    ) -> None:
        self.harness = harness
        self.model_name = model_name
        self.log = EpisodeLog(Path(episodes)) if episodes else None
        self.finish_batch_together = finish_batch_together
        self.verify_timeout_s = verify_timeout_s
        self.batch = 0
        self.results: list[RolloutResult] = []
        """Every finished rollout, in the order TRL asked for the rewards."""
        self._suites: dict[str, Suite] = {}
        self._live: list[Rollout] = []
        self._counter = itertools.count()
        self._lock = threading.Lock()
        self._rewarded_since_reset = False
        atexit.register(self.close)

    def task(self, suite_root: str, task_id: str) -> LoadedTask:
        key = str(Path(suite_root).resolve())
        if key not in self._suites:
            self._suites[key] = load_suite(Path(key) / "contracts.jsonl", require_contracts=True)
        try:
            return self._suites[key].by_id(task_id)
        except KeyError:
            problem = self._suites[key].problems.get(task_id)
            raise KeyError(f"task {task_id!r} is not playable in {suite_root}{': ' + problem if problem else ''}") from None

    def start(self, row: dict) -> Rollout:
        with self._lock:
            if self._rewarded_since_reset:  # the first reset after rewards opens a new batch
                self.batch += 1
                self._rewarded_since_reset = False
            rollout = Rollout(self, row, next(self._counter))
            self._live.append(rollout)
            return rollout

    def finish(self, rollout: Rollout, together: bool | None = None) -> RolloutResult:
        """End the rollout (and, in a trainer, every live one of its batch) and return its result."""
        together = self.finish_batch_together if together is None else together
        with self._lock:
            self._rewarded_since_reset = True
            ending = list(self._live) if together else [rollout]
            for live in ending:
                live.request_end()
            rollout.request_end()
        result = rollout.wait(self.verify_timeout_s)
        with self._lock:
            if rollout in self._live:
                self._live.remove(rollout)
                self.results.append(result)
                if self.log is not None:
                    self.log.append(result.record)
        return result

    def factory(self) -> "TermrlEnvironment":
        return TermrlEnvironment(self)

    def close(self) -> None:
        """End what is still live (abandoned rollouts) and wait briefly for their sandboxes to close."""
        with self._lock:
            live, self._live = list(self._live), []
        for rollout in live:
            rollout.request_end()
        deadline = time.monotonic() + 60
        for rollout in live:
            try:
                rollout.wait(max(0.1, deadline - time.monotonic()))
            except TimeoutError:
                pass
        if self.log is not None:
            self.log.close()


class TermrlEnvironment:
    """TRL environment: one instance per rollout, reused across batches (``reset`` each time).

    Its only public methods are ``reset``, ``get_reward`` and the tool ``bash``: TRL
    exposes every other public method as a tool.
    """

    def __init__(self, session: RolloutSession) -> None:
        self._session = session
        self._rollout: Rollout | None = None

    def reset(self, **row) -> None:
        """Start a fresh episode for this row (suite, task_id, family, prompt_name, row_id, salt)."""
        if self._rollout is not None and self._rollout.result is None:
            self._session.finish(self._rollout, together=False)  # an abandoned rollout (no reward was asked)
        self._rollout = self._session.start(row)
        return None

    def bash(self, command: str) -> str:
        """Run one bash command in a persistent shell and return its output and exit code.

        Args:
            command: The bash command to run.
        """
        if self._rollout is None:
            return ENDED_TEXT.format(reason="no episode")
        return self._rollout.run(command)

    def get_reward(self) -> float | None:
        """The episode's reward, as the harness computes it (EpisodeOutcome.reward); None for a harness error."""
        if self._rollout is None:
            return 0.0
        return self._session.finish(self._rollout).trainer_reward
