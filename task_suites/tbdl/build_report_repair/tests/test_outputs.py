"""Hidden tests for build_report_repair: each layer of the broken build, then the rules."""

import hashlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

PROJECT = Path("/home/user/metrics")
EXPECTED = ("# sensor report\nboiler-1 612\nboiler-2 598\npump_a 47\npump_b 51\nfan-01 1200\nfan-02 1185\n"
            "valve-7 3\nchiller 401\ncount 8\ntotal 4097\nmean 512.13\n")
UNTOUCHED = {
    "data/readings.csv": "7bb3eeb840acec986012fbdf47040d4f5f327b6072f865c7a9cf0b89a1b14126",
    "tests/expected_report.txt": "99a0d86560fdc161e97f73b359ea221782f8b690026962a21ef2946d3d187e62",
    "tests/run.sh": "67d8b9d355bb51f7d8e1a86358e1322ca1a1f1cb2cf78b06297c1a720acdda2b",
    "README.md": "d2e36d2874c64b9d14d399b8a7471b9b3c423807d324078faf248b8d53cd4e2a",
}
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/home/user", "LC_ALL": "C.UTF-8"}


def build_copy(tmp: Path, data: str | None = None, out_dir: str | None = None):
    """Copy the project (without its out/), optionally swap its data, and run its build from /."""
    copy = tmp / "metrics"
    shutil.copytree(PROJECT, copy, ignore=shutil.ignore_patterns("out"))
    if data is not None:
        (copy / "data" / "readings.csv").write_text(data)
    env = dict(ENV, **({"OUT_DIR": out_dir} if out_dir else {}))
    done = subprocess.run(["bash", str(copy / "build.sh")], cwd="/", env=env, capture_output=True, timeout=15)
    return copy, done


def report_of(tmp: Path, data: str) -> list[str]:
    copy, done = build_copy(tmp, data)
    assert done.returncode == 0, f"build.sh exited {done.returncode}: {done.stderr.decode(errors='replace')[-400:]}"
    return (copy / "out" / "report.txt").read_text().split("\n")


def test_build_runs_clean_and_creates_out_dir():
    with tempfile.TemporaryDirectory() as tmp:
        copy, done = build_copy(Path(tmp))
        assert done.returncode == 0, f"build.sh exited {done.returncode}: {done.stderr.decode(errors='replace')[-400:]}"
        assert (copy / "out" / "report.txt").is_file(), "build.sh must create out/ and write out/report.txt"


def test_report_matches_documentation_and_project_check_passes():
    report = PROJECT / "out" / "report.txt"
    assert report.is_file(), f"{report} does not exist: run the build"
    assert report.read_text() == EXPECTED
    done = subprocess.run(["bash", "tests/run.sh"], cwd=PROJECT, env=ENV, capture_output=True, timeout=15)
    assert done.returncode == 0 and done.stdout.endswith(b"PASS\n"), \
        f"tests/run.sh fails: {(done.stdout + done.stderr).decode(errors='replace')[-400:]}"


def test_last_record_without_newline_is_counted():
    with tempfile.TemporaryDirectory() as tmp:
        lines = report_of(Path(tmp), "sensor,value\nalpha,5\nbeta,7\nomega_9,11")
        assert lines[:6] == ["# sensor report", "alpha 5", "beta 7", "omega_9 11", "count 3", "total 23"], lines


def test_mean_has_two_decimals_rounded_half_up():
    cases = [
        ([1, 0, 0, 0, 0, 0, 0, 0], "0.13"), ([7, 0, 0, 0, 0, 0, 0, 0], "0.88"), ([2, 3], "2.50"),
        ([2, 2, 1], "1.67"), ([0, 0, 1], "0.33"), ([10], "10.00"), ([1, 2, 2, 2, 2, 2, 2, 2], "1.88"),
        ([999, 1000, 1001, 1000], "1000.00"), ([3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "0.15"),
    ]
    for index, (values, mean) in enumerate(cases):
        data = "sensor,value\n" + "".join(f"s{i},{v}\n" for i, v in enumerate(values))
        with tempfile.TemporaryDirectory() as tmp:
            lines = report_of(Path(tmp), data)
        means = [line for line in lines if line.startswith("mean ")]
        assert means == [f"mean {mean}"], f"values {values}: {means}, expected mean {mean}"


def test_out_dir_override_is_created():
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "deep" / "er" / "reports"
        copy, done = build_copy(Path(tmp), out_dir=str(target))
        assert done.returncode == 0, f"build.sh exited {done.returncode}: {done.stderr.decode(errors='replace')[-400:]}"
        assert (target / "report.txt").is_file(), "an absolute OUT_DIR must be created and used"
        assert (target / "report.txt").read_text().startswith("# sensor report\n")
        assert not (copy / "out").exists(), "with OUT_DIR set, nothing goes to out/"


def test_data_tests_readme_untouched_and_strict_mode_kept():
    for rel, digest in UNTOUCHED.items():
        assert hashlib.sha256((PROJECT / rel).read_bytes()).hexdigest() == digest, f"{rel} must not be modified"
    lines = [line.strip() for line in (PROJECT / "build.sh").read_text().splitlines()]
    assert "set -euo pipefail" in lines, "build.sh must keep `set -euo pipefail`"
    weakened = [line for line in lines if re.match(r"set\s+\+[a-z]*[euo]|set\s+\+o\s+(errexit|nounset|pipefail)", line)]
    assert not weakened, f"build.sh must not switch strict mode off: {weakened}"
