"""Hidden tests for archive_manifest_targz."""

import gzip
import hashlib
import re
import tarfile
from pathlib import Path

ARCHIVE = Path("/home/user/archives/reports-2024.tar.gz")
CHECKSUM = Path("/home/user/archives/reports-2024.tar.gz.sha256")

EXPECTED = {
    "reports/q1-summary.txt": "Q1 2024 summary\nRevenue: 1.21M EUR\nNew customers: 312\nChurn: 2.1%\n",
    "reports/q2-summary.txt": "Q2 2024 summary\nRevenue: 1.34M EUR\nNew customers: 287\nChurn: 1.9%\n",
    "reports/q4-summary.txt": (
        "Q4 2024 summary\nRevenue: 1.52M EUR\nNew customers: 401\nChurn: 1.7%\n"
        "Note: includes December promotion.\n"
    ),
    "reports/notes/methodology.md": (
        "# Methodology\n\nRevenue is recognised at invoice date.\nChurn = cancelled / active at quarter start.\n"
    ),
    "reports/tables/revenue.csv": "quarter,revenue_keur\nQ1,1210\nQ2,1340\nQ3,1290\nQ4,1520\n",
}


def _members():
    assert ARCHIVE.is_file(), f"{ARCHIVE} does not exist"
    with open(ARCHIVE, "rb") as fh:
        assert fh.read(2) == b"\x1f\x8b", "the archive must be gzip-compressed"
    with tarfile.open(ARCHIVE, "r:gz") as tar:
        return [(m.name, m.type, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]


def test_archive_is_gzip_tar():
    assert ARCHIVE.is_file(), f"{ARCHIVE} does not exist"
    with gzip.open(ARCHIVE) as fh:
        fh.read()
    assert _members(), "the archive has no members"


def test_member_names_exact():
    names = [name for name, _type, _data in _members()]
    assert len(names) == len(set(names)), f"duplicate members: {names}"
    assert sorted(names) == sorted(EXPECTED), "members must be exactly the manifest's files, no directories"


def test_members_are_regular_files_with_right_content():
    members = _members()
    assert members, "archive is empty"
    for name, mtype, data in members:
        assert mtype in (tarfile.REGTYPE, tarfile.AREGTYPE), f"{name} is not a regular file member"
        assert name in EXPECTED, f"unexpected member {name}"
        assert data.decode() == EXPECTED[name], f"content of {name} differs"


def test_checksum_file_format():
    assert CHECKSUM.is_file(), f"{CHECKSUM} does not exist"
    text = CHECKSUM.read_text()
    assert re.fullmatch(r"[0-9a-f]{64}  reports-2024\.tar\.gz\n", text), repr(text)


def test_checksum_matches_archive():
    assert CHECKSUM.is_file() and ARCHIVE.is_file()
    digest = hashlib.sha256(ARCHIVE.read_bytes()).hexdigest()
    assert CHECKSUM.read_text().split()[0] == digest
