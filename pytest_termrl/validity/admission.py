"""Admission of (imported) tasks: does the no-op fail, does the reference pass, can it run offline?

    python -m pytest_termrl.validity.admission PATH... [--sandbox bwrap|docker] [--json FILE] [--static]

PATH is a task directory of any format (native, Terminal-Bench, Harbor), a DockerLess
``.jsonl``, or a folder of them. For each task the command prints one row: the format, the
backend it needs, the grader kind (with a parsed grader's parser: ``parsed:pytest``),
whether the untouched environment fails the task's own grader, whether the reference
passes it, and whether it is offline-runnable here, with every reason it is not (network
installs in its grader, a parser there is none for, an image that cannot be built, a
missing reference, a setup that fails, ...), and what the offline installer stand-ins met
while grading the reference. A malformed task is a row too, naming the file and field. The
exit status is 0 when every task is admitted, 1 otherwise.

The core (no pytest): :func:`admit_task` for one loaded Task, :func:`admit_paths` for
paths. Every backend shows the agent's home at a task's workdir too (``/app`` for
Terminal-Bench and Harbor tasks).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..agents.builtin import NoopAgent, ReferenceAgent
from ..errors import SandboxError, TermrlError
from ..harness import Harness, default_harness
from ..report.failure import grader_summary
from ..sandbox.base import SandboxBackend
from ..sandbox.build.builder import BuildError
from ..settings import TEST_TIMEOUT_S
from ..tasks.importers import offline_status, scan
from ..tasks.importers.toolchains import TOOLCHAINS
from ..tasks.model import ImageSpec, Task
from ..tasks.suite import LoadedTask
from ..verifier.parsers import parser_problem
from ..verifier.verify import grader_of


# -- admission ---------------------------------------------------------------------------------------
@dataclass
class Admission:
    task_id: str
    format: str
    source: str
    backend: str = "bwrap"
    grader: str = "pytest"
    """The grader kind: 'pytest' (trusted pytest), 'script' (reward file) or 'parsed' (script output read by a parser)."""
    parser: str | None = None
    """The parser read on a parsed grader's output (Terminal-Bench's parser_name)."""
    toolchains: list[str] = field(default_factory=list)
    """The compilers and runtimes its grader or setup runs (go, cargo, cmake, javac, ...), found in the task's ``requires``."""
    offline: str = "no"
    """'yes', 'via trusted pytest' or 'no'."""
    reasons: list[str] = field(default_factory=list)
    """Why it is not admitted (or not offline-runnable): each a readable line."""
    notes: list[str] = field(default_factory=list)
    """How it runs offline when its own grader would need the network, and the like."""
    noop_fails: bool | None = None
    reference_passes: bool | None = None
    noop_detail: str = ""
    reference_detail: str = ""
    stood_in: list[str] = field(default_factory=list)
    """The installs the verifier's offline stand-ins met while grading the reference (pip, uv, apt-get, ...)."""
    substitutions: list[str] = field(default_factory=list)
    """What its image's build stood in for: the base image, each installer substitution and install met by the host."""
    missing: list[tuple[str, str]] = field(default_factory=list)
    """(manager, package) the host lacks for its image to build: 'apt' (Debian) or 'pip' (PyPI)."""

    @property
    def admitted(self) -> bool:
        return self.offline != "no" and bool(self.noop_fails) and bool(self.reference_passes)

    def to_dict(self) -> dict:
        return {
            "task_id": self.task_id, "format": self.format, "source": self.source, "backend": self.backend,
            "grader": self.grader, "parser": self.parser, "toolchains": list(self.toolchains), "offline": self.offline, "reasons": list(self.reasons), "notes": list(self.notes), "noop_fails": self.noop_fails,
            "reference_passes": self.reference_passes, "noop_detail": self.noop_detail,
            "reference_detail": self.reference_detail, "stood_in": list(self.stood_in), "substitutions": list(self.substitutions),
            "missing": [list(pair) for pair in self.missing], "admitted": self.admitted,
        }


