"""Hidden tests for json_active_users."""

import json
from pathlib import Path

EMAILS = Path("/home/user/out/admin_emails.txt")
COUNTS = Path("/home/user/out/role_counts.json")
EXPECTED_EMAILS = [
    "ada.novak@example.com",
    "dana.costa@example.com",
    "jun.costa@example.com",
    "mira.novak@example.com",
]
EXPECTED_COUNTS = {"admin": 4, "billing": 2, "editor": 3, "support": 3, "viewer": 3}


def test_admin_emails_set():
    assert EMAILS.is_file(), f"{EMAILS} does not exist"
    got = EMAILS.read_text().split()
    assert set(got) == set(EXPECTED_EMAILS), "only active (boolean true) admins, lower-cased"


def test_admin_emails_exact_format():
    assert EMAILS.is_file(), f"{EMAILS} does not exist"
    assert EMAILS.read_text() == "\n".join(EXPECTED_EMAILS) + "\n"


def test_role_counts_valid_object():
    assert COUNTS.is_file(), f"{COUNTS} does not exist"
    data = json.loads(COUNTS.read_text())
    assert isinstance(data, dict) and data, "role_counts.json must be a non-empty JSON object"
    for role, count in data.items():
        assert type(count) is int, f"count for {role!r} must be a JSON integer"


def test_role_counts_values():
    assert COUNTS.is_file(), f"{COUNTS} does not exist"
    data = json.loads(COUNTS.read_text())
    assert data == EXPECTED_COUNTS
    assert "auditor" not in data, "roles of inactive users only must be left out"
