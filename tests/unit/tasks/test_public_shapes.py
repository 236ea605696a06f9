"""Shapes met in public Terminal-Bench and Harbor collections, each as a small fixture of our own.

Each test builds a task in ``tmp_path`` that has the shape of a public case (never its text)
and checks what the admission says of it.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from pytest_termrl.validity.admission import admit_task, left_running_services, outside_workdir_writes
from pytest_termrl.tasks.importers import load_task_dir

pytestmark = pytest.mark.usefixtures("import_cache")


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def _tb_grader_writes_outside_workdir(root: Path) -> Path:
    """A classic task whose hidden tests make their own input folder at the filesystem root."""
    return _write(root, {
        "task.yaml": """
            instruction: |
              Write /app/count.py: it prints how many lines /opt/inbox/items.txt has.
            difficulty: easy
            category: scripting
            parser_name: pytest
            max_agent_timeout_sec: 60.0
            max_test_timeout_sec: 60.0
        """,
        "Dockerfile": """
            FROM ghcr.io/laude-institute/t-bench/python-3-13:20250620
            WORKDIR /app
        """,
        "solution.sh": """
            #!/bin/bash
            printf 'print(sum(1 for _ in open("/opt/inbox/items.txt")))\\n' > /app/count.py
        """,
        "tests/test_outputs.py": """
            import subprocess
            import sys
            from pathlib import Path

            def test_counts_lines():
                inbox = Path("/opt/inbox")
                inbox.mkdir(parents=True, exist_ok=True)
                (inbox / "items.txt").write_text("a\\nb\\nc\\n")
                out = subprocess.run([sys.executable, "/app/count.py"], capture_output=True, text=True)
                assert out.stdout.strip() == "3"
        """,
    })


def test_outside_workdir_writes_names_only_paths_outside_the_workdir():
    detail = ("1/3 pass; t.py::a: E   PermissionError: [Errno 13] Permission denied: '/opt/inbox'; "
              "t.py::b: E   OSError: [Errno 30] Read-only file system: '/etc/x.conf'; "
              "t.py::c: E   PermissionError: [Errno 13] Permission denied: '/app/locked.txt'")
    reasons = outside_workdir_writes(detail, "/app")
    assert [r.split(",")[0] for r in reasons] == ["writes /etc/x.conf", "writes /opt/inbox"]
    assert all("outside the workdir /app" in r and "runs it as root" in r for r in reasons)
    assert outside_workdir_writes("0/1 pass; t.py::a: E   AssertionError", "/app") == []


def test_a_grader_that_writes_outside_the_workdir_as_root_is_admitted(harness, tmp_path):
    """Its tests make /opt/inbox as root, as Terminal-Bench runs them: over the whole machine here too."""
    task = load_task_dir(_tb_grader_writes_outside_workdir(tmp_path / "tb-root-inbox"))
    assert task.user == "root"
    result = admit_task(harness, task)
    assert result.admitted and result.reference_passes and result.noop_fails, result.reasons


SERVICE = Path(__file__).resolve().parents[2] / "data" / "harbor_fields" / "hb-service"


def _hb_service_left_running(root: Path, grader_starts_it: bool) -> Path:
    """hb-service (its reference leaves a server running, its grader probes it); or its grader starting the server itself."""
    task_dir = shutil.copytree(SERVICE, root)
    if grader_starts_it:
        script = task_dir / "tests" / "test.sh"
        script.write_text("#!/bin/bash\nnohup python3 /app/serve.py > /dev/null 2>&1 &\nsleep 1\n" + script.read_text().split("\n", 1)[1])
    return task_dir


def test_a_server_the_reference_leaves_running_answers_its_grader(harness, tmp_path):
    """Graded as Harbor grades it: in the agent's network, the agent's processes stopped after the grader."""
    task = load_task_dir(_hb_service_left_running(tmp_path / "hb-service", grader_starts_it=False))
    assert task.graded_beside_the_agent
    result = admit_task(harness, task)
    assert result.admitted and result.reference_passes and result.noop_fails, result.reasons
    own = admit_task(harness, load_task_dir(_hb_service_left_running(tmp_path / "hb-service-own", grader_starts_it=True)))
    assert own.admitted, own.reasons


def test_a_server_the_grader_cannot_reach_is_named_as_the_blocker(tmp_path):
    task = load_task_dir(_hb_service_left_running(tmp_path / "hb-service", grader_starts_it=False))
    assert left_running_services(task, reachable=True) == []
    assert left_running_services(task, reachable=False) == [
        "the grader probes a server the reference leaves running (test.sh: 127.0.0.1:8765), which it cannot reach: "
        "bwrap runs unprivileged here (not as root), so the grader's sandbox cannot join the agent's network"
    ]
