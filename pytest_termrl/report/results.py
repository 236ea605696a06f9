"""Regenerate a results table from a run's episode log: the figures behind the README.

python -m pytest_termrl.report.results EPISODES.jsonl [...] --out results/NAME.json
writes the summary (per agent x prompt x family, bootstrap CIs) and prints it as Markdown.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .episodes import read_episodes
from .summary import summarize


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
    parser = argparse.ArgumentParser(prog="python -m pytest_termrl.report.results", description=__doc__.splitlines()[0])
    parser.add_argument("episodes", nargs="+", type=Path, help="episode JSONL files of one or more runs")
    parser.add_argument("--out", type=Path, help="write the JSON summary here")
    args = parser.parse_args(argv)
    records = [r for path in args.episodes for r in read_episodes(path)]
    if not records:
        print(f"no episode records in {', '.join(map(str, args.episodes))}", file=sys.stderr)
        return 1
    summary = summarize(records)
    summary["sources"] = [str(p) for p in args.episodes]
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    print(markdown_table(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
