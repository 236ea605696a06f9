"""Regrade recorded runs: replay each trial in a fresh sandbox, grade it with this project's verifier and oracle.

``python -m pytest_termrl.regrade PATH... [--tasks DIR] [-n N] --json OUT.json [--html OUT.html]``

PATH is a Harbor job folder, a trial folder, an ATIF ``trajectory.json`` or one of this
project's episode logs. Each trial's task is found by the name it was recorded under
(Harbor's ``task_name``, the last part of config.json's task path, an episode's task id)
among the task folders under ``--tasks``; without ``--tasks``, config.json's task path is
tried as written, from the current folder and from the job's parent. Each trial is played
by the replay agent (:mod:`.agents.replay`) against its task, graded by the task's grader,
and judged by the collateral oracle: against the task's frozen contract when its folder
is a suite's, else against the policy inferred from the task (:mod:`.oracle.inferred`;
the trial then says ``contract: inferred``). ``--policy inferred`` judges every trial by the
inferred policy, which measures that policy against tasks whose footprint is known.

The JSON file is ``{"summary": {...}, "trials": [...]}``; :mod:`.regrade_summary` says
what the summary holds. Each trial's row is also appended to ``OUT.trials.jsonl`` as it
finishes, so a regrade killed midway loses no finished trial: ``--resume`` keeps those rows
and regrades only the others. The HTML report shows the replays as a run's episodes, with the
agreement table above them.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .agents.replay import ReplayAgent
from .episode import EpisodeSpec
from .errors import TermrlError
from .faults import CLEAN
from .harness import Harness, default_harness
from .regrade_summary import summarise, trial_row
from .report.html import Run, write_html
from .report.outputs import write_whole
from .settings import COMMAND_TIMEOUT_S
from .tasks.contracts import CONTRACTS_FILE
from .tasks.importers import load_task_dir, scan
from .tasks.suite import LoadedTask, Suite, load_suite
from .trajectories.discover import read_recorded
from .trajectories.model import RecordedTrial, Skipped


@dataclass(frozen=True)
class Job:
    """One trial to regrade, with where its task is (None: why it cannot be found)."""

    index: int
    trial: RecordedTrial
    task_dir: Path | None
    blocked: str | None = None
    policy: str = "contract"
    """``contract``: the suite's frozen contract where there is one; ``inferred``: always the inferred policy."""


def task_index(folders: list[Path]) -> tuple[dict[str, Path], list[str]]:
    """Every task under ``folders`` by each name a trial may use (its id, its own id, its folder's name), and the problems met."""
    index: dict[str, Path] = {}
    problems: list[str] = []
    for folder in folders:
        tasks, broken = scan(folder)
        problems += list(broken.values())
        for task in tasks:
            for name in (task.id, task.source.id, task.root.name):
                if name:
                    index.setdefault(name, task.root)
    return index, problems


def find_task(trial: RecordedTrial, index: dict[str, Path], searched: bool) -> tuple[Path | None, str | None]:
    """The task folder of ``trial``, or why there is none; with ``--tasks`` only the folders found there count."""
    names = [n for n in (Path(trial.task_path).name if trial.task_path else None, trial.task_name) if n]
    for name in names:
        if name in index:
            return index[name], None
    if searched:
        return None, f"task {' / '.join(dict.fromkeys(names)) or '(unnamed)'} not found under --tasks"
    if trial.task_path:
        source = Path(trial.source)
        for base in (Path.cwd(), source.parent.parent, source.parent):
            candidate = (base / trial.task_path).resolve()
            if candidate.is_dir() and ((candidate / "task.toml").exists() or (candidate / "task.yaml").exists()):
                return candidate, None
    return None, f"task {trial.task_name or trial.task_path or '(unnamed)'} not found: give the task folders with --tasks"


# -- one trial, in a worker -------------------------------------------------------------
_HARNESS: Harness | None = None


def _start_worker(backend: str, command_timeout_s: float, salt: str = "") -> None:
    global _HARNESS
    _HARNESS = default_harness(backend, command_timeout_s=command_timeout_s)
    _HARNESS.salt = salt  # the recorded run's: a fault's hidden names depend on it


