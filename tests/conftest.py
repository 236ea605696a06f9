"""Shared helpers for the plugin's own tests: small suites, sandboxes, host process checks.

Suites for pytester runs are built from real tasks of task_suites/core (copied, with their
frozen contract lines) or from tiny native tasks written here and frozen with
``--termrl-freeze``. Sandboxes are real bubblewrap sandboxes in the default workroot.
"""

from __future__ import annotations

# Task folders used as data by the importer and audit tests: their own tests are never ours.
collect_ignore = ["data"]

import json
import os
import secrets
import shutil
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORE = REPO / "task_suites" / "core"
CORE_CONTRACTS = CORE / "contracts.jsonl"

# Three quick core tasks the noop agent fails and the oracle passes.
SMALL_TASKS = ("checksum_verify", "config_ini_update", "log_error_counts")


def core_task_ids(contracts: Path = CORE_CONTRACTS) -> list[str]:
    return sorted(json.loads(line)["task_id"] for line in contracts.read_text().splitlines() if line.strip())


def core_sample(limit: int = 12) -> list[str]:
    """One frozen core task per category (the first by id), at most ``limit``: a quick cross-section."""
    import tomllib

    frozen = set(core_task_ids())
    by_category: dict[str, str] = {}
    for task_id in sorted(frozen):
        toml = CORE / task_id / "task.toml"
        if not toml.is_file():
            continue
        category = tomllib.loads(toml.read_text()).get("category", "general")
        by_category.setdefault(category, task_id)
    return sorted(by_category.values())[:limit]


def snapshot_core(dest: Path) -> Path:
    """A copy of the whole real core suite, so edits to the repo during a run don't race it."""
    shutil.copytree(CORE, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    return dest


def core_contract_lines(task_ids) -> list[str]:
    """The frozen contract lines of some core tasks, in the file's order."""
    wanted = set(task_ids)
    lines = [line for line in CORE_CONTRACTS.read_text().splitlines() if line.strip() and json.loads(line)["task_id"] in wanted]
    assert len(lines) == len(wanted), f"core contracts lack some of {sorted(wanted)}"
    return lines


def copy_core_suite(dest: Path, task_ids=SMALL_TASKS, contracts: bool = True) -> Path:
    """A suite folder holding copies of core tasks and (unless told not to) their contracts."""
    dest.mkdir(parents=True, exist_ok=True)
    for task_id in task_ids:
        shutil.copytree(CORE / task_id, dest / task_id, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    text = "\n".join(core_contract_lines(task_ids)) + "\n" if contracts else ""
    (dest / "contracts.jsonl").write_text(text)
    return dest


def write_tiny_task(
    suite: Path,
    task_id: str,
    *,
    word: str = "hello",
    difficulty: str = "easy",
    category: str = "files",
    tests: int = 2,
) -> Path:
    """A minimal native task: write ``word`` to ~/out.txt. The reference does; noop doesn't."""
    root = suite / task_id
    (root / "tests").mkdir(parents=True)
    (root / "environment").mkdir()
    (root / "environment" / "README").write_text(f"task {task_id}\n")
    (root / "task.toml").write_text(
        f'id = "{task_id}"\ntitle = "Write {word}"\ndifficulty = "{difficulty}"\ncategory = "{category}"\n'
        'inputs = ["README"]\n'
    )
    (root / "instruction.md").write_text(f"Write the word {word} followed by a newline to /home/user/out.txt.\n")
    (root / "solution.sh").write_text(f"echo {word} > /home/user/out.txt\n")
    body = ['"""Hidden tests."""', "from pathlib import Path", 'OUT = Path("/home/user/out.txt")', ""]
    body.append(f"def test_exists():\n    assert OUT.is_file()\n")
    for index in range(1, tests):
        body.append(f"def test_content_{index}():\n    assert OUT.read_text() == {word + chr(10)!r}\n")
    (root / "tests" / "test_outputs.py").write_text("\n".join(body))
    return root


def predictions_file(path: Path, scripts: dict[str, str]) -> Path:
    path.write_text("".join(json.dumps({"task_id": k, "agent_script": v}) + "\n" for k, v in sorted(scripts.items())))
    return path


def solution_of(task_id: str) -> str:
    return (CORE / task_id / "solution.sh").read_text()


# -- pytester ------------------------------------------------------------------------
class TermrlPytester:
    """pytester plus the run folder, so every inner run writes inside pytester.path."""

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.path = pytester.path
        self.episodes = self.path / "run" / "episodes.jsonl"
        pytester.makeini("[pytest]\n")

    def suite(self, task_ids=SMALL_TASKS, name: str = "suite") -> Path:
        return copy_core_suite(self.path / name, task_ids)

    def run(self, *args: str, cache: bool = False, timeout: float = 240):
        argv = [f"--termrl-run-dir={self.path / 'run'}", f"--termrl-episodes={self.episodes}", *args]
        if not cache:
            argv = ["-p", "no:cacheprovider", *argv]
        return self.pytester.runpytest_subprocess(*argv, timeout=timeout)


@pytest.fixture
def tp(pytester: pytest.Pytester) -> TermrlPytester:
    return TermrlPytester(pytester)


# -- sandboxes -----------------------------------------------------------------------
@pytest.fixture
def make_sandbox():
    """Make real bwrap sandboxes (default workroot); every one is closed at teardown."""
    from pytest_termrl.sandbox import SandboxSettings
    from pytest_termrl.sandbox.bwrap import BwrapBackend

    made = []

    def _make(label: str = "test", **settings):
        settings.setdefault("command_timeout_s", 10.0)
        backend = BwrapBackend(SandboxSettings(**settings))
        sandbox = backend.create(label)
        made.append(sandbox)
        return sandbox

    yield _make
    for sandbox in made:
        sandbox.close()


def unique_sleep() -> str:
    """A sleep duration no other process on the host uses, to find it in /proc."""
    return f"9{secrets.randbelow(10**8):08d}"


def host_pids_with(marker: str) -> list[int]:
    """Host pids whose command line holds ``marker`` (the test process itself excluded)."""
    found = []
    me = os.getpid()
    needle = marker.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except OSError:
            continue
        if needle in cmdline.replace(b"\0", b" "):
            found.append(int(name))
    return found


def host_pids_appearing(marker: str, count: int = 1, timeout_s: float = 10.0) -> list[int]:
    """Host pids with ``marker``, waiting for at least ``count`` of them: a command that starts a
    background job returns before that job's ``exec`` has shown the marker in its command line."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = host_pids_with(marker)
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def python_site_version() -> str:
    return f"python{sys.version_info.major}.{sys.version_info.minor}"


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def module_tests(module, prefix: str = "test_") -> dict:
    """A test module's test functions under ``prefix``, to collect again in a module whose
    fixtures (``make_sandbox``) make another backend's sandboxes."""
    return {prefix + name[len("test_"):]: test for name, test in vars(module).items() if name.startswith("test_") and callable(test)}
