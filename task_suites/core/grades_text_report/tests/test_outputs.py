"""Hidden tests for grades_text_report."""

from pathlib import Path

REPORT = Path("/home/user/reports/grades.txt")
STUDENT_LINES = [
    "emma: 69.33 (3 scores)",
    "liam: 70.20 (5 scores)",
    "lucas: 84.33 (3 scores)",
    "mateo: 64.67 (3 scores)",
    "noah: 71.60 (5 scores)",
    "olivia: 50.67 (3 scores)",
    "sofia: 63.80 (5 scores)",
]
SUMMARY_LINES = [
    "students: 7",
    "scores: 27",
    "class average: 67.96",
    "best student: lucas",
    "below 60: olivia",
]
EXPECTED = ["GRADE REPORT", "============", *STUDENT_LINES, "============", *SUMMARY_LINES]


def _lines():
    assert REPORT.is_file(), f"{REPORT} does not exist"
    return REPORT.read_text().splitlines()


def test_student_lines():
    lines = _lines()
    assert [line for line in lines if "scores)" in line] == STUDENT_LINES


def test_absent_rows_ignored():
    text = "\n".join(_lines())
    assert "zoe" not in text, "a student with only ABS rows must not appear"
    assert "sofia: 63.80 (5 scores)" in text


def test_summary_lines():
    lines = _lines()
    assert lines[-len(SUMMARY_LINES):] == SUMMARY_LINES


def test_exact_layout():
    assert REPORT.read_text() == "\n".join(EXPECTED) + "\n"
