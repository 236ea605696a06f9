from pathlib import Path


def test_root_points_at_v2():
    assert "root /srv/shopfront/v2" in Path("/etc/shopfront.conf").read_text().splitlines()


def test_nothing_else_changed():
    assert Path("/etc/shopfront.conf").read_text() == "listen 80\nroot /srv/shopfront/v2\nindex index.html\n"
