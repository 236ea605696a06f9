"""--termrl-html: the controller writes the report at the end of a run, after checking the path before the first episode."""

from __future__ import annotations

import re

from pytest_termrl.report.html.embed import unpacked


def test_a_run_writes_its_html_report_on_the_controller(tp):
    suite = tp.suite(("checksum_verify", "log_error_counts"))
    out = tp.path / "html" / "report.html"
    result = tp.run(str(suite), "-n", "2", "--termrl-agent=reference", "--termrl-families=clean,perm_denied", f"--termrl-html={out}")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines([f"HTML report: {out}"])
    page = out.read_text()
    chunks = re.findall(r'id="termrl-chunk-\d+">([^<]*)</script>', page)
    records = [r for chunk in chunks for r in unpacked(chunk)]
    assert sorted(r["episode_id"] for r in records) == [
        "checksum_verify-clean-p0_default-0", "checksum_verify-perm_denied-p0_default-0",
        "log_error_counts-clean-p0_default-0", "log_error_counts-perm_denied-p0_default-0"]
    assert all(r["transcript"] for r in records)
    assert page.count("<tr><td>reference</td>") == 2  # the summary table: one row per family


def test_an_unusable_html_path_is_refused_before_the_first_episode(tp):
    suite = tp.suite(("checksum_verify",))
    (tp.path / "taken").mkdir()
    result = tp.run(str(suite), f"--termrl-html={tp.path / 'taken'}")
    assert result.ret == 4
    result.stderr.fnmatch_lines([f"*cannot write the HTML report (--termrl-html) {tp.path / 'taken'}: it is a directory*"])
    assert not tp.episodes.exists()
