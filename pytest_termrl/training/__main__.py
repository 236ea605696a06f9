"""python -m pytest_termrl.training {data,sft,grpo,arms,table,tiny} ...

  data   episode logs -> SFT chat data (safe successes; never a test-split task)
  sft    LoRA SFT with TRL (loss on assistant turns); adapter servable by vLLM
  sft-gguf  LoRA SFT of the embedded GGUF model on examples rendered as its server renders them;
            writes the PEFT adapter and its GGUF form (adapter.gguf, for --lora_path)
  gguf-lora PEFT LoRA adapter folder -> GGUF LoRA adapter for llama.cpp
  demo   the whole loop on the embedded Gemma 3 270M: data, train, convert, serve, evaluate, table
  grpo   GRPO with TRL on real multi-turn episodes (fresh sandbox per rollout)
  arms   evaluate base / SFT / GRPO through the pytest plugin and compare (--dry-run: print the commands)
  table  the comparison table of existing arm summaries (ARM=SUMMARY.json ...)
  tiny   write a tiny local model (for smoke tests and the CPU benchmark)

``sft`` and ``grpo`` take ``--config FILE`` (TOML or JSON) and a flag per option; flags win.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..errors import TermrlError
from ..faults import CLEAN


def _parser() -> argparse.ArgumentParser:
    from .config import add_dataclass_arguments
    from .grpo import GrpoOptions
    from .sft import SftOptions
    from .embedded.sft_gguf import GgufSftOptions

    parser = argparse.ArgumentParser(prog="python -m pytest_termrl.training", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    data = sub.add_parser("data", help="episode logs -> SFT chat data (JSONL)")
    data.add_argument("episodes", nargs="+", help="episode JSONL files (the plugin's --termrl-episodes)")
    data.add_argument("--out", required=True, help="output JSONL (loads with datasets.load_dataset('json', ...))")
    data.add_argument("--suite", action="append", default=[], help="suite folder(s) the episodes came from (for splits; default: the path in each record)")
    data.add_argument("--recovered-only", action="store_true", help="keep only episodes that recovered from an observed fault")
    data.add_argument("--max-commands", type=int, default=None, help="keep only episodes that used at most N commands")
    data.add_argument("--max-per-task", type=int, default=4, help="examples kept per task after de-duplication (default 4)")
    data.add_argument("--splits", default="train", help="splits whose tasks may be used, comma-separated, or 'any' (never test; default train)")
    data.add_argument("--families", default=None, help="keep only these fault families (comma-separated)")
    data.add_argument("--protect", action="append", default=[], help="suite whose test tasks are refused by content too (instruction hash; repeatable; default: the core suite)")

    for name, cls, text in (("sft", SftOptions, "LoRA SFT with TRL's SFTTrainer"), ("grpo", GrpoOptions, "GRPO with TRL's GRPOTrainer on real episodes"),
                            ("sft-gguf", GgufSftOptions, "LoRA SFT of the embedded GGUF model, rendered as its server renders")):
        command = sub.add_parser(name, help=text)
        command.add_argument("--config", default=None, help="TOML or JSON file of options (flags win)")
        add_dataclass_arguments(command, cls)

    from .embedded.demo import DemoOptions

    demo = sub.add_parser("demo", help="train the embedded model on the environment's episodes and compare it with the base model")
    demo.add_argument("--small", action="store_true", help="the CI tier: two families, a few examples and steps, two test tasks")
    add_dataclass_arguments(demo, DemoOptions)

    convert = sub.add_parser("gguf-lora", help="PEFT LoRA adapter -> GGUF LoRA adapter (llama.cpp --lora_path)")
    convert.add_argument("adapter", help="adapter folder (save_pretrained)")
    convert.add_argument("--base", default=None, help="base GGUF (default: the embedded model)")
    convert.add_argument("--out", required=True, help="GGUF file to write")

    arms = sub.add_parser("arms", help="evaluate base / SFT / GRPO adapters through the pytest plugin")
    arms.add_argument("--base-model", required=True, help="the base model vLLM serves")
    arms.add_argument("--sft", default=None, help="SFT adapter folder")
    arms.add_argument("--grpo", default=None, help="GRPO adapter folder")
    arms.add_argument("--adapter", action="append", default=[], help="another arm: NAME=DIR (repeatable)")
    arms.add_argument("--suite", default="task_suites/core")
    arms.add_argument("--split", default="test", help="split to evaluate ('' for all tasks; default test)")
    arms.add_argument("--families", default=CLEAN)
    arms.add_argument("--prompt", action="append", default=None, help="system prompt (repeatable; default p0_default)")
    arms.add_argument("--attempts", type=int, default=1)
    arms.add_argument("--workers", type=int, default=1, help="pytest-xdist workers per arm")
    arms.add_argument("--temperature", type=float, default=None)
    arms.add_argument("--seed", type=int, default=None)
    arms.add_argument("--max-lora-rank", type=int, default=None, help="vLLM --max-lora-rank (default: the largest adapter rank)")
    arms.add_argument("--server-arg", action="append", default=[], help="extra vLLM argument for every arm (repeatable)")
    arms.add_argument("--pytest-arg", action="append", default=[], help="extra pytest argument for every arm (repeatable)")
    arms.add_argument("--out", required=True, help="folder for the arms' summaries and runs")
    arms.add_argument("--dry-run", action="store_true", help="print the commands; run nothing")

    table = sub.add_parser("table", help="comparison table of arm summaries")
    table.add_argument("summaries", nargs="+", help="ARM=SUMMARY.json (the arm named 'base' is the reference)")
    table.add_argument("--episodes", action="append", default=[], help="ARM=EPISODES.jsonl (default: <summary stem>/episodes.jsonl when present)")
    table.add_argument("--json", default=None, help="also write the rows as JSON here")

    tiny = sub.add_parser("tiny", help="write a tiny local causal LM and tokenizer")
    tiny.add_argument("--out", required=True)
    tiny.add_argument("--suite", default="task_suites/core", help="text the tokenizer is trained on")
    tiny.add_argument("--vocab-size", type=int, default=2048)
    tiny.add_argument("--hidden", type=int, default=64)
    tiny.add_argument("--layers", type=int, default=2)
    tiny.add_argument("--seed", type=int, default=0)
    return parser


def _pairs(items: list[str], what: str) -> dict[str, Path]:
    pairs: dict[str, Path] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ValueError(f"{what} {item!r}: expected NAME=PATH")
        pairs[name] = Path(path)
    return pairs


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except (TermrlError, ValueError, KeyError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.command == "data":
        from .data import SftDataOptions, build_sft_data

        options = SftDataOptions(
            recovered_only=args.recovered_only,
            max_commands=args.max_commands,
            max_per_task=args.max_per_task,
            splits=[s.strip() for s in args.splits.split(",") if s.strip()],
            families=[f.strip() for f in args.families.split(",")] if args.families else None,
        )
        from .embedded.demo import CORE

        protect = args.protect or ([CORE] if (CORE / "splits.json").is_file() else [])
        report = build_sft_data(args.episodes, args.out, options, suites=args.suite, protect=protect)
        print("\n".join(report.lines()))
        return 0 if report.examples else 1
    if args.command == "sft":
        from .config import build_options
        from .sft import SftOptions, train_sft

        result = train_sft(build_options(SftOptions, args, "sft"))
        print(f"adapter: {result.out} (final loss {result.losses[-1]:.4f})")
        return 0
    if args.command == "sft-gguf":
        from .config import build_options
        from .embedded.sft_gguf import GgufSftOptions, train_gguf_sft

        gguf_result = train_gguf_sft(build_options(GgufSftOptions, args, "sft"))
        print(f"adapter: {gguf_result.out}, GGUF: {gguf_result.gguf_adapter} ({gguf_result.examples} examples; "
              f"loss {gguf_result.losses[0]:.4f} -> {gguf_result.losses[-1]:.4f})")
        print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in gguf_result.seconds.items()))
        return 0
    if args.command == "demo":
        import dataclasses

        from .embedded.demo import Demo, DemoOptions

        demo_options = DemoOptions.small(args.out or "out/train_demo_small") if args.small else DemoOptions()
        for f in dataclasses.fields(DemoOptions):
            value = getattr(args, f.name, None)
            if value is not None:
                setattr(demo_options, f.name, value)
        Demo(demo_options).main()
        return 0
    if args.command == "gguf-lora":
        from ..serving.embedded import ensure_embedded_model
        from .embedded.gguf_lora import convert_peft_lora

        lora_report = convert_peft_lora(args.adapter, args.base or ensure_embedded_model(), args.out)
        print(f"GGUF LoRA: {lora_report.out} ({lora_report.tensors} modules, rank {lora_report.rank}, "
              f"alpha {lora_report.alpha:g}, {lora_report.architecture})")
        return 0
    if args.command == "grpo":
        from .config import build_options
        from .grpo import GrpoOptions, train_grpo

        grpo_result = train_grpo(build_options(GrpoOptions, args, "grpo"))
        rewards = [r.reward for r in grpo_result.session.results]
        mean = sum(rewards) / len(rewards) if rewards else float("nan")
        print(f"adapter: {grpo_result.out} ({len(rewards)} rollouts, mean reward {mean:.3f})")
        return 0
    if args.command == "arms":
        from .arms import ArmsPlan, comparison, format_comparison, make_arms, run_arms

        plan = ArmsPlan(
            base_model=args.base_model,
            arms=make_arms(args.base_model, args.sft, args.grpo, args.adapter),
            suite=args.suite,
            out=Path(args.out),
            split=args.split or None,
            families=[f.strip() for f in args.families.split(",") if f.strip()],
            prompts=args.prompt or ["p0_default"],
            attempts=args.attempts,
            workers=args.workers,
            temperature=args.temperature,
            seed=args.seed,
            max_lora_rank=args.max_lora_rank,
            server_args=args.server_arg,
            pytest_args=args.pytest_arg,
        )
        if args.dry_run:
            import shlex

            for arm in plan.arms:
                print(shlex.join(plan.command(arm)))
            return 0
        summaries = run_arms(plan)
        print("\n".join(format_comparison(comparison(summaries))))
        return 0
    if args.command == "table":
        from .arms import comparison, format_comparison

        rows = comparison(_pairs(args.summaries, "summary"), _pairs(args.episodes, "--episodes"))
        print("\n".join(format_comparison(rows)))
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
        return 0
    if args.command == "tiny":
        from .tiny import build_tiny_lm

        out = build_tiny_lm(Path(args.out), Path(args.suite), vocab_size=args.vocab_size, hidden=args.hidden, layers=args.layers, seed=args.seed)
        print(f"tiny model: {out}")
        return 0
    raise AssertionError(args.command)


if __name__ == "__main__":
    sys.exit(main())
