"""Procedurally generated task suites: task families, each a seeded generator of task instances.

``python -m pytest_termrl.suitegen --out task_suites/core --seed 0 --per-family 8`` writes
``<family>_<NN>`` task directories (replacing earlier generated ones of the same families)
and rewrites ``splits.json`` over every task of the folder, hand-written ones included.
Validation is the harness's: ``pytest task_suites/core --termrl-freeze`` then
``--termrl-selfcheck``.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
import tomllib
from pathlib import Path

from . import families
from .common import TaskSpec, reword, write_task

SPLIT_SHARES = (("train", 0.50), ("dev_search", 0.15), ("dev_monitor", 0.15), ("test", 0.20))
SPLIT_NAMES = tuple(name for name, _ in SPLIT_SHARES)


def instance_rng(seed: int, family: str, index: int, attempt: int = 0) -> random.Random:
    salt = f":{attempt}" if attempt else ""
    return random.Random(f"pytest-termrl-suitegen:{seed}:{family}:{index}{salt}")


def generate_family(family: str, seed: int, count: int) -> list[TaskSpec]:
    """``count`` distinct instances; one whose instruction repeats an earlier one is drawn again."""
    module = families.load(family)
    specs: list[TaskSpec] = []
    seen: set[str] = set()
    for index in range(count):
        task_id = f"{family}_{index:02d}"
        for attempt in range(20):
            spec = module.generate(instance_rng(seed, family, index, attempt), task_id, index)
            spec.instruction = reword(random.Random(f"pytest-termrl-suitegen-wording:{seed}:{family}:{index}:{attempt}"),
                                      spec.instruction)
            if spec.instruction not in seen:
                break
        else:
            raise RuntimeError(f"{task_id}: no distinct instance in 20 draws")
        spec.validate()
        seen.add(spec.instruction)
        specs.append(spec)
    return specs


def generated_id(task_id: str, names=families.NAMES) -> str | None:
    """The family of a generated task id (``logagg_03`` -> ``logagg``), else None."""
    m = re.fullmatch(r"([a-z]+)_(\d{2,})", task_id)
    return m.group(1) if m and m.group(1) in names else None


def write_suite(out: Path, seed: int = 0, per_family: int = 8, only: list[str] | None = None) -> list[str]:
    """Write the generated tasks of the chosen families (default: all) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    chosen = only or families.available()
    for folder in sorted(out.iterdir()):
        if folder.is_dir() and generated_id(folder.name, chosen):
            shutil.rmtree(folder)
    written = []
    for family in chosen:
        for spec in generate_family(family, seed, per_family):
            write_task(spec, out)
            written.append(spec.task_id)
    return written


def task_family(task_dir: Path) -> str:
    """Generated tasks: their generator; hand-written tasks: their category (their own family)."""
    family = generated_id(task_dir.name)
    if family is not None:
        return family
    data = tomllib.loads((task_dir / "task.toml").read_text())
    return "category:" + str(data.get("category", "general"))


def split_counts(n: int) -> dict[str, int]:
    """Quotas for a family of n tasks: at least one test task, the rest train-first."""
    test = max(1, int(0.20 * n + 0.5))
    dev_search = int(0.15 * n + 0.5) if n - test >= 3 else 0
    dev_monitor = int(0.15 * n + 0.5) if n - test - dev_search >= 2 else 0
    return {"train": n - test - dev_search - dev_monitor, "dev_search": dev_search, "dev_monitor": dev_monitor, "test": test}


def make_splits(suite: Path, seed: int = 0) -> dict[str, list[str]]:
    """Family-balanced, deterministic: within each family, tasks ordered by a seeded hash."""
    by_family: dict[str, list[str]] = {}
    for folder in sorted(p for p in suite.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        if (folder / "task.toml").is_file():
            by_family.setdefault(task_family(folder), []).append(folder.name)
    splits: dict[str, list[str]] = {name: [] for name in SPLIT_NAMES}
    for family in sorted(by_family):
        ids = sorted(by_family[family], key=lambda t: hashlib.sha256(f"{seed}:{t}".encode()).hexdigest())
        start = 0
        counts = split_counts(len(ids))
        for name in ("test", "dev_monitor", "dev_search", "train"):
            splits[name] += ids[start:start + counts[name]]
            start += counts[name]
    return {name: sorted(ids) for name, ids in splits.items()}


def write_splits(suite: Path, seed: int = 0) -> dict[str, list[str]]:
    splits = make_splits(suite, seed)
    (suite / "splits.json").write_text(json.dumps(splits, indent=2) + "\n")
    return splits