def _loaded(task_dir: Path, policy: str) -> tuple[LoadedTask, bool]:
    """The task, with its contract when its folder is a suite's (else, or with ``policy`` inferred, judged by the inferred policy: True)."""
    suite_file = task_dir.parent / CONTRACTS_FILE
    if suite_file.is_file() and policy == "contract":
        try:
            suite = _suite(suite_file)
            for loaded in suite.tasks:
                if loaded.task.root.resolve() == task_dir.resolve() and loaded.contract is not None:
                    return loaded, False
        except TermrlError:
            pass  # a suite that does not load: judged as an unfrozen task
    return LoadedTask(load_task_dir(task_dir), None), True


@functools.lru_cache(maxsize=8)
def _suite(contracts: Path) -> Suite:
    """A suite read once per worker: every trial of its tasks needs it, and reading it hashes every task's files."""
    return load_suite(contracts)


def regrade_one(job: Job) -> dict:
    """Replay one trial against its task and grade it: its row of the JSON file (never raises)."""
    trial = job.trial
    if job.blocked is not None or job.task_dir is None:
        return trial_row(trial, None, None, blocked=job.blocked or "no task")
    harness = _HARNESS or default_harness()
    timings: dict[str, float] = {}
    started = time.monotonic()
    try:
        loaded, inferred = _loaded(job.task_dir, job.policy)
    except (TermrlError, OSError, ValueError) as exc:
        return trial_row(trial, None, None, blocked=f"the task does not load: {exc}")
    task = loaded.task
    if trial.family != CLEAN and (loaded.contract is None or trial.family not in loaded.contract.fault_targets):
        return trial_row(trial, task, None, blocked=f"recorded under the fault family {trial.family}, which has no validated "
                                                     "target in the task's frozen contract")
    spec = EpisodeSpec("regrade", task.id, trial.family, "replay", 0, label=f"{task.id}-{trial.trial}")
    try:
        sandbox = harness.new_sandbox(loaded, f"regrade-{job.index}")
    except Exception as exc:  # noqa: BLE001 - a task that does not build or set up blocks this trial only
        return trial_row(trial, task, None, blocked=f"the task's sandbox could not be made: {_one_line(exc)}")
    timings["build_s"] = time.monotonic() - started
    try:
        fault = harness.inject(loaded, sandbox, trial.family)  # the fault the episode was played under, at its frozen target
        oracle = harness.watch(loaded, sandbox, fault, inferred=inferred)
        outcome = harness.play(spec, loaded, sandbox, ReplayAgent(), oracle=oracle, fault=fault, recorded=trial)
    except Exception as exc:  # noqa: BLE001
        return trial_row(trial, task, None, blocked=f"the replay failed: {_one_line(exc)}")
    finally:
        sandbox.close()
    timings["replay_s"] = outcome.timings.get("agent_s", 0.0)
    timings["grade_s"] = outcome.timings.get("verify_s", 0.0)
    record = outcome.to_record().to_dict()
    record["contract"] = "inferred" if inferred else "frozen"
    return trial_row(trial, task, record, timings=timings)


_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain(text: str) -> str:
    """A line for the terminal: names read from recorded files may hold escape sequences, which are taken out."""
    return _CONTROL.sub("", text)


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:500]


# -- the command ------------------------------------------------------------------------
def plan(paths: list[Path], tasks: list[Path], policy: str = "contract") -> tuple[list[Job], list[Skipped], list[str]]:
    """The trials under ``paths`` matched to their tasks; what could not be read; the task folders' problems."""
    trials: list[RecordedTrial] = []
    skipped: list[Skipped] = []
    for path in paths:
        found, lost = read_recorded(path)
        trials += found
        skipped += lost
    index, problems = task_index(tasks)
    jobs = []
    for number, trial in enumerate(trials):
        task_dir, why = find_task(trial, index, bool(tasks))
        jobs.append(Job(number, trial, task_dir, why, policy))
    return jobs, skipped, problems


def run(jobs: list[Job], workers: int, backend: str, command_timeout_s: float, salt: str = "",
        on_row: Callable[[dict], None] | None = None) -> list[dict]:
    """Each job's row, in the jobs' order, ``workers`` trials at a time (each worker keeps one harness).

    ``on_row`` is handed each row as its trial finishes (the stream that a killed regrade resumes from).
    """
    done = on_row or (lambda row: None)
    if workers <= 1:
        _start_worker(backend, command_timeout_s, salt)
        rows = []
        for job in jobs:
            rows.append(regrade_one(job))
            done(rows[-1])
        return rows
    with ProcessPoolExecutor(max_workers=workers, initializer=_start_worker, initargs=(backend, command_timeout_s, salt)) as pool:
        futures = {pool.submit(regrade_one, job): job for job in jobs}
        by_index: dict[int, dict] = {}
        for future in as_completed(futures):
            job = futures[future]
            try:
                row = future.result()
            except Exception as exc:  # noqa: BLE001 - a worker killed mid-trial: that trial is counted as blocked, never lost
                row = trial_row(job.trial, None, None, blocked=f"the regrade worker died: {_one_line(exc)}")
            by_index[job.index] = row
            done(row)
        return [by_index[job.index] for job in jobs]


