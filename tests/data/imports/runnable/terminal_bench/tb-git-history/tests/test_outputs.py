"""Hidden tests of tb-git-history: only the output file is checked."""

from pathlib import Path

HISTORY = Path("/app/history.txt")


def test_history_written():
    assert HISTORY.is_file()


def test_history_newest_first():
    assert HISTORY.read_text().splitlines() == [f"Release 0.{i}" for i in (5, 4, 3, 2, 1)]
