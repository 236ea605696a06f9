from pathlib import Path


def test_port_changed():
    lines = Path("/etc/ledger/ledger.conf").read_text().splitlines()
    assert lines == ["name = ledger", "port = 8081", "workers = 2"]


def test_changelog_appended():
    assert Path("/srv/ledger/CHANGELOG").read_text() == "2026-11-30 installed\nport 8080 -> 8081\n"
