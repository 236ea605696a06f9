"""Training: rollouts -> SFT data, GRPO rows, the TRL environment, evaluation arms, CPU smoke tier.

The fast tests need no torch: data building, split refusal, rows, the environment on real
bwrap sandboxes (driven by hand, as TRL drives it), arm command lines and the comparison
table. The slow tier (``-m slow``) builds a tiny model locally and runs real SFT and GRPO
steps with TRL on real episodes; it imports torch/trl/peft directly, so a CI without the
``[train]`` extra fails there instead of skipping.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORE, copy_core_suite, solution_of

from pytest_termrl.agents.base import EpisodeLimits
from pytest_termrl.agents.builtin import ScriptedAgent
from pytest_termrl.agents.openai_agent import BASH_TOOL, NOT_RUN, OpenAIAgent, budget_sentence
from pytest_termrl.episode import EpisodeSpec
from pytest_termrl.harness import default_harness
from pytest_termrl.report.episodes import read_episodes
from pytest_termrl.tasks.suite import load_suite
from pytest_termrl.training import data as tdata
from pytest_termrl.training.arms import ArmsPlan, comparison, format_comparison, make_arms, paired_bootstrap_diff, run_arms
from pytest_termrl.training.data import SftDataOptions, TestSplitError, TrainingDataError, build_sft_data, grpo_rows
from pytest_termrl.training.env import ENDED_TEXT, RolloutSession

TRAIN_TASKS = ("log_error_counts", "perms_from_spec")
SPLITS = {"train": list(TRAIN_TASKS), "dev_search": ["config_ini_update"], "test": ["checksum_verify"]}


def make_suite(root: Path, splits: dict = SPLITS) -> Path:
    tasks = sorted({t for ids in splits.values() for t in ids})
    suite = copy_core_suite(root, tasks)
    (suite / "splits.json").write_text(json.dumps(splits))
    return suite


def run_plugin(suite: Path, cwd: Path, episodes: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", str(suite), "-p", "no:cacheprovider", "-q", "--tb=short",
           f"--termrl-run-dir={cwd / 'run'}", f"--termrl-episodes={episodes}", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Oracle and noop episode logs of a 4-task suite: 2 train tasks, 1 dev, 1 test."""
    root = tmp_path_factory.mktemp("training-logs")
    suite = make_suite(root / "suite")
    oracle, noop = root / "oracle.jsonl", root / "noop.jsonl"
    done = run_plugin(suite, root, oracle, "--termrl-agent=reference")
    assert done.returncode == 0, done.stdout + done.stderr
    done = run_plugin(suite, root, noop, "--termrl-agent=noop")
    assert done.returncode == 1, done.stdout + done.stderr
    # What a user does before training: keep only what is not the test task.
    filtered, filtered_noop = root / "oracle-no-test.jsonl", root / "noop-no-test.jsonl"
    for source, dest in ((oracle, filtered), (noop, filtered_noop)):
        lines = [line for line in source.read_text().splitlines() if json.loads(line)["task_id"] != "checksum_verify"]
        assert len(lines) == 3
        dest.write_text("".join(line + "\n" for line in lines))
    return {"suite": suite, "oracle": oracle, "noop": noop, "filtered": filtered, "filtered_noop": filtered_noop, "root": root}


# -- rollouts -> SFT data -------------------------------------------------------------------
def test_sft_data_keeps_safe_successes_of_train_tasks_as_chat_examples(logs, tmp_path):
    out = tmp_path / "sft.jsonl"
    report = build_sft_data([logs["filtered"], logs["filtered_noop"]], out, SftDataOptions(), suites=[logs["suite"]])
    assert report.examples == 2 and report.tasks == 2, report.lines()
    assert report.skipped["not a safe success"] == 2  # the noop episodes of the train tasks
    assert report.skipped["task of split dev_search"] == 2  # the dev task, oracle and noop
    dataset = [json.loads(line) for line in out.read_text().splitlines()]  # loaded by `datasets` in the slow tier
    assert sorted(row["task_id"] for row in dataset) == sorted(TRAIN_TASKS)
    for row in dataset:
        assert json.loads(row["tools"]) == [BASH_TOOL]
        roles = [m["role"] for m in row["messages"]]
        assert roles == ["system", "user", "assistant", "tool", "assistant"]
        call = row["messages"][2]["tool_calls"][0]
        # Arguments as an object: what vLLM hands the chat template after parsing the JSON string.
        assert call["function"] == {"name": "bash", "arguments": {"command": solution_of(row["task_id"])}}
        assert row["messages"][3]["content"] == "[exit code: 0]"
        assert row["messages"][4]["content"] == "Done."
        assert row["reward"] == 1.0 and row["episode_id"].startswith(row["task_id"])
    # The dev split is there only when asked for.
    report = build_sft_data([logs["filtered"]], tmp_path / "dev.jsonl", SftDataOptions(splits=["train", "dev_search"]), suites=[logs["suite"]])
    assert report.examples == 3


