"""The training demo: the embedded Gemma 3 270M, fine-tuned on the environment's own episodes, on the CPU.

    python -m pytest_termrl.training demo --out out/train_demo      # what `make train-demo` runs
    python -m pytest_termrl.training demo --out /tmp/d --small      # the CI tier (minutes)

Stages, each a command a user could run by hand (the demo prints them):

1. ``suite``: new instances of every generated family (``suitegen`` with a seed other
   than the core suite's), less any whose instruction is that of a core test or dev task
   (by content, :func:`.data.instruction_hash`), all in a ``train`` split. Every instance
   is frozen clean; every ``fault_every``-th one is also given one teacher fault family,
   the families in turn, and frozen with it (``-k`` on those instances,
   ``--termrl-families=clean,FAMILY``): recovery examples of every family on every kind
   of task, at a fraction of the cost of every instance under every family.
2. ``teacher``: the recovery teacher (``--termrl-agent=recovery``) plays every frozen
   pair through the plugin, clean (it runs the reference) and with the instance's fault
   (it runs the reference, meets the fault, repairs it as the family's generic repair
   does, runs the reference again); the episodes are graded like any other.
3. ``data``: ``training data`` keeps the safe successes (rejection sampling), refusing any
   test task of the core suite by split and by content.
4. ``train``: ``training sft-gguf``: LoRA SFT of the bundled GGUF, the examples rendered
   as the embedded server renders them; the adapter is written as a GGUF LoRA too.
5. ``eval``: base and trained model through the plugin (``--termrl-agent=openai``) on
   the core suite's test split, same settings and seed, two embedded servers each (the
   trained arm's load the adapter with ``--lora_path``): every test task clean, and the
   fault families (the training ones and the held-out ``blocking_fifo``) on a seeded
   sample of ``eval_fault_tasks`` test tasks that every one of them applies to, the
   same tasks for every family and both arms. A faulted episode costs what a clean one
   does, so the whole split under five families would take five times the clean eval
   (about 100 minutes more here); ``--eval-fault-tasks 0`` runs it.
6. ``table``: per arm and family the safe-success rate with its task-cluster bootstrap
   95% CI, the paired difference with its CI, collateral, recovery failures and mean
   commands; written to ``OUT/train_demo.json`` (and ``--results`` for the README).
"""

from __future__ import annotations

import json
import random
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field, fields
from pathlib import Path

from ...faults import CLEAN, resolve_families
from ..config import flag_of
from ..protect import instruction_hash, protected_instructions
from .demo_table import ARMS, BASELINE_ARMS, compare_arms, format_table
from .shipped import code_commit, ship

CORE = Path(__file__).resolve().parents[3] / "task_suites" / "core"
TRAIN_SETTINGS = ("max_steps", "learning_rate", "lora_r", "lora_alpha", "lora_layers", "loss_vocab", "loss_full_tokens",
                  "lr_scheduler_type", "warmup_steps", "max_length", "threads")
"""Demo options handed to ``sft-gguf`` under the same names (and recorded, less threads)."""
LOCAL_OPTIONS = ("python", "stages", "out", "core", "results", "ship", "adapter", "eval_dir")
"""Options that say where things are, not how the arms were measured (left out of the table's settings)."""
OK_EXIT_CODES = (0, 1)
"""pytest's 'all passed' and 'some episodes failed': both are a completed run."""


