"""Print the summary tables of one or more JSON summaries: python -m pytest_termrl.report FILE..."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .summary import format_table


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m pytest_termrl.report SUMMARY.json [SUMMARY.json ...]", file=sys.stderr)
        return 2
    rows = []
    for name in argv:
        rows += json.loads(Path(name).read_text())["rows"]
    print("\n".join(format_table({"rows": rows})))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
