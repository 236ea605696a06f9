"""The measured tables of the README and the docs/ pages come from results/: every page is in sync, and a drift is caught."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import REPO, load_tool

readme = load_tool("readme")


PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def test_the_pages_are_the_readme_and_every_docs_page():
    assert readme.pages_of([REPO / "README.md"]) == PAGES


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_the_tables_of_every_page_are_the_results_files(page):
    new, changed = readme.render(page.read_text(), REPO / "results")
    assert changed == [], f"{page.relative_to(REPO)}: {', '.join(changed)} differ; run: python tools/readme.py README.md"


def test_the_readme_tables_are_the_results_files():
    assert readme.main([str(REPO / "README.md"), "--check"]) == 0, "run: python tools/readme.py README.md"


def test_every_table_has_a_page():
    shown = {m.group("name") for page in PAGES for m in readme.BLOCK.finditer(page.read_text())}
    assert shown == set(readme.RENDERERS)


def test_a_table_that_drifted_in_a_docs_page_is_caught_and_rewritten(tmp_path, capsys):
    shutil.copytree(REPO / "results", tmp_path / "results")
    (tmp_path / "docs").mkdir()
    readme_page, doc = tmp_path / "README.md", tmp_path / "docs" / "page.md"
    readme_page.write_text("# x\n")
    doc.write_text("# page\n\n<!-- results:demo -->\n```\nhand-edited figures\n```\n<!-- /results:demo -->\nafter\n")
    assert readme.main([str(readme_page), "--check"]) == 1
    assert f"{doc}: the demo table differs" in capsys.readouterr().out
    assert readme.main([str(readme_page)]) == 0
    text = doc.read_text()
    assert "hand-edited" not in text and text.endswith("<!-- /results:demo -->\nafter\n")
    assert readme_page.read_text() == "# x\n"
    table = json.loads((tmp_path / "results" / "demo_table.json").read_text())
    assert all(f" {arm:<9} {row['episodes']:>4} " in text for arm, rows in table["arms"].items() for row in rows.values())
    assert all(f"paired difference (trained - base), {family}: {pair['diff']:+.2f}" in text for family, pair in table["paired"].items())
    assert readme.main([str(readme_page), "--check"]) == 0


def test_a_table_that_drifted_is_caught_and_rewritten(tmp_path, capsys):
    shutil.copytree(REPO / "results", tmp_path / "results")
    page = tmp_path / "README.md"
    page.write_text("# x\n\n<!-- results:demo -->\n```\nhand-edited figures\n```\n<!-- /results:demo -->\nafter\n")
    assert readme.main([str(page), "--check"]) == 1
    assert "the demo table differs" in capsys.readouterr().out
    assert readme.main([str(page)]) == 0
    text = page.read_text()
    assert "hand-edited" not in text and text.endswith("<!-- /results:demo -->\nafter\n")
    table = json.loads((tmp_path / "results" / "demo_table.json").read_text())
    assert all(f" {arm:<9} {row['episodes']:>4} " in text for arm, rows in table["arms"].items() for row in rows.values())
    assert all(f"paired difference (trained - base), {family}: {pair['diff']:+.2f}" in text for family, pair in table["paired"].items())
    assert readme.main([str(page), "--check"]) == 0


def test_a_missing_file_or_an_unknown_table_is_named(tmp_path):
    (tmp_path / "results").mkdir()
    with pytest.raises(readme.ResultsError, match=r"results/audit_core\.json: missing \(make results writes it\)"):
        readme.render("<!-- results:audit -->\n<!-- /results:audit -->\n", tmp_path / "results")
    with pytest.raises(readme.ResultsError, match="no renderer for <!-- results:speed -->; known: admission, audit, demo, grpo_demo, html_report, performance, train_demo$"):
        readme.render("<!-- results:speed -->\n<!-- /results:speed -->\n", tmp_path / "results")


def test_the_performance_table_names_the_benchmark_file_it_lacks(tmp_path):
    shutil.copytree(REPO / "results", tmp_path / "results")
    (tmp_path / "results" / "bench_docker.json").unlink(missing_ok=True)
    block = "<!-- results:performance -->\n<!-- /results:performance -->\n"
    with pytest.raises(readme.ResultsError, match=r"results/bench_docker\.json: missing \(make results writes it\)"):
        readme.render(block, tmp_path / "results")
