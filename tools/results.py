"""Regenerate a results table from a run's episode log: the figures behind the README.

python tools/results.py EPISODES.jsonl [...] --out results/NAME.json
writes the summary (per agent x prompt x family, bootstrap CIs) and prints it as Markdown.
Every episode counts once: of the records sharing an episode key (in one log, or across the
logs given, in the order given) the last is kept, and the duplicates dropped are said on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pytest_termrl.report.episodes import describe_os_error, latest_per_key, read_episodes
from pytest_termrl.report.outputs import write_whole
from pytest_termrl.report.summary import summarize


def markdown_table(summary: dict) -> str:
    lines = [
        "| agent | model | prompt | family | episodes | safe success | 95% CI | collateral | recovery failures | harness errors | mean commands |",
        "|---|---|---|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    for row in summary["rows"]:
        low, high = row["ci95"]
        lines.append(
            f"| {row['agent']} | {row['model'] or ''} | {row['prompt']} | {row['family']} | {row['episodes']} | "
            f"{row['safe_success_rate']:.1%} | [{low:.2f}, {high:.2f}] | {row['collateral_episodes']} | "
            f"{row['recovery_failures']} | {row['harness_errors']} | {row['mean_commands']:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/results.py", description=__doc__.splitlines()[0])
    parser.add_argument("episodes", nargs="+", type=Path, help="episode JSONL files of one or more runs")
    parser.add_argument("--out", type=Path, help="write the JSON summary here")
    args = parser.parse_args(argv)
    contents = latest_per_key([r for path in args.episodes for r in read_episodes(path)], ", ".join(map(str, args.episodes)))
    if not contents.records:
        print(f"no episode records in {contents.source}", file=sys.stderr)
        return 1
    if contents.warning():
        print(f"warning: {contents.warning()}", file=sys.stderr)
    summary = summarize(contents.records)
    summary["sources"] = [str(p) for p in args.episodes]
    if args.out:
        try:
            write_whole(args.out, json.dumps(summary, indent=2, sort_keys=True) + "\n")
        except OSError as exc:
            print(f"cannot write {args.out}: {describe_os_error(exc)}", file=sys.stderr)
            return 1
    print(markdown_table(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