def image_problems(task: Task, backend: SandboxBackend) -> list[str]:
    """Why the docker backend cannot get this task's image offline (empty when it can)."""
    client = getattr(backend, "client", None)
    if client is None:
        return ["no Docker engine to build or hold the image"]
    from ..sandbox.docker.images.client import image_exists

    image_spec = task.image or ImageSpec()
    problems = [why for why in image_spec.needs_docker if "over the network" in why or "downloads" in why]
    for image in [image_spec.docker_image, *image_spec.base_images]:
        if image and not image_exists(client, image):
            problems.append(f"the image {image} is not in the engine and cannot be pulled offline")
    return sorted(set(problems))


_DENIED = re.compile(r"(?:Permission denied|Read-only file system): '(/[^']*)'")


def outside_workdir_writes(detail: str, workdir: str) -> list[str]:
    """The blocker behind a reference that failed on writing outside the workdir, named by path.

    Terminal-Bench and Harbor run the reference and the tests as root in the task's image, so
    they may create folders such as ``/data``; here both run as the agent's user (uid 1000)
    on every backend, which may write its home and workdir only.
    """
    root = workdir.rstrip("/") or "/"
    paths = sorted({m.group(1) for m in _DENIED.finditer(detail or "")})
    outside = [p for p in paths if p != root and not p.startswith(root + "/")]
    return [
        f"writes {p}, outside the workdir {root}: its authors' harness runs it as root, here it runs as the agent's "
        f"user, who may write the home and workdir only"
        for p in outside
    ]


_LOOPBACK = re.compile(r"\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0)(?::\d+|[\"'],\s*\d+)?")
_BACKGROUND = re.compile(r"(?:^|\s)(?:nohup|setsid|disown|daemon(?:ize)?)\b|&\s*(?:#.*)?$|\b(?:systemctl|service)\s+\S*\s*start\b", re.M)


def left_running_services(task: Task, reachable: bool) -> list[str]:
    """The blocker behind a reference that failed where its grader probes a server it left running, when the grader cannot reach it.

    Terminal-Bench and Harbor (shared mode) run the grader in the agent's container, so a
    server the agent started in the background still answers; here the grader's sandbox joins
    the agent's network for those formats (``Task.graded_beside_the_agent``) where the backend
    can (docker; bwrap as root). Named when the reference starts something in the background,
    a grader file talks to a loopback address, and the grader could not reach it.
    """
    solution = task.solution_text() or ""
    if reachable or task.tests_dir is None or not _BACKGROUND.search(solution):
        return []
    files = sorted(p for p in task.tests_dir.rglob("*") if p.is_file() and p.stat().st_size <= 512 * 1024)
    if task.grader.script is not None and Path(task.grader.script).is_file() and Path(task.grader.script) not in files:
        files.append(Path(task.grader.script))  # run-tests.sh sits beside tests/
    found = [f"{path.name}: {m.group(0)}" for path in files if (m := _LOOPBACK.search(path.read_text(errors="replace")))]
    if not found:
        return []
    why = (
        "bwrap runs unprivileged here (not as root), so the grader's sandbox cannot join the agent's network"
        if task.graded_beside_the_agent
        else "its grader runs apart from the agent's environment (a separate verifier or a step's checks)"
    )
    return [f"the grader probes a server the reference leaves running ({'; '.join(found[:3])}), which it cannot reach: {why}"]


def grader_reaches_the_agent(harness: Harness, task: Task) -> bool:
    """Whether the grader's sandbox joins the agent's network for this task on this backend."""
    return task.graded_beside_the_agent and harness.backend.grader_joins_agent_network


