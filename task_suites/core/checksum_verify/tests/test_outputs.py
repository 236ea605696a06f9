"""Hidden tests for checksum_verify."""

from pathlib import Path

REPORT = Path("/home/user/downloads/verify.txt")
ENTRIES = [
    "toolkit-2.4.1.txt: OK",
    "plugin-0.9.0.json: FAILED",
    "dataset-v3.csv: OK",
    "docs-2.4.1.tar.gz: MISSING",
    "install.sh: FAILED",
    "LICENSE.txt: OK",
]
SUMMARY = "total: 6, ok: 3, failed: 2, missing: 1"


def _lines():
    assert REPORT.is_file(), f"{REPORT} does not exist"
    return REPORT.read_text().splitlines()


def test_statuses():
    got = dict(line.split(": ", 1) for line in _lines() if ": " in line and not line.startswith("total:"))
    assert got == dict(e.split(": ", 1) for e in ENTRIES)


def test_order_of_entries():
    assert _lines()[: len(ENTRIES)] == ENTRIES


def test_summary_line():
    lines = _lines()
    assert lines and lines[-1] == SUMMARY


def test_exact_file():
    assert REPORT.read_text() == "\n".join(ENTRIES + [SUMMARY]) + "\n"
