"""The training demo's small tier, end to end: data, train, convert, serve, evaluate, table.

``python -m pytest_termrl.training demo --small`` runs every stage of ``make train-demo``
for real on a handful of examples: new instances of two generated families (frozen and
played by the reference agent through the plugin), SFT data from their safe successes, a
few LoRA steps on the bundled GGUF, the adapter converted to GGUF and served by the
embedded llama.cpp server with ``--lora_path``, and base and trained model evaluated on
two core test tasks through the plugin. What is checked is the wiring, not a lift: three
steps teach the model little.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import CORE

from pytest_termrl.report.episodes import read_episodes
from pytest_termrl.training.embedded.shipped import ADAPTER_FILE, PROVENANCE_FILE, disagreements

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("train-demo")
    results = out / "results.json"
    done = subprocess.run([sys.executable, "-m", "pytest_termrl.training", "demo", "--small", "--out", str(out),
                           "--results", str(results), "--ship", str(out / "models")], capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return out, json.loads(results.read_text()), done.stdout


def test_every_stage_ran_and_the_table_holds_numbers(demo):
    out, table, stdout = demo
    assert {"suite", "teacher", "data", "train", "eval"} <= set(table["stages_s"])
    for stage in ("suite", "teacher", "train", "eval"):  # the data stage takes well under a second
        assert table["stages_s"][stage] > 0, table["stages_s"]
    for arm in ("base", "trained"):
        row = table["arms"][arm]["clean"]
        assert row["episodes"] == 2 and row["tasks"] == 2
        assert 0.0 <= row["ci_low"] <= row["safe_rate"] <= row["ci_high"] <= 1.0
        faulted = table["arms"][arm]["perm_denied"]  # the fault family on its sample of one task
        assert faulted["episodes"] == faulted["tasks"] == 1
    assert table["families"] == ["clean", "perm_denied"] and table["eval"]["fault_tasks"] == ["tarball_00"]
    pair = table["paired"]["clean"]
    assert pair["ci_low"] <= pair["diff"] <= pair["ci_high"]
    assert pair["diff"] == pytest.approx(table["arms"]["trained"]["clean"]["safe_rate"] - table["arms"]["base"]["clean"]["safe_rate"])
    assert f"paired difference (trained - base), clean: {pair['diff']:+.2f}" in stdout
    assert (out / "train_demo.json").read_text() == json.dumps(table, indent=1, sort_keys=True) + "\n"


def test_the_data_came_from_graded_teacher_episodes_of_new_instances(demo):
    out, table, _ = demo
    assert table["instances"]["frozen"] == table["instances"]["kept"] == 4
    teacher = read_episodes(out / "teacher" / "episodes.jsonl")
    assert all(r["agent"] == "recovery" for r in teacher)
    clean = [r for r in teacher if r["family"] == "clean"]
    faulted = [r for r in teacher if r["family"] == "perm_denied"]
    assert len(clean) == 4 and all(r["safe_success"] for r in clean)
    assert faulted and all(r["observed"] for r in faulted)  # each met the fault before repairing it
    rows = [json.loads(line) for line in (out / "sft.jsonl").read_text().splitlines()]
    assert len(rows) == table["data"]["examples"] == sum(1 for r in teacher if r["safe_success"])
    counts = table["data"]["per_family_and_fault"]
    assert counts["jsonextract/clean"] == counts["tarball/clean"] == 2
    assert counts.get("jsonextract/perm_denied", 0) + counts.get("tarball/perm_denied", 0) == sum(1 for r in faulted if r["safe_success"]) >= 1
    for row in rows:
        calls = [m for m in row["messages"] if m.get("tool_calls")]
        if row["family"] == "perm_denied":  # try, repair, solve: the repair is the generic chmod
            assert len(calls) == 3 and calls[1]["tool_calls"][0]["function"]["arguments"]["command"].startswith("chmod u+rw ")
            assert "Permission denied" in row["messages"][3]["content"]
        else:
            assert len(calls) == 1
    # None is a core test task, by content: no instruction of the test split is in the data.
    core_test = json.loads((CORE / "splits.json").read_text())["test"]
    test_texts = {" ".join((CORE / t / "instruction.md").read_text().split()) for t in core_test}
    assert not any(" ".join(r["messages"][1]["content"].split()) in test_texts for r in rows)


def test_the_trained_arm_served_the_converted_adapter_and_the_base_arm_did_not(demo):
    out, table, _ = demo
    assert table["train"]["examples"] == table["data"]["examples"] and len(table["train"]["losses"]) == 3
    adapter = out / "adapter" / "adapter.gguf"
    assert adapter.stat().st_size > 1 << 20
    trained_log = (out / "eval" / "trained-server-0.log").read_text()
    base_log = (out / "eval" / "base-server-0.log").read_text()
    assert f"--lora_path {adapter}" in trained_log and "--lora_path" not in base_log
    assert f"loading lora adapter from '{adapter}'" in trained_log  # llama.cpp's own line: it loaded
    assert "--chat_format termrl-session" in trained_log and "--chat_format termrl-session" in base_log
    assert trained_log.count("POST /v1/chat/completions") >= 2
    models = {arm: {r["model"] for r in read_episodes(out / "eval" / arm / "episodes.jsonl")} for arm in ("base", "trained")}
    assert models == {"base": {"gemma-3-270m-q4_k_m"}, "trained": {"gemma-3-270m-q4_k_m+sft"}}
    for arm in ("base", "trained"):
        records = read_episodes(out / "eval" / arm / "episodes.jsonl")
        assert sorted((r["task_id"], r["family"]) for r in records) == [
            ("jsonextract_03", "clean"), ("tarball_00", "clean"), ("tarball_00", "perm_denied")]
        assert all(r["harness_error"] is None and r["tokens"]["completion_tokens"] > 0 for r in records), records


def test_the_ship_stage_copies_the_adapter_with_a_provenance_that_agrees(demo, tmp_path):
    out, table, stdout = demo
    models = out / "models"
    assert disagreements(models, out / "results.json") == []
    assert (models / ADAPTER_FILE).read_bytes() == (out / "adapter" / "adapter.gguf").read_bytes()
    provenance = json.loads((models / PROVENANCE_FILE).read_text())
    assert provenance["command"][:4] == ["python", "-m", "pytest_termrl.training", "demo"] and "--max-steps" in provenance["command"]
    assert provenance["measured"]["data"]["examples"] == table["data"]["examples"]
    assert provenance["code_commit"] == table["train"]["commit"]
    # Any of the three out of step is found.
    changed = dict(table, paired={})
    other = tmp_path / "results.json"
    other.write_text(json.dumps(changed))
    assert disagreements(models, other) == [f"{models / PROVENANCE_FILE}: measured.paired differs from {other}'s paired"]
    with (models / ADAPTER_FILE).open("ab") as handle:
        handle.write(b"\0")
    assert any("sha256" in line for line in disagreements(models, out / "results.json"))