def admit_task(harness: Harness, task: Task, run: bool = True) -> Admission:
    status, reasons = offline_status(task)
    backend_name = harness.backend.name
    needs = task.backend
    result = Admission(
        task_id=task.id, format=task.source.format, source=str(task.source.path or task.root),
        backend=needs, grader=grader_of(task), parser=task.grader.parser, offline=status,
        toolchains=[tool for tool in task.requires if tool in TOOLCHAINS],
        reasons=list(reasons) if status == "no" else [], notes=list(reasons) if status != "no" else [],
    )
    result.notes += list(task.notes)
    refused = parser_problem(task.grader.parser) if result.grader == "parsed" else None
    if refused:
        result.offline = "no"
        result.reasons.append(f"{refused}: the output of {Path(task.grader.script or 'run-tests.sh').name} cannot be read")
        result.noop_detail = result.reference_detail = "not run: no parser for its grader's output"
        return result
    if needs == "docker":
        if backend_name != "docker":
            result.offline = "no"
            result.noop_detail = result.reference_detail = f"not run: the task needs its docker image and the backend is {backend_name}"
            return result
        problems = image_problems(task, harness.backend)
        if problems:
            result.offline = "no"
            result.reasons += [f"an image that cannot be built offline: {p}" for p in problems]
            result.noop_detail = result.reference_detail = "not run: no image"
            return result
        result.reasons = [r for r in result.reasons if not r.startswith("needs its docker image")]
        result.offline = "no" if result.reasons else "via trusted pytest" if task.grader.note else "yes"
    if task.whole_machine and (problem := type(harness.backend).whole_machine_problem()) is not None:
        result.offline = "no"
        result.reasons.append(f"runs as {task.user!r} over the whole machine: {problem}")
        result.noop_detail = result.reference_detail = "not run: no whole-machine sandbox"
        return result
    if not run:
        return result
    if not _image_builds(harness, task, result):
        return result
    loaded = LoadedTask(task, None)
    for agent, label in ((NoopAgent(), "noop"), (ReferenceAgent(), "reference")):
        if label == "reference" and task.solution_script is None:
            result.reference_detail = "no reference solution"
            result.reference_passes = False
            continue
        try:
            outcome, _, _ = harness.play_fresh(loaded, agent, label)
        except (SandboxError, TermrlError, RuntimeError) as exc:
            why = f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}"
            setattr(result, f"{'noop' if label == 'noop' else 'reference'}_detail", f"setup failed: {why}")
            if f"setup failed: {why}" not in result.reasons:
                result.reasons.append(f"setup failed: {why}")
            result.offline = "no"
            continue
        verdict = outcome.verdict
        detail = grader_summary(outcome)
        if label == "noop":
            result.noop_fails = verdict is not None and verdict.error is None and not verdict.complete
            result.noop_detail = detail
            if verdict is not None and verdict.complete:
                result.reasons.append("the untouched environment already passes its grader")
            elif verdict is not None and verdict.error:
                result.reasons.append(f"the grader did not run on the untouched environment: {verdict.error}")
        else:
            result.reference_passes = verdict is not None and verdict.complete and outcome.harness_error is None
            result.reference_detail = detail
            result.stood_in = list(getattr(verdict, "stood_in", None) or [])
            if not result.reference_passes:
                result.reasons.append(f"the reference fails its grader: {detail}")
                result.reasons += outside_workdir_writes(detail, task.workdir)
                result.reasons += left_running_services(task, grader_reaches_the_agent(harness, task))
    return result


def _image_builds(harness: Harness, task: Task, result: Admission) -> bool:
    """Build the task's image (a whole-machine bwrap task with a Dockerfile), noting what was stood in for; False when it fails."""
    build = getattr(harness.backend, "built_image", None)
    if build is None or not task.whole_machine or task.image is None or task.image.dockerfile is None:
        return True
    try:
        image, _ = build(task)
    except BuildError as exc:
        result.offline = "no"
        result.missing = list(exc.missing)
        result.reasons.append(f"its image does not build: {' '.join(str(exc).split())[:600]}")
        result.noop_detail = result.reference_detail = "not run: no image"
        return False
    except (SandboxError, TermrlError) as exc:
        result.offline = "no"
        result.reasons.append(f"its image does not build: {' '.join(str(exc).split())[:600]}")
        result.noop_detail = result.reference_detail = "not run: no image"
        return False
    if image is not None:
        result.substitutions = [f"FROM {image.stand_in}", *image.substitutions]
    return True


