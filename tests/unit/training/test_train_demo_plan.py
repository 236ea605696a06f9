"""The training demo's plan: which instances the teacher plays under a fault, which test tasks the eval faults.

Fast checks of the choices ``make train-demo`` makes before it plays anything; the demo's
small tier (``test_train_demo.py``) plays them for real.
"""

import json
import subprocess
import sys

from conftest import CORE

from pytest_termrl.faults import FAMILIES
from pytest_termrl.tasks.contracts import CONTRACTS_FILE, read_contracts
from pytest_termrl.training.embedded.demo import Demo, DemoOptions, fault_sample, keyword_for, split_test_tasks

TRAIN_FAULTS = [name for name, f in FAMILIES.items() if not f.held_out]


def test_every_nth_instance_gets_one_fault_family_in_turn():
    demo = Demo(DemoOptions(out="unused", fault_every=2))
    instances = [f"{family}_{i:02d}" for family in ("confedit", "dedup") for i in range(16)]
    plan = demo.fault_plan(list(reversed(instances)))  # the order given does not matter
    assert list(plan) == TRAIN_FAULTS
    played = [t for group in plan.values() for t in group]
    assert len(played) == len(set(played)) == 16  # every second instance, each with one family
    assert sorted(played) == sorted(instances)[::2]
    for family in ("confedit", "dedup"):  # each kind of task meets every fault family
        for group in plan.values():
            assert sum(t.startswith(family) for t in group) == 2
    assert Demo(DemoOptions(out="unused", fault_every=1)).fault_plan(instances)["perm_denied"] == sorted(instances)[::4]
    assert Demo(DemoOptions(out="unused", teacher_families=["clean"])).fault_plan(instances) == {}


def test_the_fault_sample_is_seeded_and_every_family_applies_to_it():
    families = [*TRAIN_FAULTS, "blocking_fifo"]
    tasks = split_test_tasks(CORE)
    sample = fault_sample(CORE, tasks, families, 6, seed=0)
    assert len(sample) == 6 and set(sample) <= set(tasks) and sample == sorted(sample)
    assert fault_sample(CORE, tasks, families, 6, seed=0) == sample
    assert fault_sample(CORE, tasks, families, 6, seed=1) != sample
    contracts = {c.task_id: c for c in read_contracts(CORE / CONTRACTS_FILE)[0]}
    for task_id in sample:
        assert all(f in contracts[task_id].fault_targets and f not in contracts[task_id].excluded_faults for f in families)
    eligible = fault_sample(CORE, tasks, families, 1000, seed=0)
    assert len(eligible) < len(tasks)  # some test task has no target for some family: never sampled


def test_the_eval_selects_every_task_clean_and_the_sample_under_every_fault():
    demo = Demo(DemoOptions(out="unused"))
    selection = demo.eval_selection()
    sample = demo.facts["eval"]["fault_tasks"]
    assert selection == ["-k", "clean or " + keyword_for(sample)] and len(sample) == 6
    assert demo.facts["eval"]["families"] == ["clean", *TRAIN_FAULTS, "blocking_fifo"]
    whole = Demo(DemoOptions(out="unused", eval_fault_tasks=0))
    assert whole.eval_selection() == [] and whole.facts["eval"]["fault_tasks"] == split_test_tasks(CORE)
    # What pytest collects with that selection: 43 clean items and 6 x 5 faulted ones.
    done = subprocess.run([sys.executable, "-m", "pytest", str(CORE), "--collect-only", "-q", "-p", "no:cacheprovider",
                           "--termrl-split=test", f"--termrl-families={','.join(demo.facts['eval']['families'])}", *selection],
                          capture_output=True, text=True, timeout=300)
    items = [line for line in done.stdout.splitlines() if "::test_episode[" in line]
    clean = [i for i in items if "-clean-" in i]
    faulted = [i for i in items if "-clean-" not in i]
    assert len(clean) == len(json.loads((CORE / "splits.json").read_text())["test"]), done.stdout[-2000:]
    assert len(faulted) == 6 * 5 and {i.split("[")[1].split("-")[0] for i in faulted} == set(sample)
