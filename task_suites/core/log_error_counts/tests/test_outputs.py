"""Hidden tests for log_error_counts."""

from pathlib import Path

REPORT = Path("/home/user/reports/error_counts.txt")
EXPECTED = [
    "5 billing",
    "5 db",
    "3 auth",
    "2 api",
    "2 cache",
    "1 scheduler",
]


def _lines():
    assert REPORT.is_file(), f"{REPORT} does not exist"
    return REPORT.read_text().splitlines()


def test_report_exists_and_ends_with_newline():
    assert REPORT.is_file(), f"{REPORT} does not exist"
    text = REPORT.read_text()
    assert text, "report is empty"
    assert text.endswith("\n") and not text.endswith("\n\n"), "report must end with exactly one newline"


def test_counts_per_component():
    counts = {}
    for line in _lines():
        count, _, comp = line.partition(" ")
        counts[comp] = int(count)
    expected = {line.split(" ")[1]: int(line.split(" ")[0]) for line in EXPECTED}
    assert counts == expected


def test_message_and_case_traps_not_counted():
    comps = [line.partition(" ")[2] for line in _lines()]
    assert "mailer" not in comps, "a lowercase 'error' level must not count"
    assert sum(int(line.split(" ")[0]) for line in _lines()) == 18


def test_exact_content_and_order():
    assert REPORT.read_text() == "\n".join(EXPECTED) + "\n"

