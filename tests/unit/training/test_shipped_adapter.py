"""The adapter `make demo`'s trained arm loads is the one `make train-demo` measured: file, provenance and results agree."""

from __future__ import annotations

import json

from gguf import GGUFReader

from pytest_termrl.training.embedded import shipped


def test_the_shipped_adapter_its_provenance_and_the_results_table_agree():
    assert shipped.disagreements() == [], "make train-demo rewrites models/ and results/train_demo.json together"


def test_the_shipped_adapter_is_a_gguf_lora_of_the_bundled_model_as_the_provenance_says():
    provenance = json.loads((shipped.MODELS / shipped.PROVENANCE_FILE).read_text())
    reader = GGUFReader(shipped.MODELS / shipped.ADAPTER_FILE)

    def text(key: str) -> str:
        field = reader.fields[key]
        return bytes(field.parts[field.data[0]]).decode()

    assert (text("general.type"), text("adapter.type"), text("general.architecture")) == ("adapter", "lora", "gemma3")
    alpha = float(reader.fields["adapter.lora.alpha"].parts[-1][0])
    assert alpha == provenance["measured"]["train"]["options"]["lora_alpha"]
    assert provenance["measured"]["data"]["examples"] == provenance["measured"]["train"]["examples"] > 0
    assert provenance["code_commit"] and provenance["command"][:4] == ["python", "-m", "pytest_termrl.training", "demo"]
    assert "Gemma Terms of Use" in (shipped.MODELS / shipped.NOTICE_FILE).read_text()
