"""Print the summary tables of one or more JSON summaries: python -m pytest_termrl.report FILE...

``python -m pytest_termrl.report html RUN_DIR_OR_EPISODES_JSONL... -o report.html`` writes the HTML report.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .summary import format_table


def main(argv: list[str]) -> int:
    if argv and argv[0] == "html":
        from .html.cli import main as html_main

        return html_main(argv[1:])
    usage = ("usage: python -m pytest_termrl.report SUMMARY.json [SUMMARY.json ...]\n"
             "       python -m pytest_termrl.report html RUN_DIR_OR_EPISODES_JSONL... -o report.html")
    if argv and argv[0] in ("-h", "--help"):
        print(usage)
        return 0
    if not argv:
        print(usage, file=sys.stderr)
        return 2
    rows = []
    for name in argv:
        rows += json.loads(Path(name).read_text())["rows"]
    print("\n".join(format_table({"rows": rows})))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
