"""Hidden tests for cron_validate."""

from pathlib import Path

CRON = Path("/home/user/cron")
OK_LINES = [6, 7, 9, 10, 14, 15, 18, 19, 20, 26]
INVALID_LINES = [8, 11, 12, 13, 16, 17, 21, 22, 23, 24, 27, 28]
SUMMARY = "valid: 10, invalid: 12"
CLEAN_LINES = [
    '# Crontab for the reporting host (migrated from the old server)',
    'SHELL=/bin/bash',
    'MAILTO=ops@example.com',
    '',
    '# m h dom mon dow command',
    '*/15 * * * * /opt/report/bin/poll-queue',
    '0 2 * * * /opt/report/bin/nightly --full',
    '0 0 1 1-12/3 * /opt/report/bin/quarterly',
    '5,35 8-18 * * 1-5 /opt/report/bin/business-hours-sync',
    '0 6 * * 7 /opt/report/bin/sunday-digest',
    '0 6 31 2 * /opt/report/bin/feb-31',
    '  45 23 28-31 * * /opt/report/bin/month-end-check',
    '10 3 * * 0 /opt/report/bin/rotate-logs --keep 7',
    '0 9-17/2 * * 1,3,5 /opt/report/bin/odd-days',
    'PATH=/usr/local/bin:/usr/bin:/bin',
    '0,15,30,45 */6 */2 * * /opt/report/bin/every-other-day',
]


def _report():
    path = CRON / "report.txt"
    assert path.is_file(), f"{path} does not exist"
    return path.read_text().splitlines()


def _statuses():
    statuses = {}
    for line in _report():
        number, _, status = line.partition(" ")
        if number.isdigit():
            statuses[int(number)] = status
    return statuses


def test_entries_identified():
    assert sorted(_statuses()) == sorted(OK_LINES + INVALID_LINES), "comments, blanks and assignments are not entries"


def test_valid_entries():
    statuses = _statuses()
    wrong = [n for n in OK_LINES if statuses.get(n) != "OK"]
    assert not wrong, f"these lines are valid: {wrong}"


def test_invalid_entries():
    statuses = _statuses()
    wrong = [n for n in INVALID_LINES if statuses.get(n) != "INVALID"]
    assert not wrong, f"these lines are invalid: {wrong}"


def test_report_exact():
    want = [f"{n} {'OK' if n in OK_LINES else 'INVALID'}" for n in sorted(OK_LINES + INVALID_LINES)]
    assert (CRON / "report.txt").read_text() == "\n".join(want + [SUMMARY]) + "\n"


def test_clean_crontab_exact():
    path = CRON / "jobs.clean.crontab"
    assert path.is_file(), f"{path} does not exist"
    assert path.read_text() == "\n".join(CLEAN_LINES) + "\n"
