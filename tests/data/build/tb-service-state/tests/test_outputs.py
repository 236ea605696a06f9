from pathlib import Path


def test_port_changed():
    assert Path("/etc/shopd/shopd.conf").read_text() == "listen=9090\nworkers=2\n"


def test_changelog_line():
    assert Path("/srv/shop/CHANGELOG").read_text().splitlines()[-1] == "port changed to 9090"


def test_state_kept_as_root():
    state = Path("/var/lib/shopd/state.db")
    assert state.read_text() == "orders=41\n" and (state.stat().st_mode & 0o777) == 0o600
