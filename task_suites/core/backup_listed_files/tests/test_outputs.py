"""Hidden tests for backup_listed_files."""

import hashlib
import stat
from pathlib import Path

SNAP = Path("/home/user/backups/snapshot")
# relative path -> (sha256, mode), in LC_ALL=C order
EXPECTED = {
    ".profile_extra": ("d7999a8eef2ec74e7353e285e05ccbb4d7a509305b7e752eb8a7556b8e6af2f2", 0o644),
    "docs/budget.csv": ("be40b321af72449382e7703dd61587ee4a86c5ef55836f3bee0d008586d74b79", 0o600),
    "docs/report.md": ("5de0ef300912d3e91e653e5d97e4ebf57712f281642695791db4ea606cedd42e", 0o644),
    "projects/alpha/README.md": ("8fff2ca326922790160844824423cc6dbe7fecd6fa4d5fac3dd53f835598ad10", 0o644),
    "projects/alpha/lib/util.py": ("09677841d25272ae0ebc88e1a137d8ca0fbad90b76ef56dc472bb7cbb4d8d4ed", 0o644),
    "projects/alpha/main.py": ("1901f83c34382cee6a8eb7c79f6a21fe3f072f45247f5f1311535b8b1fe84637", 0o755),
}


def test_copies_have_identical_content():
    for rel, (digest, _mode) in EXPECTED.items():
        path = SNAP / rel
        assert path.is_file() and not path.is_symlink(), f"missing copy {path}"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, f"{rel} differs from the original"


def test_copies_keep_modes():
    for rel, (_digest, mode) in EXPECTED.items():
        path = SNAP / rel
        assert path.is_file(), f"missing copy {path}"
        assert stat.S_IMODE(path.stat().st_mode) == mode, f"{rel}: mode {oct(stat.S_IMODE(path.stat().st_mode))}"


def test_snapshot_has_nothing_else():
    assert SNAP.is_dir(), f"{SNAP} does not exist"
    files = sorted(str(p.relative_to(SNAP)) for p in SNAP.rglob("*") if not p.is_dir())
    assert files == sorted(list(EXPECTED) + ["SHA256SUMS"])


def test_sha256sums_exact():
    sums = SNAP / "SHA256SUMS"
    assert sums.is_file(), f"{sums} does not exist"
    want = "".join(f"{digest}  {rel}\n" for rel, (digest, _mode) in EXPECTED.items())
    assert sums.read_text() == want
