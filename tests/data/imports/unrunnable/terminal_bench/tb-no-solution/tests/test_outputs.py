from pathlib import Path


def test_done():
    assert Path("/app/done.txt").read_text().strip() == "done"
