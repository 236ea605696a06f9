from pathlib import Path

EXPECTED = '200 30\n302 3\n304 11\n404 9\n500 7\n'


def test_counts_from_the_log():
    assert Path("/srv/weblogs/reports/status_counts.txt").read_text() == EXPECTED


def test_the_log_is_kept():
    assert len(Path("/srv/weblogs/logs/access.log").read_text().splitlines()) == 60
