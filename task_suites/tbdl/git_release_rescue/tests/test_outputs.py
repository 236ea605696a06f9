"""Hidden tests for git_release_rescue: one test per part of the release."""

import hashlib
import os
import subprocess
from pathlib import Path

REPO = Path("/home/user/project")
ORIGINAL_MAIN = [
    "7f6c23fbc9fdc3edbe703a48428c87fa65b47a39",  # README: mention the gateway
    "32b975d3f20b475d3074c48a6d760a18a89855c6",  # core: allow resetting a client
    "dd8a65572569c7c89a4a4e6b3b8b37e0b749a847",  # Drop bucket module (moved to gateway)
    "85c174483a99cb541b23bebc86a5c5ee26ae9f99",  # bucket: refill by elapsed time
    "2106428659a125d9fbd283b9f5b77a5b83973731",  # bucket: token bucket with burst
    "d0cdd735b28919cf399fb73576effb3507e1b9a0",  # Initial import
]
LEGACY = "55dbf488862e03fcfba3def2e1dbe81d936829f4"
HOTFIX = "db762bca425b9e321e79bb482b880689428e7b11"
BUCKET_SHA256 = "fa57a3bf657b4b4ca2ea4cb2e908fb84caaa8ef8c9375deb13f515f4e88fc528"
GITIGNORE = "build/\ndist/\n__pycache__/\n*.pyc\n.coverage\n"
BOT = "Release Bot|release-bot@example.com"
ARTEFACTS = {
    ".coverage": "0f311ece9e2cfbb25bbd132c7fcee01f873a0abbe3e153e34ae54e0804bdb553",
    "build/lib/ratelim/__init__.py": "4ee9f177f5b5bf8a44bfde1d99a713e5fc38791b291f0d6b2ae8820ca5b1eda3",
    "build/lib/ratelim/core.py": "6530528a8d1fbbe078ef58ae46e5b970f274f4ea82d420618789f180cd55fed7",
    "dist/ratelim-1.4.0.tar.gz": "32b55298ba0316aa4b10c8213d7a913b1c168c64161be3f8608246b920a2417a",
    "src/ratelim/__pycache__/core.cpython-311.pyc": "c5843a5c1a93fe1ce2fccc4974d8a14dcc24d5cbe4d21fc687663ec92171d7fa",
}
CHECKLIST = ("notes/release-checklist.md", "babf77b50474004d334a727fe3d55db759d4c4bc37de1f66dc1c3ede80c054d2")


def git(*args, ok=True):
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", LC_ALL="C")
    done = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(REPO), *args], env=env,
                          capture_output=True, text=True, timeout=15)
    if ok:
        assert done.returncode == 0, f"git {' '.join(args)} failed: {done.stderr.strip()}"
    return done.stdout if ok else done


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def message(rev: str) -> str:
    return git("cat-file", "commit", rev).split("\n\n", 1)[1]


def test_history_not_rewritten():
    assert git("symbolic-ref", "HEAD").strip() == "refs/heads/main", "main must stay checked out"
    assert git("rev-list", "main~2").split() == ORIGINAL_MAIN, "main must be the original history plus two new commits"
    assert git("rev-parse", "refs/heads/legacy").strip() == LEGACY, "the legacy branch must not move"


def test_bucket_restored_from_last_main_revision():
    blob = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(REPO), "show", "main:src/ratelim/bucket.py"],
                          capture_output=True, timeout=15, env=dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null"))
    assert blob.returncode == 0, "src/ratelim/bucket.py is not in main's tree"
    assert sha256(blob.stdout) == BUCKET_SHA256, "bucket.py is not the version main had before it was deleted"
    assert sha256((REPO / "src/ratelim/bucket.py").read_bytes()) == BUCKET_SHA256, "the working-tree copy differs"


def test_restore_commit():
    commit = git("rev-parse", "main~1").strip()
    assert message(commit) == "Restore bucket module\n"
    assert git("rev-parse", f"{commit}^@").split() == [ORIGINAL_MAIN[0]], "the restore commit must sit on the old main"
    assert git("diff-tree", "--no-commit-id", "--name-status", "-r", commit).splitlines() == ["A\tsrc/ratelim/bucket.py"]
    assert git("log", "-1", "--format=%an|%ae%n%cn|%ce", commit).splitlines() == [BOT, BOT]


def test_gitignore_commit_keeps_artefacts_on_disk():
    commit = git("rev-parse", "main").strip()
    assert message(commit) == "Ignore build artefacts\n"
    assert git("diff-tree", "--no-commit-id", "--name-status", "-r", commit).splitlines() == ["A\t.gitignore"]
    assert git("log", "-1", "--format=%an|%ae%n%cn|%ce", commit).splitlines() == [BOT, BOT]
    assert git("show", f"{commit}:.gitignore") == GITIGNORE
    for rel, digest in ARTEFACTS.items():
        path = REPO / rel
        assert path.is_file() and sha256(path.read_bytes()) == digest, f"artefact {rel} must stay on disk unchanged"
        assert git("check-ignore", "-q", rel, ok=False).returncode == 0, f"{rel} must be ignored"
    rel, digest = CHECKLIST
    assert sha256((REPO / rel).read_bytes()) == digest, f"{rel} must stay as it is"
    assert git("status", "--porcelain", "--untracked-files=all") == f"?? {rel}\n", \
        "the working tree must be clean apart from the untracked checklist"


def test_annotated_release_tag():
    assert git("cat-file", "-t", "refs/tags/v2.0.0").strip() == "tag", "v2.0.0 must be an annotated tag"
    head, body = git("cat-file", "tag", "refs/tags/v2.0.0").split("\n\n", 1)
    fields = dict(line.split(" ", 1) for line in head.splitlines())
    assert fields["object"] == git("rev-parse", "main").strip(), "v2.0.0 must point at the .gitignore commit"
    assert fields["type"] == "commit" and fields["tag"] == "v2.0.0"
    assert fields["tagger"].startswith("Release Bot <release-bot@example.com> ")
    assert body == "ratelim 2.0.0\n"


def test_lost_hotfix_kept_on_branch():
    assert git("rev-parse", "refs/heads/hotfix/clamp-refill", ok=False).stdout.strip() == HOTFIX, \
        "hotfix/clamp-refill must point at the lost 'Clamp negative refill rate' commit itself"
    assert message(HOTFIX) == "Clamp negative refill rate\n"
    assert git("merge-base", "--is-ancestor", HOTFIX, "main", ok=False).returncode == 1, "the hotfix must not be merged"
