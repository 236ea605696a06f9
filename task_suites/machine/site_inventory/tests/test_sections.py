from pathlib import Path

EXPECTED = 'about 11 244511\nblog 15 331239\ndocs 8 112799\nshop 6 85257\n'


def test_sections_from_the_csv():
    assert Path("/var/www/site/out/sections.txt").read_text() == EXPECTED


def test_the_csv_is_kept():
    assert len(Path("/var/www/site/data/pages.csv").read_text().splitlines()) == 41
