"""Hidden tests of hb-repo-tag: the tag, and nothing else tagged."""

import subprocess

REPO = "/app/repo"


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True, check=True).stdout.strip()


def test_tag_points_at_the_fix():
    assert git("log", "-1", "--format=%s", "v2.1") == "Fix parser crash on empty input"


def test_only_that_tag():
    assert git("tag", "--list").split() == ["v2.1"]
