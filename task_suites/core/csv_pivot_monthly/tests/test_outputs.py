"""Hidden tests for csv_pivot_monthly."""

from pathlib import Path

OUT = Path("/home/user/out/monthly.csv")
EXPECTED = [
    "month,co2,humidity,temp_a,temp_b",
    "2024-01,761.40,54.72,19.03,20.27",
    "2024-02,661.97,53.20,21.30,18.48",
    "2024-03,,49.00,19.78,21.53",
    "2024-04,630.62,52.75,18.89,22.54",
    "2024-05,831.20,51.02,21.42,22.40",
    "2024-06,,45.75,,",
]


def _lines():
    assert OUT.is_file(), f"{OUT} does not exist"
    return OUT.read_text().splitlines()


def test_header():
    lines = _lines()
    assert lines, "output is empty"
    assert lines[0] == EXPECTED[0]


def test_months_in_order():
    assert [line.split(",")[0] for line in _lines()[1:]] == [line.split(",")[0] for line in EXPECTED[1:]]


def test_empty_cells_for_missing_data():
    rows = {line.split(",")[0]: line.split(",") for line in _lines()[1:]}
    assert rows.get("2024-03", [None, None])[1] == "", "co2 has no reading in 2024-03"
    assert rows.get("2024-06") == ["2024-06", "", "45.75", "", ""]


def test_cell_values():
    got = _lines()[1:]
    for want_line in EXPECTED[1:]:
        month = want_line.split(",")[0]
        match = [line for line in got if line.split(",")[0] == month]
        assert match, f"no row for {month}"
        assert match[0] == want_line, f"row {month}: {match[0]!r} != {want_line!r}"


def test_exact_file():
    assert OUT.read_text() == "\n".join(EXPECTED) + "\n"
