from pathlib import Path


def test_root_points_at_v2():
    assert "root /srv/shopfront/v2" in Path("/etc/shopfront.conf").read_text().splitlines()


def test_other_lines_kept():
    lines = Path("/etc/shopfront.conf").read_text().splitlines()
    assert lines[0] == "listen 80" and lines[2] == "index index.html"