@dataclass
class DemoOptions:
    out: str = "out/train_demo"
    core: str = str(CORE)
    seed: int = 1
    """suitegen seed of the training instances (the core suite's is 0)."""
    per_family: int = 16
    """Four instances of each template variant (most families have four)."""
    families_generated: list[str] | None = None
    """suitegen families to draw instances of (None: all)."""
    teacher_families: list[str] = field(default_factory=lambda: [CLEAN, "train"])
    """Fault families (and clean; aliases as ``--termrl-families``) of the recovery examples."""
    fault_every: int = 4
    """Every N-th instance (in id order) is also played with one teacher fault family, the
    families in turn (1: every instance)."""
    max_steps: int = 600
    """About two passes over the examples."""
    learning_rate: float = 8e-4
    lora_r: int = 16
    lora_alpha: int = 32
    lora_layers: int = 9
    """Adapt only the top N of the 18 blocks (0: all): the backward pass stops there."""
    loss_vocab: str = "data"
    """Softmax of the loss over the tokens of the data only (see ``sft-gguf --loss-vocab``)."""
    loss_full_tokens: list[str] = field(default_factory=lambda: ["<end_of_turn>"])
    """...but over the whole vocabulary where the label ends a turn (``sft-gguf --loss-full-tokens``)."""
    lr_scheduler_type: str = "cosine"
    warmup_steps: int = 30
    max_length: int = 1536
    threads: int = 2
    eval_families: list[str] = field(default_factory=lambda: [CLEAN, "train", "heldout"])
    eval_tasks: list[str] | None = None
    """Core test tasks to evaluate (None: the whole test split)."""
    eval_fault_tasks: int = 6
    """Test tasks the fault families are evaluated on (a sample drawn with ``eval_seed``
    among those every family applies to; 0: all of them)."""
    servers: int = 2
    """Embedded servers per arm (one thread each), episodes spread over them (-n the same)."""
    max_tool_calls: int = 4
    max_generated_tokens: int = 640
    """Tokens the model may generate in a whole episode; the longest reference script of the
    test split is about 600."""
    max_total_tokens: int = 3072
    output_cap_chars: int = field(default=1000, metadata={"flag": "--output-cap"})
    eval_seed: int = 0
    eval_sample: int = 0
    """Evaluate this many test tasks, drawn with ``eval_seed`` from the test split (never by
    results; 0: the whole split or ``eval_tasks``)."""
    arms: list[str] = field(default_factory=lambda: list(ARMS))
    """Arms the eval plays: ``base``, ``trained`` and the built-in ``reference`` / ``noop``."""
    adapter: str | None = None
    """The trained arm's GGUF adapter (default: the one the train stage wrote, OUT/adapter/adapter.gguf)."""
    eval_dir: str = "eval"
    """Folder under OUT of the arms' run directories (``.``: OUT/<arm>)."""
    results: str | None = None
    """Also write the table here (results/train_demo.json)."""
    ship: str | None = None
    """After the table, copy the adapter here with its provenance (``models``: what ``make demo`` loads)."""
    stages: list[str] = field(default_factory=lambda: ["suite", "teacher", "data", "train", "eval", "table", "ship"])
    python: str = sys.executable

    @classmethod
    def small(cls, out: str) -> "DemoOptions":
        """The CI tier: two families, a handful of examples, a few steps, two test tasks."""
        return cls(out=out, per_family=2, families_generated=["tarball", "jsonextract"], teacher_families=[CLEAN, "perm_denied"],
                   fault_every=1, max_steps=3, warmup_steps=0, max_length=1024,
                   eval_tasks=["tarball_00", "jsonextract_03"], eval_families=[CLEAN, "perm_denied"], eval_fault_tasks=1,
                   servers=1, max_generated_tokens=256, max_total_tokens=2048)


def option_text(value) -> str:
    """An option's value as its flag takes it (lists comma-separated)."""
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


