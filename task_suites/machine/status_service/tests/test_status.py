import urllib.request


def test_status_page_answers():
    with urllib.request.urlopen("http://127.0.0.1:8099/index.html", timeout=5) as reply:
        assert reply.read().decode().strip() == "ok"
