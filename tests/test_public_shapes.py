"""Shapes met in public Terminal-Bench and Harbor collections, each as a small fixture of our own.

Each test builds a task in ``tmp_path`` that has the shape of a public case (never its text)
and checks what the admission says of it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_termrl.admission import admit_task, outside_workdir_writes
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


def test_a_grader_that_writes_outside_the_workdir_is_refused_naming_the_path(harness, tmp_path):
    task = load_task_dir(_tb_grader_writes_outside_workdir(tmp_path / "tb-root-inbox"))
    result = admit_task(harness, task)
    assert not result.admitted
    assert result.noop_fails
    assert any(r.startswith("writes /opt/inbox, outside the workdir /app") for r in result.reasons), result.reasons


def _hb_service_left_running(root: Path, grader_starts_it: bool) -> Path:
    """A Harbor task whose reference starts a server in the background and whose grader probes it."""
    start = "nohup python3 /app/serve.py > /dev/null 2>&1 &\nsleep 1\n"
    return _write(root, {
        "task.toml": """
            version = "1.0"
            [metadata]
            category = "web"
            [verifier]
            timeout_sec = 60.0
        """,
        "instruction.md": "Serve the word 'ready' over HTTP on 127.0.0.1:8765 and leave the server running.\n",
        "environment/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\n",
        "solution/solve.sh": """
            #!/bin/bash
            cat > /app/serve.py <<'PY'
            import http.server
            class Ready(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    self.send_response(200); self.end_headers(); self.wfile.write(b"ready")
            http.server.HTTPServer(("127.0.0.1", 8765), Ready).serve_forever()
            PY
            nohup python3 /app/serve.py > /dev/null 2>&1 &
            sleep 1
        """,
        "tests/test.sh": f"""
            #!/bin/bash
            {start if grader_starts_it else ''}
            if python3 -c 'import urllib.request; assert urllib.request.urlopen("http://127.0.0.1:8765").read() == b"ready"'; then
                echo 1 > /logs/verifier/reward.txt
            else
                echo 0 > /logs/verifier/reward.txt
            fi
        """.replace("\n            nohup", "\nnohup").replace("\n            sleep 1\n", "\nsleep 1\n"),
    })


def test_a_grader_that_probes_a_service_the_agent_left_running_is_refused_by_that_reason(harness, tmp_path):
    result = admit_task(harness, load_task_dir(_hb_service_left_running(tmp_path / "hb-service", grader_starts_it=False)))
    assert not result.admitted and not result.reference_passes
    assert result.reasons[-1] == (
        "the grader probes a service the reference leaves running (test.sh: 127.0.0.1:8765): its authors' harness grades "
        "in the agent's container, here the grader runs in a fresh sandbox where nothing the agent started is running"
    )
    # A grader that starts the agent's server itself is graded as its authors meant.
    result = admit_task(harness, load_task_dir(_hb_service_left_running(tmp_path / "hb-service-own", grader_starts_it=True)))
    assert result.admitted, result.reasons