class Demo:
    def __init__(self, options: DemoOptions, echo=print) -> None:
        self.o = options
        self.out = Path(options.out).resolve()
        self.echo = echo
        self.seconds: dict[str, float] = {}
        self.facts: dict = {}

    # -- helpers -------------------------------------------------------------------------
    def run(self, cmd: list[str], ok=(0,), log: Path | None = None) -> int:
        self.echo("$ " + shlex.join(cmd))
        if log is None:
            code = subprocess.call(cmd)
        else:
            with open(log, "w") as handle:
                code = subprocess.call(cmd, stdout=handle, stderr=subprocess.STDOUT)
        if code not in ok:
            tail = log.read_text()[-3000:] if log is not None else ""
            raise RuntimeError(f"exit code {code}: {shlex.join(cmd)}\n{tail}")
        return code

    def pytest(self, *args: str) -> list[str]:
        return [self.o.python, "-m", "pytest", *args, "-p", "no:cacheprovider", "-q", "--tb=no", "-rN"]

    @property
    def teacher_families(self) -> str:
        return ",".join(resolve_families([CLEAN, *self.o.teacher_families]))

    def fault_plan(self, tasks: list[str]) -> dict[str, list[str]]:
        """Fault family -> the instances played with it (each instance at most one)."""
        faults = [f for f in self.teacher_families.split(",") if f != CLEAN]
        plan: dict[str, list[str]] = {f: [] for f in faults}
        every = max(1, self.o.fault_every)
        for i, task_id in enumerate(sorted(tasks)):
            if faults and i % every == 0:
                plan[faults[(i // every) % len(faults)]].append(task_id)
        return plan

    @property
    def suite(self) -> Path:
        return self.out / "train_suite"

    # -- stages --------------------------------------------------------------------------
    def stage_suite(self) -> None:
        from ...suitegen import write_suite

        if self.suite.exists():
            shutil.rmtree(self.suite)
        written = write_suite(self.suite, self.o.seed, self.o.per_family, self.o.families_generated)
        protected = protected_instructions([self.o.core], splits=("test", "dev_search", "dev_monitor"))
        dropped = []
        for task_id in written:
            instruction = (self.suite / task_id / "instruction.md").read_text(encoding="utf-8")
            if instruction_hash(instruction) in protected:
                shutil.rmtree(self.suite / task_id)
                dropped.append(f"{task_id} (= {protected[instruction_hash(instruction)]})")
        kept = sorted(t for t in written if (self.suite / t).is_dir())
        (self.suite / "splits.json").write_text(json.dumps({"train": kept}, indent=2) + "\n")
        self.facts["instances"] = {"generated": len(written), "kept": len(kept), "dropped_as_core_eval_tasks": dropped}
        self.echo(f"{len(written)} instance(s) of seed {self.o.seed}; {len(dropped)} dropped as copies of core test/dev tasks")
        plan = self.fault_plan(kept)
        faulted = {t for group in plan.values() for t in group}
        groups = [(CLEAN, [t for t in kept if t not in faulted])] + [(f, group) for f, group in plan.items() if group]
        for family, group in groups:
            if not group:
                continue
            workers = ["-n", "2"] if len(group) > 1 else []
            families = CLEAN if family == CLEAN else f"{CLEAN},{family}"
            self.run(self.pytest(str(self.suite), *workers, "--termrl-freeze", "-k", keyword_for(group), f"--termrl-families={families}"),
                     ok=OK_EXIT_CODES, log=self.out / f"freeze-{family}.log")
        frozen = sum(1 for line in (self.suite / "contracts.jsonl").read_text().splitlines() if line.strip())
        self.facts["instances"]["frozen"] = frozen
        self.facts["instances"]["fault_plan"] = {f: len(group) for f, group in plan.items()}

    def stage_teacher(self) -> None:
        run_dir = self.out / "teacher"
        shutil.rmtree(run_dir, ignore_errors=True)
        workers = ["-n", "2"] if self.facts.get("instances", {}).get("frozen", 2) > 1 else []
        self.run(self.pytest(str(self.suite), *workers, "--termrl-agent=recovery", "--termrl-split=train",
                             f"--termrl-families={self.teacher_families}", f"--termrl-run-dir={run_dir}"),
                 ok=OK_EXIT_CODES, log=self.out / "teacher.log")

    def stage_data(self) -> None:
        from ..data import SftDataOptions, build_sft_data

        report = build_sft_data([self.out / "teacher" / "episodes.jsonl"], self.out / "sft.jsonl",
                                SftDataOptions(splits=["train"], max_per_task=len(self.teacher_families.split(","))), suites=[self.suite], protect=[self.o.core])
        for line in report.lines():
            self.echo(line)
        rows = [json.loads(line) for line in (self.out / "sft.jsonl").read_text().splitlines() if line.strip()]
        per_family: dict[str, int] = {}
        for row in rows:
            key = f"{row['task_id'].rsplit('_', 1)[0]}/{row['family']}"
            per_family[key] = per_family.get(key, 0) + 1
        self.facts["data"] = {"examples": report.examples, "episodes_read": report.read, "skipped": dict(report.skipped),
                              "per_family_and_fault": dict(sorted(per_family.items()))}

    def stage_train(self) -> None:
        o = self.o
        adapter = self.out / "adapter"
        shutil.rmtree(adapter, ignore_errors=True)
        settings = [arg for name in TRAIN_SETTINGS for arg in ("--" + name.replace("_", "-"), option_text(getattr(o, name)))]
        self.run([o.python, "-m", "pytest_termrl.training", "sft-gguf", "--data", str(self.out / "sft.jsonl"),
                  "--out", str(adapter), *settings, "--seed", "0"], log=self.out / "train.log")
        meta = json.loads((adapter / "termrl_training.json").read_text())
        self.facts["train"] = {"examples": meta["examples"], "losses": meta["losses"], "seconds": meta["seconds"],
                               "options": {k: meta["options"][k] for k in TRAIN_SETTINGS if k != "threads"},
                               "loss_vocab_size": meta.get("loss_vocab_size"), "commit": code_commit()}

    @property
    def adapter(self) -> Path:
        return Path(self.o.adapter) if self.o.adapter else self.out / "adapter" / "adapter.gguf"

    def arm_servers(self, arm: str):
        from ...serving.embedded import MODEL_ALIAS, embedded_server

        alias = MODEL_ALIAS if arm == "base" else MODEL_ALIAS + "+sft"
        extra = ["--model_alias", alias]
        if arm == "trained":
            if not self.adapter.is_file():
                raise FileNotFoundError(f"{self.adapter}: the trained arm's adapter is missing (make train-demo writes it)")
            extra += ["--lora_path", str(self.adapter)]
        return alias, [embedded_server(extra_args=extra, log_path=self.eval_folder / f"{arm}-server-{i}.log", health_timeout_s=300)
                       for i in range(self.o.servers)]

    def eval_selection(self) -> list[str]:
        """``-k`` for the eval: the tasks clean, and the fault tasks under every family."""
        o = self.o
        families = resolve_families([CLEAN, *o.eval_families])
        faults = [f for f in families if f != CLEAN]
        tasks = list(o.eval_tasks) if o.eval_tasks else split_test_tasks(Path(o.core))
        if o.eval_sample and o.eval_sample < len(tasks):
            tasks = sorted(random.Random(o.eval_seed).sample(tasks, o.eval_sample))
        fault_tasks = tasks
        if faults and o.eval_fault_tasks:
            fault_tasks = fault_sample(Path(o.core), tasks, faults, o.eval_fault_tasks, o.eval_seed)
        self.facts["eval"] = {"families": families, "tasks": len(tasks), "fault_tasks": sorted(fault_tasks)}
        chosen = bool(o.eval_tasks or o.eval_sample)
        if not faults or fault_tasks == tasks:
            return ["-k", keyword_for(tasks)] if chosen else []
        clean = f"({CLEAN} and ({keyword_for(tasks)}))" if chosen else CLEAN
        return ["-k", f"{clean} or {keyword_for(fault_tasks)}"]

    def stage_eval(self) -> None:
        o = self.o
        folder = self.eval_folder
        folder.mkdir(parents=True, exist_ok=True)
        selection = self.eval_selection()
        families = ",".join(self.facts["eval"]["families"])
        unknown = [arm for arm in o.arms if arm not in ARMS + BASELINE_ARMS]
        if unknown:
            raise ValueError(f"--arms: unknown arm(s) {', '.join(unknown)}; expected some of {', '.join(BASELINE_ARMS + ARMS)}")
        for arm in o.arms:
            run_dir = folder / arm
            shutil.rmtree(run_dir, ignore_errors=True)
            common = [o.core, "--termrl-split=test", *selection, f"--termrl-families={families}", f"--termrl-run-dir={run_dir}",
                      f"--termrl-report={folder / (arm + '.json')}"]
            started = time.monotonic()
            if arm in BASELINE_ARMS:
                self.run(self.pytest(*common, "-n", "2", f"--termrl-agent={arm}"), ok=OK_EXIT_CODES, log=folder / f"{arm}.log")
                self.seconds[f"eval_{arm}"] = time.monotonic() - started
                continue
            alias, servers = self.arm_servers(arm)
            try:
                for server in servers:
                    server.start()
                urls = [f"--termrl-base-url={s.base_url}" for s in servers]
                self.run(self.pytest(*common, "-n", str(len(servers)),
                                     "--termrl-agent=openai", *urls, f"--termrl-model={alias}",
                                     f"--termrl-max-tool-calls={o.max_tool_calls}",
                                     f"--termrl-max-generated-tokens={o.max_generated_tokens}",
                                     f"--termrl-max-total-tokens={o.max_total_tokens}",
                                     f"--termrl-output-cap={o.output_cap_chars}", "--termrl-temperature=0",
                                     f"--termrl-seed={o.eval_seed}"),
                         ok=OK_EXIT_CODES, log=folder / f"{arm}.log")
            finally:
                for server in servers:
                    server.stop()
            self.seconds[f"eval_{arm}"] = time.monotonic() - started

    @property
    def eval_folder(self) -> Path:
        return (self.out / self.o.eval_dir).resolve()

    def stage_table(self) -> dict:
        table = compare_arms({arm: self.eval_folder / arm / "episodes.jsonl" for arm in self.o.arms})
        table["stages_s"] = {k: round(v, 1) for k, v in self.seconds.items()}
        table["total_s"] = round(sum(v for k, v in self.seconds.items() if not k.startswith("eval_")), 1)
        table.update(self.facts)
        table["settings"] = {k: v for k, v in vars(self.o).items() if k not in LOCAL_OPTIONS}
        text = json.dumps(table, indent=1, sort_keys=True) + "\n"
        (self.out / "train_demo.json").write_text(text)
        if self.o.results:
            Path(self.o.results).write_text(text)
        for line in format_table(table):
            self.echo(line)
        return table

    def stage_ship(self) -> None:
        """The adapter and its provenance into ``--ship`` (nothing without it)."""
        if not self.o.ship:
            return
        table = json.loads((self.out / "train_demo.json").read_text())
        command = [Path(self.o.python).name, "-m", "pytest_termrl.training", "demo",
                   *(arg for f in fields(DemoOptions) if f.name not in LOCAL_OPTIONS + ("ship",)
                     for arg in (flag_of(f), option_text(getattr(self.o, f.name))) if getattr(self.o, f.name) is not None)]
        target = ship(self.adapter, table, command, Path(self.o.ship))
        self.echo(f"shipped {target} ({target.stat().st_size / 2**20:.1f} MiB) and its provenance")

    def main(self) -> dict:
        self.out.mkdir(parents=True, exist_ok=True)
        facts_file = self.out / "facts.json"
        if facts_file.is_file():  # stages run one at a time keep what earlier ones found
            saved = json.loads(facts_file.read_text())
            self.facts, self.seconds = saved.get("facts", {}), saved.get("seconds", {})
        table: dict = {}
        for name in self.o.stages:
            started = time.monotonic()
            self.echo(f"== {name}")
            result = getattr(self, f"stage_{name}")()
            if name != "table":
                self.seconds[name] = time.monotonic() - started
                facts_file.write_text(json.dumps({"facts": self.facts, "seconds": self.seconds}, indent=1))
            else:
                table = result
        return table


def keyword_for(tasks: list[str]) -> str:
    """A ``-k`` expression naming these tasks (a task id is a whole keyword of its items)."""
    return " or ".join(sorted(tasks))


def split_test_tasks(core: Path) -> list[str]:
    return sorted(json.loads((core / "splits.json").read_text())["test"])


def fault_sample(core: Path, tasks: list[str], families: list[str], size: int, seed: int) -> list[str]:
    """``size`` of ``tasks`` drawn with ``seed`` among those every family applies to (per the frozen contracts)."""
    from ...tasks.contracts import CONTRACTS_FILE, read_contracts

    contracts = {c.task_id: c for c in read_contracts(core / CONTRACTS_FILE)[0]}
    eligible = sorted(t for t in tasks if t in contracts
                      and all(f in contracts[t].fault_targets and f not in contracts[t].excluded_faults for f in families))
    if len(eligible) <= size:
        return eligible
    return sorted(random.Random(seed).sample(eligible, size))