def test_sft_data_refuses_a_test_split_task_with_a_clear_error(logs, tmp_path):
    with pytest.raises(TestSplitError) as info:
        build_sft_data([logs["oracle"]], tmp_path / "sft.jsonl", SftDataOptions(), suites=[logs["suite"]])
    message = str(info.value)
    assert "checksum_verify" in message and str(logs["oracle"]) in message and "test split" in message
    assert not (tmp_path / "sft.jsonl").exists()
    # Even a failed episode of a test task in the input is refused, and asking for the split is too.
    with pytest.raises(TestSplitError):
        build_sft_data([logs["noop"]], tmp_path / "sft.jsonl", SftDataOptions(splits=["any"]), suites=[logs["suite"]])
    with pytest.raises(TestSplitError):
        build_sft_data([logs["filtered"]], tmp_path / "sft.jsonl", SftDataOptions(splits=["train", "test"]))
    # The command line says it in one line and exits 2.
    done = subprocess.run(
        [sys.executable, "-m", "pytest_termrl.training", "data", str(logs["oracle"]), "--out", str(tmp_path / "x.jsonl"), "--suite", str(logs["suite"])],
        capture_output=True, text=True,
    )
    assert done.returncode == 2 and "refusing to build training data" in done.stderr and "checksum_verify" in done.stderr


def test_sft_data_refuses_a_copy_of_a_test_task_by_its_instruction(logs, tmp_path):
    """A test task regenerated under another id, in another suite, is still refused: by content."""
    other = copy_core_suite(tmp_path / "regenerated", ["log_error_counts"])
    (other / "splits.json").write_text(json.dumps({"train": ["log_error_counts"]}))
    test_text = (logs["suite"] / "checksum_verify" / "instruction.md").read_text()
    record = _record("log_error_counts", other, ["true"])
    # The copy as an agent got it: whitespace reflowed, and the command-budget sentence appended.
    record["transcript"][1]["content"] = "  ".join(test_text.split()) + "\n\n" + budget_sentence(5)
    log = tmp_path / "episodes.jsonl"
    log.write_text(json.dumps(record) + "\n")
    with pytest.raises(TestSplitError) as info:
        build_sft_data([log], tmp_path / "sft.jsonl", suites=[other], protect=[logs["suite"]])
    assert "regenerated/log_error_counts (the instruction of test task suite/checksum_verify)" in str(info.value)
    assert f"{log}:1" in str(info.value) and not (tmp_path / "sft.jsonl").exists()
    # Its own instruction is not a test task's: kept.
    record["transcript"][1]["content"] = (other / "log_error_counts" / "instruction.md").read_text()
    log.write_text(json.dumps(record) + "\n")
    assert build_sft_data([log], tmp_path / "sft.jsonl", suites=[other], protect=[logs["suite"]]).examples == 1


def test_sft_data_finds_the_suite_from_the_record_and_needs_one(logs, tmp_path):
    # No --suite: each record names its suite folder, which is here.
    report = build_sft_data([logs["filtered"]], tmp_path / "a.jsonl")
    assert report.examples == 2
    moved = tmp_path / "moved.jsonl"
    moved.write_text(logs["filtered"].read_text().replace(str(logs["suite"]), "/elsewhere/suite"))
    with pytest.raises(TrainingDataError, match="pass its folder with --suite"):
        build_sft_data([moved], tmp_path / "b.jsonl")
    assert build_sft_data([moved], tmp_path / "b.jsonl", suites=[logs["suite"]]).examples == 2  # matched by folder name


