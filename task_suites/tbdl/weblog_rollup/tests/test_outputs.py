"""Hidden tests for weblog_rollup: one test per part of the task."""

import gzip
import hashlib
import json
import os
import subprocess
from pathlib import Path

LOG = Path("/home/user/logs/access.log")
LOG_SHA256 = "99a970659489b03e89c8e37d743e9bd0abc58554722e5cd5d3ae7d2051678a01"
SUMMARY = Path("/home/user/reports/summary.json")
MALFORMED = Path("/home/user/reports/malformed.txt")
ARCHIVE = Path("/home/user/archive/access.log.gz")
SCRIPT = Path("/home/user/bin/rollup.sh")

MALFORMED_LINES = [42, 64, 89, 105, 132, 153, 178, 204, 220]
TOTALS = {"requests": 227, "malformed": 9, "bytes": 5030459}
STATUS = {"200": 89, "201": 33, "302": 25, "304": 19, "404": 32, "500": 29}
ENDPOINTS = {
    "/": {"count": 54, "max_ms": 2014, "p95_ms": 1001},
    "/api/cart": {"count": 39, "max_ms": 2030, "p95_ms": 2006},
    "/api/items": {"count": 32, "max_ms": 2030, "p95_ms": 2006},
    "/login": {"count": 28, "max_ms": 1009, "p95_ms": 165},
    "/search": {"count": 40, "max_ms": 2030, "p95_ms": 1003},
    "/static/app.js": {"count": 34, "max_ms": 2014, "p95_ms": 2014},
}
USER_AGENTS = {
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_3) Safari/605.1.15": 45,
    "Mozilla/5.0 (X11; Linux x86_64) Firefox/124.0": 82,
    'Mozilla/5.0 (compatible; "SiteAudit" 2.1; +https://audit.example/bot)': 30,
    'PartnerSync/3.2 (build \\"nightly\\")': 15,
    "Tool\\Win32 v1.0\\": 11,
    "curl/8.6.0": 44,
}
KEYS = ["bytes", "endpoints", "malformed", "requests", "status", "user_agents"]


def _summary():
    assert SUMMARY.is_file(), f"{SUMMARY} does not exist"
    data = json.loads(SUMMARY.read_bytes())
    assert isinstance(data, dict) and sorted(data) == KEYS, f"summary.json must have exactly the keys {KEYS}"
    return data


def test_summary_totals_and_canonical_form():
    data = _summary()
    got = {k: data[k] for k in TOTALS}
    assert got == TOTALS, f"requests/malformed/bytes: {got} != {TOTALS}"
    assert data["status"] == STATUS
    for key in ("requests", "malformed", "bytes"):
        assert type(data[key]) is int, f"{key} must be a JSON integer"
    canonical = json.dumps(data, indent=2, sort_keys=True) + "\n"
    assert SUMMARY.read_text() == canonical, "summary.json must be written with sorted keys, indent 2 and one trailing newline"


def test_endpoints_p95_and_max():
    data = _summary()
    assert sorted(data["endpoints"]) == sorted(ENDPOINTS), "endpoints are targets without their query string"
    for endpoint, want in ENDPOINTS.items():
        got = data["endpoints"][endpoint]
        assert isinstance(got, dict) and sorted(got) == ["count", "max_ms", "p95_ms"], endpoint
        assert all(type(v) is int for v in got.values()), f"{endpoint}: values must be JSON integers"
        assert got == want, f"{endpoint}: {got} != {want}"


def test_user_agents_unescaped():
    data = _summary()
    assert data["user_agents"] == USER_AGENTS


def test_malformed_line_index():
    assert MALFORMED.is_file(), f"{MALFORMED} does not exist"
    assert MALFORMED.read_text() == "".join(f"{n}\n" for n in MALFORMED_LINES)


def test_gzip_copy_reproducible_and_log_untouched():
    assert hashlib.sha256(LOG.read_bytes()).hexdigest() == LOG_SHA256, "the log must not be modified"
    assert ARCHIVE.is_file(), f"{ARCHIVE} does not exist"
    blob = ARCHIVE.read_bytes()
    assert blob[:3] == b"\x1f\x8b\x08", "not a gzip (deflate) file"
    assert not blob[3] & 0x08, "the gzip header must not store a file name"
    assert blob[4:8] == b"\0\0\0\0", "the gzip header must store modification time 0"
    assert gzip.decompress(blob) == LOG.read_bytes(), "the gzip copy must decompress to the log's exact bytes"


def _run_script():
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/home/user", "LC_ALL": "C.UTF-8"}
    done = subprocess.run(["bash", str(SCRIPT)], cwd="/tmp", env=env, capture_output=True, timeout=15)
    assert done.returncode == 0, f"rollup.sh exited {done.returncode}: {done.stderr.decode(errors='replace')[-500:]}"


def test_rollup_script_regenerates_idempotently():
    assert SCRIPT.is_file(), f"{SCRIPT} does not exist"
    outputs = (SUMMARY, MALFORMED, ARCHIVE)
    assert all(p.is_file() for p in outputs), "the script's outputs must exist"
    before = {p: p.read_bytes() for p in outputs}
    for p in outputs:
        p.unlink()
    _run_script()
    for p in outputs:
        assert p.is_file() and p.read_bytes() == before[p], f"rerunning rollup.sh from scratch changed {p}"
    _run_script()
    for p in outputs:
        assert p.read_bytes() == before[p], f"a second run of rollup.sh changed {p}"
    assert hashlib.sha256(LOG.read_bytes()).hexdigest() == LOG_SHA256, "rollup.sh must not modify the log"
