from pathlib import Path


def test_greeting_is_written():
    assert Path("/app/greeting.txt").read_text().strip() == "hello, world"