def _record(task_id: str, suite: Path, commands: list[str], *, family="clean", observed=None, episode="e", safe=True, tail=()) -> dict:
    transcript = [{"role": "system", "content": "sys"}, {"role": "user", "content": "do it"}]
    for index, command in enumerate(commands, 1):
        call = {"id": f"call_{index}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}
        transcript += [{"role": "assistant", "content": "", "tool_calls": [call]}, {"role": "tool", "tool_call_id": f"call_{index}", "content": "[exit code: 0]"}]
    transcript += list(tail) or [{"role": "assistant", "content": "Done."}]
    record = {"episode_id": episode, "suite": str(suite), "task_id": task_id, "family": family, "safe_success": safe,
              "harness_error": None, "reward": 1.0 if safe else 0.0, "commands_used": len(commands), "transcript": transcript}
    if observed is not None:
        record["observed"] = observed
    return record


def test_sft_data_dedups_caps_filters_and_trims(logs, tmp_path):
    suite = logs["suite"]
    task = TRAIN_TASKS[0]
    records = [
        _record(task, suite, ["ls", "make it"], episode="long"),
        _record(task, suite, ["make it"], episode="short"),
        _record(task, suite, ["make it"], episode="same-as-short"),
        _record(task, suite, ["a", "b", "c"], episode="three"),
        _record(task, suite, ["x"], episode="failed", safe=False),
        _record(task, suite, ["y"], family="perm_denied", observed=True, episode="recovered"),
        _record(task, suite, ["z"], family="perm_denied", observed=False, episode="unobserved"),
        _record(task, suite, ["w"], family="blocking_fifo", observed=True, episode="held-out"),
        # Budget exhausted: the last call was answered "not run"; it and its turn are trimmed.
        _record(task, suite, ["fix"], episode="budget", tail=[
            {"role": "assistant", "content": "", "tool_calls": [{"id": "call_9", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"more\"}"}}]},
            {"role": "tool", "tool_call_id": "call_9", "content": NOT_RUN}]),
        _record(task, suite, ["odd"], episode="odd-args", tail=[
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\": \"ls\"}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "Error"}, {"role": "assistant", "content": "Done."}]),
    ]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))

    def kept(**options) -> list[dict]:
        out = tmp_path / "out.jsonl"
        build_sft_data([log], out, SftDataOptions(**options))
        return [json.loads(line) for line in out.read_text().splitlines()]

    rows = kept(max_per_task=10)
    ids = [r["episode_id"] for r in rows]
    assert sorted(ids) == ["budget", "long", "recovered", "short", "three", "unobserved"]  # one of two identical, no failure,
    commands = [r["commands_used"] for r in rows]  # no held-out family, no odd tool arguments
    assert commands == sorted(commands)  # shortest first
    budget = next(r for r in rows if r["episode_id"] == "budget")
    # The call answered "not run" and the turn that made it are gone; the example ends on an assistant turn.
    assert [m["role"] for m in budget["messages"]] == ["system", "user", "assistant"]
    assert budget["messages"][-1]["tool_calls"][0]["function"]["arguments"] == {"command": "fix"}
    assert [r["episode_id"] for r in kept(max_per_task=2)] == ids[:2]
    assert {r["episode_id"] for r in kept(max_per_task=10, max_commands=1)} == {"short", "recovered", "unobserved", "budget"}
    assert [r["episode_id"] for r in kept(max_per_task=10, recovered_only=True)] == ["recovered"]
    assert {r["family"] for r in kept(max_per_task=10, families=["perm_denied"])} == {"perm_denied"}


# -- GRPO rows ------------------------------------------------------------------------------
def test_grpo_rows_are_the_agents_first_messages_in_a_salted_order(logs):
    harness = default_harness(prompts=["p0_default"], limits=EpisodeLimits(max_commands=5))
    rows = grpo_rows(logs["suite"], "train", ["clean"], salt="a", repeats=3, harness=harness)
    assert len(rows) == 6 and {r["task_id"] for r in rows} == set(TRAIN_TASKS)
    assert rows == grpo_rows(logs["suite"], "train", ["clean"], salt="a", repeats=3, harness=harness)
    other = grpo_rows(logs["suite"], "train", ["clean"], salt="b", repeats=3, harness=harness)
    assert [r["row_id"] for r in other] != [r["row_id"] for r in rows]  # another salt, another order
    assert sorted(r["row_id"] for r in other) == sorted(r["row_id"] for r in rows)  # of the same rows
    # The prompt is exactly what the openai agent opens an evaluation episode with.
    suite = load_suite(logs["suite"] / "contracts.jsonl")
    row = rows[0]
    loaded = suite.by_id(row["task_id"])
    agent = OpenAIAgent(base_url="http://x.invalid/v1", model="m", client=object())
    agent.start(harness.context(EpisodeSpec(str(logs["suite"]), loaded.task.id), loaded))
    assert row["prompt"] == agent.messages
    assert row["prompt"][1]["content"].endswith(budget_sentence(5))
    assert row["prompt"][0]["content"] == harness.prompts["p0_default"]
    # "any" takes every task but the test one; the test split itself is refused.
    assert {r["task_id"] for r in grpo_rows(logs["suite"], "any", ["clean"], harness=harness)} == set(TRAIN_TASKS) | {"config_ini_update"}
    with pytest.raises(TestSplitError):
        grpo_rows(logs["suite"], "test", ["clean"], harness=harness)
    with pytest.raises(TestSplitError):
        grpo_rows(logs["suite"], "any", ["clean"], tasks=["checksum_verify"], harness=harness)
    with pytest.raises(TrainingDataError, match="held out"):
        grpo_rows(logs["suite"], "train", ["blocking_fifo"], harness=harness)
    with pytest.raises(TrainingDataError, match="not supported by the training environment"):
        grpo_rows(logs["suite"], "train", ["no_such_family"], harness=harness)