def host_packages(results: list[Admission]) -> list[str]:
    """The commands that would install on the host every package the tasks' builds found missing (empty: none)."""
    apt = sorted({name for r in results for manager, name in r.missing if manager == "apt"})
    pip = sorted({name for r in results for manager, name in r.missing if manager == "pip"})
    lines = []
    if apt:
        lines.append("apt-get install -y " + " ".join(apt))
    if pip:
        lines.append("python3 -m pip install " + " ".join(pip))
    return lines


def admit_paths(harness: Harness, paths: list[Path], run: bool = True) -> list[Admission]:
    results: list[Admission] = []
    for path in paths:
        tasks, problems = scan(Path(path))
        for name, message in sorted(problems.items()):
            results.append(Admission(task_id=name, format="?", source=str(path), backend="-", grader="-", offline="no", reasons=[f"malformed: {message}"]))
        for task in sorted(tasks, key=lambda t: t.id):
            results.append(admit_task(harness, task, run=run))
    return results


def _grader(result: Admission) -> str:
    """The grader kind, with the parser of a parsed grader: 'parsed:pytest'."""
    return f"{result.grader}:{result.parser}" if result.parser else result.grader


def _yes(value: bool | None) -> str:
    return "-" if value is None else "yes" if value else "NO"


def format_table(results: list[Admission]) -> list[str]:
    header = f"{'task':<30} {'format':<15} {'backend':<7} {'grader':<14} {'toolchains':<16} {'noop fails':<10} {'ref passes':<10} {'offline':<19} {'admitted':<8}"
    lines = [header, "-" * len(header)]
    for r in results:
        lines.append(
            f"{r.task_id[:30]:<30} {r.format:<15} {r.backend:<7} {_grader(r):<14} {','.join(r.toolchains) or '-':<16} {_yes(r.noop_fails):<10} "
            f"{_yes(r.reference_passes):<10} {r.offline:<19} {'yes' if r.admitted else 'NO':<8}"
        )
    admitted = sum(r.admitted for r in results)
    lines.append(f"{admitted} of {len(results)} admitted")
    for title, field in (("why not:", "reasons"), ("notes:", "notes"), ("stood in for (offline installers, grading the reference):", "stood_in"),
                         ("stood in for (building the image):", "substitutions")):
        found = [(r.task_id, line) for r in results for line in getattr(r, field)]
        if found:
            lines += ["", title, *(f"  {task_id}: {line}" for task_id, line in found)]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_termrl.validity.admission", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="task directories, DockerLess .jsonl files, or folders of them")
    parser.add_argument("--sandbox", default="bwrap", help="backend to run the tasks on (bwrap or docker)")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    parser.add_argument("--static", action="store_true", help="only read the tasks; run no episode")
    parser.add_argument("--test-timeout", type=float, default=TEST_TIMEOUT_S, help="per hidden test, seconds")
    parser.add_argument("--host-packages", action="store_true",
                        help="after the table, print the apt-get (and pip) line that installs every package the builds found missing")
    args = parser.parse_args(argv)
    try:
        harness = default_harness(args.sandbox, test_timeout_s=args.test_timeout)
    except (SandboxError, TermrlError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    results = admit_paths(harness, args.paths, run=not args.static)
    for line in format_table(results):
        print(line)
    if args.host_packages:
        lines = host_packages(results)
        print("")
        print("host packages: " + ("none missing" if not lines else "install them with"))
        for line in lines:
            print(f"  {line}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([r.to_dict() for r in results], indent=2) + "\n")
    return 0 if results and all(r.admitted for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
