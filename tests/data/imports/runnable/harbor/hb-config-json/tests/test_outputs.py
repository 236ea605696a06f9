import json
import os
from pathlib import Path


def test_json_exists():
    assert Path("/app/settings.json").is_file()


def test_sections():
    data = json.loads(Path("/app/settings.json").read_text())
    assert data == {"server": {"host": "0.0.0.0", "port": "8080"}, "database": {"name": "inventory", "user": "app"}}


def test_grading_env():
    assert os.environ.get("APP_ENV") == "grading"