def stream_path(json_path: Path) -> Path:
    """Where each trial's row is appended as it finishes: ``OUT.trials.jsonl`` beside ``OUT.json``."""
    return json_path.with_name(json_path.stem + ".trials.jsonl")


def streamed_rows(path: Path) -> dict[tuple[str, str], dict]:
    """The rows a killed regrade finished, by (source, trial); a line cut short by the kill is left out (its trial runs again)."""
    rows: dict[tuple[str, str], dict] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return rows
    for line in lines:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and isinstance(row.get("trial"), str) and isinstance(row.get("source"), str):
            rows[(row["source"], row["trial"])] = row
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_termrl.regrade", description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="Harbor job or trial folders, ATIF trajectory.json files, episode logs")
    parser.add_argument("--tasks", action="append", type=Path, default=[], help="a folder of the trials' task folders (repeatable)")
    parser.add_argument("-n", type=int, default=1, help="trials regraded at once (default 1)")
    parser.add_argument("--json", type=Path, required=True, help="write {summary, trials} here")
    parser.add_argument("--html", type=Path, default=None, help="also write an HTML report of the replays here")
    parser.add_argument("--sandbox", default="bwrap", help="sandbox backend (default bwrap)")
    parser.add_argument("--salt", default="", help="the salt the recorded run used (--termrl-salt), for episodes recorded under a fault")
    parser.add_argument("--policy", choices=("contract", "inferred"), default="contract",
                        help="judge by the suite's frozen contract where there is one (default), or always by the policy inferred from the task")
    parser.add_argument("--resume", action="store_true",
                        help="keep the trials a killed regrade finished (OUT.trials.jsonl beside --json) and regrade only the others")
    parser.add_argument("--command-timeout", type=float, default=COMMAND_TIMEOUT_S, help="longest wait per replayed call, in seconds")
    args = parser.parse_args(argv)
    for folder in args.tasks:
        if not folder.is_dir():
            parser.error(f"--tasks {folder}: not a folder: expected a folder holding task folders")
    jobs, skipped, problems = plan(args.paths, args.tasks, args.policy)
    for item in skipped:
        print(plain(f"regrade: skipped {item}"), file=sys.stderr)
    for problem in problems:
        print(plain(f"regrade: a task under --tasks does not load: {problem}"), file=sys.stderr)
    started = time.monotonic()
    stream = stream_path(args.json)
    kept = streamed_rows(stream) if args.resume else {}
    todo = [job for job in jobs if (job.trial.source, job.trial.trial) not in kept]
    if kept:
        print(f"regrade: --resume: {len(jobs) - len(todo)} trial(s) kept from {stream}, {len(todo)} to regrade", file=sys.stderr)
    stream.parent.mkdir(parents=True, exist_ok=True)
    with stream.open("a" if args.resume else "w", encoding="utf-8") as out:

        def keep(row: dict) -> None:
            out.write(json.dumps(row) + "\n")
            out.flush()

        fresh = {job.index: row for job, row in zip(todo, run(todo, max(1, args.n), args.sandbox, args.command_timeout, args.salt, keep))}
    rows = [fresh[job.index] if job.index in fresh else kept[(job.trial.source, job.trial.trial)] for job in jobs]
    summary = summarise(rows, skipped, time.monotonic() - started, max(1, args.n))
    write_whole(args.json, json.dumps({"summary": summary, "trials": rows}, indent=1, sort_keys=False) + "\n")
    if args.html is not None:
        records = [row["episode"] for row in rows if row.get("episode")]
        write_html(args.html, [Run("regrade", records, str(args.json), notes=[plain(line) for line in summary["lines"]])], title="pytest-termrl regrade")
    for line in summary["lines"]:
        print(plain(line))
    print(f"regrade: {args.json}" + (f", {args.html}" if args.html else ""))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
