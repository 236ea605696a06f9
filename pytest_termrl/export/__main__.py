"""The export command: ``python -m pytest_termrl.export harbor SUITE OUT [--base-image IMAGE]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import TermrlError
from .harbor import DEFAULT_BASE_IMAGE, export_suite


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_termrl.export", description="Write a suite's tasks in another harness's format.")
    sub = parser.add_subparsers(dest="format", required=True)
    harbor = sub.add_parser("harbor", help="Harbor task directories (task.toml, instruction.md, environment/, solution/, tests/)")
    harbor.add_argument("suite", type=Path, help="a suite folder (task directories of any format this harness reads)")
    harbor.add_argument("out", type=Path, help="the folder to write one task directory per task into")
    harbor.add_argument("--base-image", default=DEFAULT_BASE_IMAGE, help=f"the Dockerfiles' default BASE_IMAGE (default {DEFAULT_BASE_IMAGE})")
    args = parser.parse_args(argv)
    try:
        written, problems = export_suite(args.suite, args.out, args.base_image)
    except (TermrlError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for name, problem in sorted(problems.items()):
        print(f"not exported: {name}: {problem}", file=sys.stderr)
    print(f"{len(written)} tasks written to {args.out}" + (f", {len(problems)} not exported" if problems else ""))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
