from pathlib import Path


def test_export():
    assert Path("/app/orders.csv").read_text().startswith("id,")
