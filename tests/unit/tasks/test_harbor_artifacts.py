"""Harbor's artifacts: what a grader leaves in /logs/artifacts comes back signed and lands in the run directory.

Fixture ``hb-artifacts`` (tests/data/harbor_fields): its test.sh writes a summary, a copy of
the input in a subfolder and a link to /etc/passwd into /logs/artifacts. The files come back;
the link does not (a link is not an artifact: it would read outside the sandbox's files).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent
from pytest_termrl.report.artifacts import keep_artifacts
from pytest_termrl.tasks.importers import load_task_dir
from pytest_termrl.tasks.suite import LoadedTask
from pytest_termrl.verifier.inside import script_runner

TASK = Path(__file__).resolve().parents[2] / "data" / "harbor_fields" / "hb-artifacts"

pytestmark = pytest.mark.usefixtures("import_cache")


def test_the_grader_artifacts_come_back_with_the_verdict(harness):
    loaded = LoadedTask(load_task_dir(TASK), None)
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.safe_success, reference.verdict.to_dict()
    files = {rel: base64.b64decode(data) for rel, data in reference.verdict.artifacts.items()}
    assert files == {"summary.txt": b"expected 3, got 3\n", "details/notes.txt": b"alpha\nbeta\ngamma\n"}
    assert [why.split(":")[0] for why in reference.verdict.artifacts_left_out] == ["passwd-link"]
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert not noop.verdict.complete
    assert base64.b64decode(noop.verdict.artifacts["summary.txt"]) == b"expected 3, got missing\n"


def test_the_collector_caps_what_it_sends(tmp_path, monkeypatch):
    monkeypatch.setattr(script_runner, "ARTIFACT_BYTES", 10)
    (tmp_path / "a.txt").write_bytes(b"12345678")
    (tmp_path / "b.txt").write_bytes(b"123456")
    kept, left_out = script_runner.collect_artifacts(str(tmp_path))
    assert list(kept) == ["a.txt"] and left_out == ["b.txt: 6 bytes, over the 2 left"]


def test_the_record_keeps_a_manifest_and_the_files_go_to_the_run_directory(tmp_path):
    record = {"episode_id": "t1-clean-p0", "agent": "reference",
              "verdict": {"artifacts": {"out/a.txt": base64.b64encode(b"hi").decode(), "../x": "aGk=", "bad": "%%%"}}}
    written = keep_artifacts(record, tmp_path)
    assert written == [tmp_path / "artifacts" / "reference" / "t1-clean-p0" / "out" / "a.txt"]
    assert written[0].read_bytes() == b"hi"
    assert record["verdict"]["artifacts"] == {
        "out/a.txt": {"bytes": 2, "path": "artifacts/reference/t1-clean-p0/out/a.txt"},
        "../x": {"error": "not a relative path inside the artifacts folder"},
        "bad": {"error": "not base64"},
    }
    assert not (tmp_path / "x").exists()
    assert keep_artifacts(record, tmp_path) == []  # a manifest is left as it is


def test_artifacts_land_in_the_run_directory_through_the_plugin(tp):
    tp.imported_suite(TASK)
    tp.run("suite", "--termrl-agent=reference", timeout=300).assert_outcomes(passed=1)
    [record] = map(json.loads, tp.episodes.read_text().splitlines())
    manifest = record["verdict"]["artifacts"]
    assert set(manifest) == {"summary.txt", "details/notes.txt"}
    for rel, entry in manifest.items():
        path = tp.path / "run" / entry["path"]
        assert path.is_file() and path.stat().st_size == entry["bytes"], (rel, entry)
    assert (tp.path / "run" / manifest["summary.txt"]["path"]).read_text() == "expected 3, got 3\n"
    assert record["verdict"]["artifacts_left_out"][0].startswith("passwd-link:")
