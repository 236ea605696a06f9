import urllib.request
from pathlib import Path


def test_status_page_answers():
    with urllib.request.urlopen("http://127.0.0.1:8099/index.html", timeout=5) as reply:
        assert reply.read().decode() == "ok\n"


def test_status_page_is_on_disk():
    assert Path("/srv/status/index.html").read_text() == "ok\n"
