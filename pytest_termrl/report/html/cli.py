"""The report's command line: python -m pytest_termrl.report html RUN_DIR_OR_EPISODES_JSONL... -o report.html [--pair BASELINE OTHER]"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..episodes import describe_os_error
from .pair import PairError, choose_pair
from .runs import ReportInputError, read_runs


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_termrl.report html",
                                     description="Write a self-contained HTML report of one or more runs (the first is the baseline of the comparison).")
    parser.add_argument("runs", nargs="+", type=Path, help="run directories (holding episodes.jsonl) or episode JSONL files")
    parser.add_argument("-o", "--output", type=Path, default=Path("report.html"), help="the HTML file to write (default report.html)")
    parser.add_argument("--title", default=None, help="the page's title")
    parser.add_argument("--pair", nargs=2, metavar=("BASELINE", "OTHER"), default=None,
                        help="two run names the overview shows side by side (OTHER vs BASELINE); "
                             "default: the runs named 'base' and 'trained' when both are present, else no pair panel")
    args = parser.parse_args(argv)
    try:
        runs = read_runs(args.runs)
    except ReportInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    pair = (args.pair[0], args.pair[1]) if args.pair else None
    try:
        choose_pair([run.label for run in runs], pair)
    except PairError as exc:
        parser.error(str(exc))  # a usage error: exits with status 2
    for run in runs:
        for note in run.notes:
            print(f"warning: {note}", file=sys.stderr)
    from .page import TITLE, write_html

    started = time.perf_counter()
    try:
        size = write_html(args.output, runs, args.title or TITLE, pair)
    except OSError as exc:
        print(f"error: cannot write {args.output}: {describe_os_error(exc)}", file=sys.stderr)
        return 1
    episodes = sum(len(run.records) for run in runs)
    print(f"HTML report: {args.output} ({episodes} episode(s), {len(runs)} run(s), {size / 1e6:.2f} MB, "
          f"built in {time.perf_counter() - started:.1f} s)")
    return 0
