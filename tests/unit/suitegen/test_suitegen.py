"""The procedural task generator (pytest_termrl.suitegen): determinism, loadability, splits."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_termrl.suitegen import families, generated_id, make_splits, split_counts, task_family, write_splits, write_suite
from pytest_termrl.suitegen.__main__ import main as suitegen_main
from pytest_termrl.tasks.native import load_native_task
from pytest_termrl.tasks.suite import SPLITS, read_splits, task_dirs

REPO = Path(__file__).resolve().parents[3]
CORE = REPO / "task_suites" / "core"


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def small_suites(tmp_path_factory):
    """Two per family, seed 0 twice and seed 1 once."""
    out = {}
    for label, seed in (("a", 0), ("b", 0), ("c", 1)):
        root = tmp_path_factory.mktemp(f"suite_{label}")
        write_suite(root, seed=seed, per_family=2)
        out[label] = root
    return out


def test_at_least_fifteen_families():
    assert len(families.available()) >= 15
    assert families.available() == list(families.NAMES)


def test_same_seed_gives_byte_identical_output(small_suites):
    a, b = tree_bytes(small_suites["a"]), tree_bytes(small_suites["b"])
    assert a and a == b


def test_different_seeds_differ(small_suites):
    a, c = tree_bytes(small_suites["a"]), tree_bytes(small_suites["c"])
    assert {p.split("/")[0] for p in a} == {p.split("/")[0] for p in c}
    for family in families.NAMES:
        task = f"{family}_00"
        assert (small_suites["a"] / task / "instruction.md").read_bytes() != (small_suites["c"] / task / "instruction.md").read_bytes() \
            or (small_suites["a"] / task / "tests" / "test_outputs.py").read_bytes() != \
            (small_suites["c"] / task / "tests" / "test_outputs.py").read_bytes(), f"{task} is the same for seeds 0 and 1"


def test_every_generated_task_loads(small_suites):
    root = small_suites["a"]
    dirs = task_dirs(root)
    assert len(dirs) == 2 * len(families.NAMES)
    for folder in dirs:
        task = load_native_task(folder)
        assert task.id == folder.name and generated_id(task.id) is not None
        assert "-" not in task.id
        assert task.inputs, f"{task.id} names no input"
        assert task.solution_text().strip()
        for rel in task.inputs:
            assert f"/home/user/{rel}" in task.instruction, f"{task.id}: input {rel} not named in the instruction"
            in_env = task.environment_dir is not None and (task.environment_dir / rel).is_file()
            from_setup = task.setup_script is not None and rel.rsplit("/", 1)[-1] in task.setup_script.read_text()
            assert in_env or from_setup, f"{task.id}: input {rel} is never created"
        solution = task.solution_text()
        assert "\nexit" not in "\n" + solution and "set -e" not in solution
        test_file = folder / "tests" / "test_outputs.py"
        source = test_file.read_text()
        compile(source, str(test_file), "exec")
        assert source.count("\ndef test_") >= 3


def test_instances_of_a_family_are_distinct(tmp_path):
    write_suite(tmp_path, seed=3, per_family=8, only=["logfilter", "confedit"])
    for family in ("logfilter", "confedit"):
        texts = {(tmp_path / f"{family}_{i:02d}" / "instruction.md").read_text() for i in range(8)}
        assert len(texts) == 8


def test_rewrite_replaces_only_generated_tasks(tmp_path):
    hand = tmp_path / "my_task"
    shutil.copytree(CORE / "log_error_counts", hand)
    write_suite(tmp_path, seed=0, per_family=3, only=["dedup"])
    write_suite(tmp_path, seed=0, per_family=1, only=["dedup"])
    assert sorted(p.name for p in task_dirs(tmp_path)) == ["dedup_00", "my_task"]


def test_split_quotas():
    assert split_counts(1) == {"train": 0, "dev_search": 0, "dev_monitor": 0, "test": 1}
    assert split_counts(8) == {"train": 4, "dev_search": 1, "dev_monitor": 1, "test": 2}
    for n in range(1, 30):
        counts = split_counts(n)
        assert sum(counts.values()) == n and counts["test"] >= 1 and min(counts.values()) >= 0


def _check_splits(suite: Path, splits: dict[str, list[str]]) -> None:
    assert list(splits) == list(SPLITS)
    ids = [t for split in splits.values() for t in split]
    present = sorted(p.name for p in task_dirs(suite))
    assert sorted(ids) == present, "every task exactly once"
    by_family: dict[str, set[str]] = {}
    where = {t: s for s, ts in splits.items() for t in ts}
    for folder in task_dirs(suite):
        by_family.setdefault(task_family(folder), set()).add(where[folder.name])
    for family, used in by_family.items():
        assert "test" in used, f"family {family} has no test task"


def test_splits_of_a_generated_suite(small_suites, tmp_path):
    suite = tmp_path / "suite"
    shutil.copytree(small_suites["a"], suite)
    shutil.copytree(CORE / "log_error_counts", suite / "log_error_counts")
    splits = write_splits(suite, seed=0)
    _check_splits(suite, splits)
    assert json.loads((suite / "splits.json").read_text()) == splits
    assert make_splits(suite, seed=0) == splits, "deterministic"


def test_core_splits_cover_every_task_and_family():
    splits = json.loads((CORE / "splits.json").read_text())
    _check_splits(CORE, splits)
    assert len(read_splits(CORE)) == len(task_dirs(CORE))
    generated = [p for p in task_dirs(CORE) if generated_id(p.name)]
    assert len(generated) >= 120
    assert make_splits(CORE, seed=0) == splits, "splits.json is what the generator writes"


def test_core_suite_is_regenerable(tmp_path):
    """task_suites/core holds exactly what `python -m pytest_termrl.suitegen --seed 0 --per-family 8` writes."""
    assert suitegen_main(["--out", str(tmp_path), "--seed", "0", "--per-family", "8", "--no-splits"]) == 0
    for folder in task_dirs(tmp_path):
        committed = CORE / folder.name
        assert committed.is_dir(), f"{folder.name} is missing from task_suites/core"
        got = {k: v for k, v in tree_bytes(committed).items() if "__pycache__" not in k}
        assert got == tree_bytes(folder), f"{folder.name} differs from its generator's output"
    stale = [p.name for p in task_dirs(CORE) if generated_id(p.name) and not (tmp_path / p.name).is_dir()]
    assert not stale, f"generated tasks no generator writes: {stale}"


def test_git_ids_match_real_git(tmp_path):
    from datetime import datetime, timezone

    from pytest_termrl.suitegen.families.gitchores import commit_id, tree_id

    files = {"README.md": "# x\n", "src/a.py": "print(1)\n", "src/b/c.txt": "c\n", "src-x": "y\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    when = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
           "GIT_AUTHOR_DATE": "2024-03-01T09:00:00+00:00", "GIT_COMMITTER_DATE": "2024-03-01T09:00:00+00:00"}
    git = ["git", "-C", str(tmp_path), "-c", "user.name=Ana Lead", "-c", "user.email=ana@example.com",
           "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "Initial import"]):
        subprocess.run(git + args, env=env, check=True, capture_output=True)
    head = subprocess.run(git + ["rev-parse", "HEAD"], env=env, check=True, capture_output=True, text=True).stdout.strip()
    assert head == commit_id(tree_id(files), [], ("Ana Lead", "ana@example.com"), when, "Initial import")
