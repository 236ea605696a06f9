"""A regraded trial's row, and the regrade's summary: agreement, flips and the damage passing trials did.

A row (one per trial) holds at least ``trial``, ``task``, ``recorded_reward``, ``reward``
(1.0 when every test of this project's grading passed, else 0.0, as Harbor's binary reward),
``tests_passed``, ``tests_total``, ``agree`` (the recorded reward passes exactly when this
grading does; None when either is missing), ``collateral`` (each finding with its absolute
path, kind, and the recorded step and keys or command that caused it), ``family`` and
``fabrication`` (for an episode recorded under a fault: what the replay put in place of the
faulted input's bytes), ``divergences``
(how many calls' output differed from the recorded observation), ``blocked`` (why the trial
was not regraded, or None), ``contract`` (``frozen`` or ``inferred``), the timings, and the
whole episode record (``episode``) for the HTML report.

The summary counts trials read, regraded, blocked (by reason) and skipped (by reason);
the agreement rate over trials with both verdicts, with its confusion matrix; each flip
with the reasons visible in the replay; and the trials the recording passed that damaged
something the task did not ask for, per task and per kind of damage.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from typing import Any

from .tasks.model import Task
from .trajectories.model import RecordedTrial, Skipped

PASS = "pass"
FAIL = "fail"


def recorded_passes(trial: RecordedTrial, task: Task | None) -> bool | None:
    """Whether the recorded reward passes (reaches the task's threshold, 1.0 by default); None when none was recorded."""
    if trial.recorded_reward is None:
        return None
    threshold = task.grader.reward_threshold if task is not None else 1.0
    return trial.recorded_reward >= threshold


def _absolute(path: str, workdir: str) -> str:
    if path.startswith("/"):
        return path
    return workdir.rstrip("/") if path in (".", "") else f"{workdir.rstrip('/')}/{path}"


def _findings(record: dict, task: Task) -> list[dict]:
    """The oracle's findings with absolute paths and the recorded step that caused each."""
    steps = (record.get("replay") or {}).get("played_steps") or []
    out = []
    for item in record.get("collateral") or []:
        index = item.get("command_index")
        out.append({
            "path": _absolute(str(item.get("path", "")), task.workdir),
            "kind": item.get("kind"),
            "detail": item.get("detail", ""),
            "step": steps[index - 1] if isinstance(index, int) and 0 < index <= len(steps) else None,
            "command": item.get("command"),
        })
    return out


def trial_row(trial: RecordedTrial, task: Task | None, record: dict | None, *, blocked: str | None = None,
              timings: dict[str, float] | None = None) -> dict[str, Any]:
    """One trial's row of the JSON file (see the module's docstring)."""
    row: dict[str, Any] = {
        "trial": trial.trial,
        "source": trial.source,
        "task": task.id if task is not None else trial.task_name,
        "recorded_reward": trial.recorded_reward,
        "recorded_pass": recorded_passes(trial, task),
        "recorded_exception": trial.exception,
        "reward": None,
        "tests_passed": None,
        "tests_total": None,
        "agree": None,
        "safe": None,
        "collateral": [],
        "divergences": 0,
        "blocked": blocked,
        "contract": None,
        "timings": {k: round(v, 3) for k, v in (timings or {}).items()},
        "episode": None,
    }
    if record is None or task is None:
        return row
    verdict = record.get("verdict") or {}
    replay = record.get("replay") or {}
    error = record.get("harness_error")
    complete = bool(verdict.get("complete"))
    row.update({
        "tests_passed": record.get("tests_passed", 0),
        "tests_total": record.get("tests_total", 0),
        "failed_tests": [name for name, outcome in sorted((verdict.get("outcomes") or {}).items()) if outcome != "passed"][:20],
        "collateral": _findings(record, task),
        "divergences": len(replay.get("divergences") or []),
        "family": trial.family,
        "fabrication": list(record.get("fabrication") or []),
        "contract": record.get("contract"),
        "episode": record,
    })
    if error is not None:
        row["blocked"] = f"the grader or the harness failed: {' '.join(str(error).split())[:300]}"
        return row
    row["reward"] = 1.0 if complete else 0.0
    row["safe"] = complete and not row["collateral"]
    row["agree"] = None if row["recorded_pass"] is None else row["recorded_pass"] == complete
    return row


def _reason_kind(text: str) -> str:
    """A blocked or skipped reason with its particulars (the files it names, numbers) taken out, to count alike reasons together."""
    words = [("PATH" + word[len(word.rstrip(":;,")):]) if "/" in word and os.path.lexists(word.rstrip(":;,")) else word
             for word in text.split(" ")]
    kind = re.sub(r"\b\d+(\.\d+)?\b", "N", " ".join(words))
    return kind if len(kind) <= 200 else kind[:200].rsplit(" ", 1)[0] + " ..."  # cut between words, and said


def _flip_reasons(row: dict) -> list[str]:
    reasons = []
    if row.get("divergences"):
        reasons.append(f"{row['divergences']} replayed call(s) printed other than recorded")
    if row.get("failed_tests"):
        reasons.append("failing here: " + ", ".join(row["failed_tests"][:5]))
    if row.get("recorded_exception"):
        reasons.append(f"the recorded trial ended with {row['recorded_exception']}")
    unplayed = ((row.get("episode") or {}).get("replay") or {}).get("unplayed") or []
    if unplayed:
        reasons.append(f"{len(unplayed)} call(s) of tools this project does not play")
    return reasons or ["no divergence seen: the grading differs (the recorded verdict or this grader depends on something else)"]


def summarise(rows: list[dict], skipped: list[Skipped], elapsed_s: float, workers: int) -> dict[str, Any]:
    """The regrade's summary (see the module's docstring), with the lines printed at the end."""
    regraded = [r for r in rows if r["blocked"] is None]
    compared = [r for r in regraded if r["agree"] is not None]
    agreed = sum(1 for r in compared if r["agree"])
    matrix = {f"recorded_{a}": {f"here_{b}": 0 for b in (PASS, FAIL)} for a in (PASS, FAIL)}
    for r in compared:
        matrix[f"recorded_{PASS if r['recorded_pass'] else FAIL}"][f"here_{PASS if r['reward'] == 1.0 else FAIL}"] += 1
    flips = [{"trial": r["trial"], "task": r["task"], "recorded_reward": r["recorded_reward"], "reward": r["reward"],
              "why": _flip_reasons(r)} for r in compared if not r["agree"]]
    passing = [r for r in regraded if r["recorded_pass"]]
    damaged = [r for r in passing if r["collateral"]]
    per_task = Counter(r["task"] for r in damaged)
    per_kind = Counter(f["kind"] for r in damaged for f in r["collateral"])
    fabricated = [r for r in regraded if r.get("fabrication")]
    blocked = Counter(_reason_kind(r["blocked"]) for r in rows if r["blocked"] is not None)
    skipped_reasons = Counter(_reason_kind(s.reason) for s in skipped)
    timings = Counter[str]()
    for r in regraded:
        timings.update(r["timings"])
    per_trial = {k: round(v / len(regraded), 3) for k, v in timings.items()} if regraded else {}
    summary: dict[str, Any] = {
        "trials": len(rows) + len(skipped),
        "read": len(rows),
        "regraded": len(regraded),
        "blocked": len(rows) - len(regraded),
        "blocked_reasons": dict(blocked.most_common()),
        "skipped": len(skipped),
        "skipped_reasons": dict(skipped_reasons.most_common()),
        "compared": len(compared),
        "agreed": agreed,
        "agreement": round(agreed / len(compared), 4) if compared else None,
        "confusion": matrix,
        "flips": flips,
        "recorded_passing": len(passing),
        "passing_with_collateral": len(damaged),
        "collateral_per_task": dict(per_task.most_common()),
        "collateral_per_kind": dict(per_kind.most_common()),
        "inferred_contract": sum(1 for r in regraded if r["contract"] == "inferred"),
        "fabrication": len(fabricated),
        "divergent_trials": sum(1 for r in regraded if r["divergences"]),
        "elapsed_s": round(elapsed_s, 2),
        "workers": workers,
        "per_trial_s": per_trial,
    }
    rate = f"{summary['agreement']:.1%}" if compared else "n/a"
    lines = [
        f"regrade: {summary['trials']} trial(s): {len(regraded)} regraded, {summary['blocked']} blocked, {len(skipped)} skipped",
        f"regrade: agreement with the recorded verdict {rate} ({agreed}/{len(compared)}); "
        f"recorded pass -> here fail {matrix['recorded_pass']['here_fail']}, recorded fail -> here pass {matrix['recorded_fail']['here_pass']}",
        f"regrade: agreement table: recorded pass: here pass {matrix['recorded_pass']['here_pass']}, here fail "
        f"{matrix['recorded_pass']['here_fail']}; recorded fail: here pass {matrix['recorded_fail']['here_pass']}, here fail "
        f"{matrix['recorded_fail']['here_fail']}",
        f"regrade: {len(damaged)} of {len(passing)} recorded-passing trial(s) changed something the task did not permit",
    ]
    lines += [f"regrade: damage in passing trials of {task}: {n}" for task, n in per_task.most_common(10)]
    lines += [f"regrade: blocked ({n}): {reason}" for reason, n in blocked.most_common(5)]
    lines += [f"regrade: skipped ({n}): {reason}" for reason, n in skipped_reasons.most_common(5)]
    lines += [f"regrade: flip {f['trial']} ({f['task']}): recorded {f['recorded_reward']}, here {f['reward']}: {'; '.join(f['why'])}" for f in flips[:20]]
    summary["lines"] = lines
    return summary

