"""Hidden tests of tb-csv-total (Terminal-Bench style: absolute /app paths)."""

import hashlib
from pathlib import Path

TOTAL = Path("/app/reports/total.txt")
SALES = Path("/app/sales.csv")
SALES_SHA256 = "491107cffb60d01e70d4661a2dc59f3b641c8f9248b2e88c5aa9d98976e199ef"


def test_total_file_exists():
    assert TOTAL.is_file(), f"{TOTAL} does not exist"


def test_total_value():
    assert TOTAL.read_text() == "1234.50\n"


def test_sales_untouched():
    assert SALES.is_file(), "sales.csv was removed"
    assert hashlib.sha256(SALES.read_bytes()).hexdigest() == SALES_SHA256
