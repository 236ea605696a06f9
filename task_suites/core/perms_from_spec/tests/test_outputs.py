"""Hidden tests for perms_from_spec."""

import hashlib
import stat
from pathlib import Path

SITE = Path("/home/user/site")
FILES = {
    "index.html": 0o644,
    "deploy.sh": 0o755,
    "cgi/status.py": 0o750,
    "secrets/api.key": 0o600,
    "static/site.css": 0o644,
    "uploads/README": 0o644,
}
DIRS = {
    "cgi": 0o755,
    "secrets": 0o700,
    "static": 0o755,
    "uploads": 0o1777,
}
CONTENT_SHA256 = {
    "index.html": "aeac6e564f59c419831f5ebf5ab832983d5ba4ecd092f0e822c482062da3d007",
    "deploy.sh": "67e1cadbaa544427cb6535d2c24f645fca240d9207a7d20ff165688ce4828510",
    "cgi/status.py": "ab0e7d27211985342b572e8b70a2a6206c0bd680a1e1c917c13c36de3cdfc2e4",
    "secrets/api.key": "73bf2e8a0ae174b4416ed621e3f9eaef57c2dad2d3008b88b764385160e3b9ed",
    "static/site.css": "0bf4d668930b5ab1d543ab1d43785e7cbe4b5f29d95ed3593ea5e9953f7cca59",
    "uploads/README": "a14da71beaa8066f56f07fecebf01483e24c84316a3c8429cf008bbca5aeac53",
}


def _mode(rel):
    st = (SITE / rel).lstat()
    return stat.S_IMODE(st.st_mode)


def _check(table):
    wrong = {rel: oct(_mode(rel)) for rel, want in table.items() if _mode(rel) != want}
    assert not wrong, f"wrong modes: {wrong}"


def test_executables_and_plain_files():
    _check({k: FILES[k] for k in ("index.html", "deploy.sh", "cgi/status.py", "static/site.css", "uploads/README")})


def test_secret_key_private():
    _check({"secrets/api.key": 0o600, "secrets": 0o700})


def test_directories():
    _check(DIRS)


def test_sticky_uploads():
    assert _mode("uploads") & stat.S_ISVTX, "uploads must have the sticky bit"
    _check({"uploads": 0o1777})


def test_contents_and_types_unchanged():
    _check(FILES)
    for rel, digest in CONTENT_SHA256.items():
        path = SITE / rel
        assert path.is_file() and not path.is_symlink(), f"{rel} must stay a regular file"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, f"{rel} was modified"
    for rel in DIRS:
        assert (SITE / rel).is_dir() and not (SITE / rel).is_symlink()
