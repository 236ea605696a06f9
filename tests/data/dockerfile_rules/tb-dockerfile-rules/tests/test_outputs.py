from pathlib import Path

APP = Path("/app")


def test_the_image_was_planned_as_docker_builds_it():
    assert (APP / "made-by-shell-form").is_dir()
    assert (APP / "exec.txt").read_text() == "exec-form\n"
    assert (APP / "generated" / "greeting.txt").read_text() == "hello world\n"
    assert (APP / "settings.ini").read_text() == "[app]\nhome=/app\ndata=default\n"
    assert (APP / "data-dir.txt").read_text() == "data\n"


def test_total():
    assert (APP / "total.txt").read_text().strip() == "12"