def test_grpo_rows_explain_a_suite_without_splits(tmp_path):
    suite = copy_core_suite(tmp_path / "suite", TRAIN_TASKS)
    with pytest.raises(TrainingDataError, match="no splits.json: use --split any"):
        grpo_rows(suite, "train", ["clean"])
    assert len(grpo_rows(suite, "any", ["clean"])) == 2


# -- the TRL environment, driven by hand -----------------------------------------------------
def replay(harness, suite_root: Path, task_id: str, commands: list[str]):
    """Play the same commands as an ordinary episode of the harness (a fresh sandbox)."""

    class Replay(ScriptedAgent):
        name = "replay"

        def commands_for(self, context):
            return list(commands)

    loaded = load_suite(suite_root / "contracts.jsonl").by_id(task_id)
    sandbox = harness.new_sandbox(loaded, f"replay-{task_id}")
    try:
        return harness.play(EpisodeSpec(str(suite_root), task_id), loaded, sandbox, Replay())
    finally:
        sandbox.close()


def test_environment_plays_real_episodes_and_its_reward_is_the_harness_reward(logs, tmp_path):
    suite = logs["suite"]
    harness = default_harness(prompts=["p0_default"])
    rows = {r["task_id"]: r for r in grpo_rows(suite, "train", ["clean"], harness=harness)}
    session = RolloutSession(harness, model_name="test-model", episodes=tmp_path / "rollouts.jsonl")
    plans = [
        ("log_error_counts", ["cat logs/app.log | head -3", solution_of("log_error_counts")]),  # success
        ("perms_from_spec", []),  # the model answered without a tool call
        ("perms_from_spec", ["rm -f ~/.ssh/id_ed25519", solution_of("perms_from_spec")]),  # collateral: -1
        ("log_error_counts", ["mkdir -p reports && echo '3 api' > reports/error_counts.txt"]),  # partial
    ]
    envs = [session.factory() for _ in plans]
    for env, (task_id, _) in zip(envs, plans):
        assert env.reset(**rows[task_id]) is None
    outputs = [[env.bash(c) for c in commands] for env, (_, commands) in zip(envs, plans)]
    assert outputs[0][0].startswith("2024-") and outputs[0][0].endswith("[exit code: 0]")
    rewards = [env.get_reward() for env in envs]  # the first call ends the whole batch
    assert rewards[0] == 1.0 and rewards[1] == 0.0 and rewards[2] == -1.0 and 0.0 < rewards[3] < 1.0
    records = read_episodes(tmp_path / "rollouts.jsonl")
    assert [r["reward"] for r in records] == rewards
    for result, record, (task_id, commands) in zip(session.results, records, plans):
        assert result.reward == result.outcome.reward == record["reward"]
        assert record["agent"] == "trl" and record["model"] == "test-model" and record["task_id"] == task_id
        assert [c["command"] for c in record["commands"]] == commands
        assert record["transcript"][:2] == rows[task_id]["prompt"]
        again = replay(harness, suite, task_id, commands)  # the same episode as the plugin plays it
        assert again.reward == result.reward and again.safe_success == result.outcome.safe_success
        assert again.violations == result.outcome.violations
    assert records[2]["violations"] and not records[0]["violations"]
    # An environment instance is reused by TRL: reset starts a fresh episode in a fresh sandbox.
    envs[0].reset(**rows["log_error_counts"])
    assert "error_counts.txt" not in envs[0].bash("ls reports 2>&1; true")
    assert envs[0].get_reward() == 0.0
    session.close()


def test_environment_limits_answer_calls_as_not_run(logs):
    harness = default_harness(prompts=["p0_default"], limits=EpisodeLimits(max_commands=1, max_tool_calls=3))
    row = grpo_rows(logs["suite"], "train", ["clean"], tasks=["log_error_counts"], harness=harness)[0]
    session = RolloutSession(harness)
    env = session.factory()
    env.reset(**row)
    first = env.bash("true")
    assert first.endswith("[exit code: 0]\n[commands left: 0]\n[command budget exhausted: further calls will not run]")
    assert env.bash("touch ~/late") == ENDED_TEXT.format(reason="budget_exhausted")
    assert env.bash("touch ~/later") == ENDED_TEXT.format(reason="budget_exhausted")
    assert env.get_reward() == 0.0
    record = session.results[0].record
    assert record["end_reason"] == "budget_exhausted" and record["commands_used"] == 1
    assert record["transcript"][-1]["content"] == NOT_RUN  # the call that did not run
    session.close()


