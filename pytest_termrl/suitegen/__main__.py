"""python -m pytest_termrl.suitegen --out task_suites/core --seed 0 [--per-family 8] [--family NAME ...]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import families, write_splits, write_suite


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_termrl.suitegen", description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="suite folder to write the task directories into")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-family", type=int, default=8)
    parser.add_argument("--family", action="append", choices=families.NAMES,
                        help="generate only this family (repeatable); default: all")
    parser.add_argument("--no-splits", action="store_true", help="do not rewrite splits.json")
    args = parser.parse_args(argv)
    if not 1 <= args.per_family <= 99:
        parser.error("--per-family must be between 1 and 99")
    written = write_suite(args.out, args.seed, args.per_family, args.family)
    print(f"wrote {len(written)} task(s) to {args.out}")
    if not args.no_splits:
        splits = write_splits(args.out, args.seed)
        print("splits: " + ", ".join(f"{k} {len(v)}" for k, v in splits.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