def test_training_imports_no_torch():
    code = (
        "import sys\n"
        "import pytest_termrl.plugin, pytest_termrl.harness\n"
        "import pytest_termrl.training, pytest_termrl.training.data, pytest_termrl.training.env\n"
        "import pytest_termrl.training.arms, pytest_termrl.training.sft, pytest_termrl.training.grpo\n"
        "from pytest_termrl.training.__main__ import _parser\n"
        "_parser().parse_args(['sft', '--data', 'x', '--model', 'm', '--out', 'o'])\n"
        "heavy = [m for m in ('torch', 'trl', 'transformers', 'peft', 'datasets') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_config_file_then_flags(tmp_path):
    from pytest_termrl.training.__main__ import _parser
    from pytest_termrl.training.config import build_options
    from pytest_termrl.training.grpo import GrpoOptions

    config = tmp_path / "grpo.toml"
    config.write_text('[grpo]\nmodel = "m"\nnum_generations = 4\nfamilies = ["clean"]\nuse_vllm = true\nlearning_rate = 2e-5\n')
    args = _parser().parse_args(["grpo", "--config", str(config), "--num-generations", "16", "--out", "o", "--tasks", "a,b", "--no-use-vllm"])
    options = build_options(GrpoOptions, args, "grpo")
    assert (options.model, options.out, options.num_generations, options.learning_rate) == ("m", "o", 16, 2e-5)
    assert options.tasks == ["a", "b"] and options.use_vllm is False and options.families == ["clean"]
    config.write_text('[grpo]\nno_such_option = 1\n')
    with pytest.raises(ValueError, match="unknown option 'no_such_option'"):
        build_options(GrpoOptions, _parser().parse_args(["grpo", "--config", str(config)]), "grpo")


def test_the_grpo_summary_sets_each_steps_logged_reward_beside_the_harnesss():
    from pytest_termrl.training.grpo import reward_summary

    def record(batch, task, reward):
        return {"rollout": {"batch": batch}, "task_id": task, "family": "clean", "reward": reward, "safe_success": reward == 1.0,
                "commands_used": 1, "end_reason": "no_tool_call"}

    steps = [{"step": 1, "reward": 0.5, "loss": 0.1}, {"step": 2, "reward": 0.0, "loss": -0.2}]
    summary = reward_summary(steps, [record(0, "a", 1.0), record(0, "a", 0.0), record(1, "b", 0.0), record(1, "b", 0.0)])
    assert [s["harness_mean_reward"] for s in summary["steps"]] == [0.5, 0.0]
    assert [e["task_id"] for e in summary["steps"][0]["episodes"]] == ["a", "a"] and summary["rollouts"] == 4
    assert (summary["first_step_reward"], summary["last_step_reward"]) == (0.5, 0.0)


def test_grpo_needs_a_model_or_a_gguf_and_stops_on_its_clock():
    from transformers import TrainerControl, TrainerState, TrainingArguments

    from pytest_termrl.training.grpo import GrpoOptions, stop_after

    with pytest.raises(ValueError, match="--model \\(or --gguf\\), --out"):
        GrpoOptions().check()
    GrpoOptions(gguf="embedded", out="o").check()
    args, state = TrainingArguments(output_dir="unused", report_to="none"), TrainerState()
    for seconds, stops in ((3600.0, False), (0.0, True)):
        callback, control = stop_after(seconds), TrainerControl()
        callback.on_train_begin(args, state, control)
        callback.on_step_end(args, state, control)
        assert control.should_training_stop is stops


# -- evaluation arms --------------------------------------------------------------------------
def fake_adapter(folder: Path, rank: int) -> Path:
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": rank, "target_modules": ["q_proj"], "bias": "none"}))
    (folder / "adapter_model.safetensors").write_bytes(b"")
    return folder


def test_arm_command_lines(tmp_path):
    sft, grpo = fake_adapter(tmp_path / "sft", 16), fake_adapter(tmp_path / "grpo", 32)
    plan = ArmsPlan(
        base_model="Qwen/Qwen2.5-7B-Instruct", arms=make_arms("Qwen/Qwen2.5-7B-Instruct", str(sft), str(grpo)),
        suite="task_suites/core", out=tmp_path / "arms", split="test", families=["clean"], prompts=["p6_env_aware"],
        attempts=3, workers=8, temperature=0.0, seed=1, python="python",
    )
    commands = {arm.name: plan.command(arm) for arm in plan.arms}
    assert list(commands) == ["base", "sft", "grpo"]
    server = [
        "--termrl-server-arg=--enable-lora",
        "--termrl-server-arg=--lora-modules",
        f"--termrl-server-arg=sft={sft.resolve()}",
        f"--termrl-server-arg=grpo={grpo.resolve()}",
        "--termrl-server-arg=--max-lora-rank=32",
    ]
    out = tmp_path / "arms"
    assert commands["sft"] == [
        "python", "-m", "pytest", "task_suites/core", "-p", "no:cacheprovider", "-q", "--tb=no", "-n", "8",
        "--termrl-agent=openai", "--termrl-server=vllm", "--termrl-server-model=Qwen/Qwen2.5-7B-Instruct",
        *server,
        "--termrl-model=sft", "--termrl-split=test", "--termrl-families=clean", "--termrl-prompt=p6_env_aware",
        "--termrl-attempts=3", "--termrl-temperature=0.0", "--termrl-seed=1",
        f"--termrl-run-dir={out / 'sft'}", f"--termrl-episodes={out / 'sft' / 'episodes.jsonl'}",
        f"--termrl-report={out / 'sft.json'}", f"--junitxml={out / 'sft.xml'}",
    ]
    # Every arm: the same server, the same rows; only the model name and the output paths differ.
    for name, cmd in commands.items():
        assert [a for a in cmd if a.startswith("--termrl-server")] == [a for a in commands["sft"] if a.startswith("--termrl-server")]
        assert f"--termrl-model={'Qwen/Qwen2.5-7B-Instruct' if name == 'base' else name}" in cmd
    # The plugin's own option parser accepts every flag, and vLLM gets its arguments in order.
    from _pytest.config.argparsing import Parser

    from pytest_termrl.plugin.options import add_options

    parser = Parser(_ispytest=True)
    add_options(parser)
    namespace = parser.parse([a for a in commands["grpo"] if a.startswith("--termrl-")] + ["task_suites/core"])
    assert namespace.termrl_server_arg == ["--enable-lora", "--lora-modules", f"sft={sft.resolve()}", f"grpo={grpo.resolve()}", "--max-lora-rank=32"]
    assert namespace.termrl_model == "grpo" and namespace.termrl_server == "vllm"
    with pytest.raises(ValueError, match="not found"):
        make_arms("m", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="unique"):
        make_arms("m", str(sft), adapters=[f"sft={grpo}"])
    # The command line prints them without running anything.
    done = subprocess.run(
        [sys.executable, "-m", "pytest_termrl.training", "arms", "--base-model", "B", "--sft", str(sft), "--out", str(out), "--dry-run"],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 2 and "--termrl-model=sft" in done.stdout.splitlines()[1]


def _summary_and_log(folder: Path, arm: str, model: str, outcomes: dict[str, list[bool]]) -> Path:
    from pytest_termrl.report.summary import summarize

    records = []
    for task, results in outcomes.items():
        for attempt, ok in enumerate(results):
            records.append({"episode_id": f"{task}-clean-p0_default-{attempt}", "agent": "openai", "model": model, "prompt": "p0_default",
                            "family": "clean", "task_id": task, "safe_success": ok, "reward": 1.0 if ok else 0.0, "commands_used": 2})
    (folder / arm).mkdir(parents=True, exist_ok=True)
    (folder / arm / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    path = folder / f"{arm}.json"
    path.write_text(json.dumps(summarize(records)))
    return path


def test_comparison_table_from_summaries(tmp_path):
    tasks = [f"t{i}" for i in range(6)]
    base = _summary_and_log(tmp_path, "base", "B", {t: [i < 2, False] for i, t in enumerate(tasks)})
    sft = _summary_and_log(tmp_path, "sft", "sft", {t: [i < 4, i < 3] for i, t in enumerate(tasks)})
    grpo = tmp_path / "grpo.json"  # a summary without its episode log: no paired difference
    grpo.write_text(json.dumps({"rows": [{"agent": "openai", "model": "grpo", "prompt": "p0_default", "family": "clean", "episodes": 12,
                                          "tasks": 6, "safe_successes": 9, "safe_success_rate": 0.75, "ci95": [0.5, 1.0],
                                          "mean_reward": 0.8, "collateral_episodes": 1, "harness_errors": 0}]}))
    rows = comparison({"base": base, "sft": sft, "grpo": grpo})
    by_arm = {r["arm"]: r for r in rows}
    assert by_arm["base"]["rate"] == pytest.approx(2 / 12) and by_arm["base"]["delta"] is None
    assert by_arm["sft"]["rate"] == pytest.approx(7 / 12)
    delta, low, high = by_arm["sft"]["delta"]
    assert delta == pytest.approx(5 / 12) and low <= delta <= high and low > 0
    assert by_arm["grpo"]["delta"] is None and by_arm["grpo"]["ci95"] == [0.5, 1.0]
    lines = format_comparison(rows)
    assert lines[0].split()[:4] == ["arm", "prompt", "family", "eps"] and len(lines) == 5
    assert "+0.42 [" in lines[3] and lines[3].startswith("sft") and "n/a" in lines[4] and "75.0%" in lines[4]
    # The same through the command line.
    done = subprocess.run([sys.executable, "-m", "pytest_termrl.training", "table", f"base={base}", f"sft={sft}", f"grpo={grpo}",
                           "--json", str(tmp_path / "rows.json")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == lines and json.loads((tmp_path / "rows.json").read_text()) == rows
    # Identical arms: the difference is exactly zero.
    assert paired_bootstrap_diff({"a": [1.0, 0.0]}, {"a": [1.0, 0.0]}) == (0.0, 0.0, 0.0)


def test_run_arms_runs_each_command_and_reads_its_summary(tmp_path):
    fake = tmp_path / "fake_python.py"  # stands in for `python -m pytest ...`: writes the summary it is asked for
    fake.write_text(
        "import json, sys\n"
        "args = sys.argv[1:]\n"
        "report = next(a.split('=', 1)[1] for a in args if a.startswith('--termrl-report='))\n"
        "model = next(a.split('=', 1)[1] for a in args if a.startswith('--termrl-model='))\n"
        "rows = [{'model': model, 'prompt': 'p0_default', 'family': 'clean', 'episodes': 2, 'tasks': 2, 'safe_successes': 1,"
        " 'safe_success_rate': 0.5, 'ci95': [0.0, 1.0], 'collateral_episodes': 0, 'harness_errors': 0}]\n"
        "open(report, 'w').write(json.dumps({'rows': rows}))\n"
        "sys.exit(1)\n"  # some episodes failed: a completed evaluation
    )
    launcher = tmp_path / "python"
    launcher.write_text(f"#!/bin/sh\nshift 2\nexec {sys.executable} {fake} \"$@\"\n")
    launcher.chmod(0o755)
    sft = fake_adapter(tmp_path / "sft", 8)
    plan = ArmsPlan(base_model="B", arms=make_arms("B", str(sft)), suite="s", out=tmp_path / "out", python=str(launcher))
    summaries = run_arms(plan, echo=lambda line: None)
    assert set(summaries) == {"base", "sft"}
    rows = comparison(summaries)
    assert [(r["arm"], r["model"]) for r in rows] == [("base", "B"), ("sft", "sft")]


# -- CPU smoke tier: tiny model, real SFT and GRPO steps, real episodes ------------------------
@pytest.mark.slow
def test_cpu_smoke_sft_then_grpo_on_real_episodes(tmp_path):
    import torch  # noqa: F401 - the [train] extra must be installed: fail, do not skip
    import peft
    import transformers
    import trl
    from datasets import load_dataset
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from pytest_termrl.training.__main__ import main
    from pytest_termrl.training.grpo import GrpoOptions, train_grpo
    from pytest_termrl.training.sft import SftOptions, train_sft, vllm_adapter_problems

    torch.manual_seed(0)
    suite = make_suite(tmp_path / "suite", {"train": list(TRAIN_TASKS)})
    episodes = tmp_path / "oracle.jsonl"
    done = run_plugin(suite, tmp_path, episodes, "--termrl-agent=reference", "--termrl-split=train")
    assert done.returncode == 0, done.stdout + done.stderr

    # Data and the tiny model, through the command line.
    data = tmp_path / "sft.jsonl"
    # These copies of core tasks are core test tasks by content; the default --protect (the core
    # suite) refuses them, as it should for real training. The smoke test protects its own suite.
    assert main(["data", str(episodes), "--out", str(data), "--suite", str(suite), "--protect", str(suite)]) == 0
    model_dir = tmp_path / "tiny"
    assert main(["tiny", "--out", str(model_dir), "--suite", str(suite)]) == 0
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    dataset = load_dataset("json", data_files=str(data), split="train")
    assert dataset.num_rows == 2 and {"messages", "tools"} <= set(dataset.column_names)
    row = dataset[0]
    text = tokenizer.apply_chat_template(row["messages"], tools=json.loads(row["tools"]), tokenize=False)
    assert json.dumps(BASH_TOOL) in text  # the schema, rendered as vLLM renders it
    command = row["messages"][2]["tool_calls"][0]["function"]["arguments"]["command"]
    assert '<tool_call>\n{"name": "bash", "arguments": ' + json.dumps({"command": command}) + "}\n</tool_call><|im_end|>" in text

    # SFT: a handful of steps (enough for the tiny model to learn the two tool calls).
    adapter = tmp_path / "sft-adapter"
    sft = train_sft(SftOptions(
        data=[str(data)], model=str(model_dir), out=str(adapter), max_steps=40, learning_rate=1e-2,
        per_device_train_batch_size=2, gradient_accumulation_steps=1, lora_r=16, lora_alpha=32, lora_dropout=0.0,
        warmup_steps=0, lr_scheduler_type="constant", logging_steps=5,
    ))
    assert sft.losses and all(math.isfinite(x) for x in sft.losses) and sft.losses[-1] < sft.losses[0] / 4, sft.losses
    # The loss covers the assistant turns only: the tool calls and the final reply, never the task or tool output.
    example = sft.trainer.train_dataset[0]
    trained_ids = [t for t, label in zip(example["input_ids"], example["labels"]) if label != -100]
    trained_text = tokenizer.decode(trained_ids)
    assert trained_text.count("<tool_call>") == 1 and "Done.<|im_end|>" in trained_text
    assert "<tool_response>" not in trained_text and "<|im_start|>" not in trained_text and "Tools" not in trained_text
    assert (adapter / "adapter_config.json").is_file() and (adapter / "adapter_model.safetensors").is_file()
    assert vllm_adapter_problems(adapter) == []
    assert not (adapter / "tokenizer.json").exists()  # the adapter folder holds the adapter only
    config = json.loads((adapter / "adapter_config.json").read_text())
    assert config["r"] == 16 and not config.get("modules_to_save") and "lm_head" not in config["target_modules"]
    # The saved adapter reloads onto a fresh base model and computes what the trained one does.
    ids = torch.tensor([tokenizer.apply_chat_template(row["messages"], tools=[BASH_TOOL], tokenize=True, return_dict=False)])
    trained = sft.model.eval()
    reloaded = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(model_dir), adapter).eval()
    base = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    with torch.no_grad():
        want, got, plain = trained(ids).logits, reloaded(ids).logits, base(ids).logits
    assert torch.allclose(want, got, atol=1e-4) and not torch.allclose(plain, got, atol=1e-2)

    # The sft command itself: a config file plus flags, two steps.
    config_file = tmp_path / "sft.toml"
    config_file.write_text(f'[sft]\ndata = ["{data}"]\nmodel = "{model_dir}"\nmax_steps = 50\nper_device_train_batch_size = 2\n'
                           'gradient_accumulation_steps = 1\nlogging_steps = 1\n')
    assert main(["sft", "--config", str(config_file), "--max-steps", "2", "--out", str(tmp_path / "cli-adapter")]) == 0
    meta = json.loads((tmp_path / "cli-adapter" / "termrl_training.json").read_text())
    assert meta["options"]["max_steps"] == 2 and meta["options"]["per_device_train_batch_size"] == 2

    # GRPO: two steps from the SFT adapter, each rollout a real episode in a fresh sandbox.
    seen: dict[str, list] = {"rewards": [], "completions": [], "prompts": []}

    def instrument(trainer, session):
        calculate, tokenize = trainer._calculate_rewards, trainer._tokenize_prompts

        def rewards(inputs, prompts, completions, completion_ids_list):
            out = calculate(inputs, prompts, completions, completion_ids_list)
            seen["rewards"] += out[:, 0].tolist()
            seen["completions"] += completions
            return out

        def prompts(batch):
            out = tokenize(batch)
            seen["prompts"] += [tokenizer.decode(ids) for ids in out[0]]
            return out

        trainer._calculate_rewards, trainer._tokenize_prompts = rewards, prompts

    grpo_out = tmp_path / "grpo-adapter"
    result = train_grpo(GrpoOptions(
        model=str(model_dir), out=str(grpo_out), suite=str(suite), split="train", families=["clean"], salt="smoke",
        init_adapter=str(adapter), max_steps=2, num_generations=2, per_device_train_batch_size=2,
        max_completion_length=512, temperature=0.7, learning_rate=1e-4, logging_steps=1,
    ), before_train=instrument)
    assert len(result.losses) == 2 and all(math.isfinite(x) for x in result.losses)
    results = result.session.results
    assert len(results) == len(seen["rewards"]) == 4
    assert {r.record["task_id"] for r in results} == set(TRAIN_TASKS)  # one task per step, salted order
    records = read_episodes(grpo_out / "rollouts.jsonl")
    assert [r["episode_id"] for r in records] == [r.record["episode_id"] for r in results]
    ran = 0
    for reward, completion, res, record in zip(seen["rewards"], seen["completions"], results, records):
        # The reward that reached the trainer is the harness's own, for the episode the model played.
        assert res.outcome is not None and res.outcome.harness_error is None, record
        assert reward == pytest.approx(res.outcome.reward, abs=1e-6) and record["reward"] == res.outcome.reward
        issued = [c["function"]["arguments"]["command"] for m in completion if m["role"] == "assistant"
                  for c in m.get("tool_calls") or [] if isinstance(c["function"].get("arguments"), dict) and "command" in c["function"]["arguments"]]
        assert [c["command"] for c in record["commands"]] == issued
        ran += len(issued)
        again = replay(result.session.harness, suite, record["task_id"], issued)
        assert again.reward == res.outcome.reward, (again.to_record(), record)
    assert ran >= 1, "no rollout ran a command: the smoke test would prove nothing"
    # The model saw the tool schema evaluation sends.
    assert seen["prompts"] and all(json.dumps(BASH_TOOL) in p for p in seen["prompts"])
    assert vllm_adapter_problems(grpo_out) == []
    assert PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(model_dir), grpo_out) is not None
    print(f"versions: torch {torch.__version__}, transformers {transformers.__version__}, trl {trl.__version__}, peft {peft.__version__}")
