"""Hidden tests for git_commit_configs."""

import os
import subprocess
from pathlib import Path

REPO = Path("/home/user/repo")
OLD_HEAD = "6c6a6ea5d4950d8702126e9b58e2c64499cf4873"
APP_YAML = "service: inventory\nport: 8081\nlog_level: info\nreplicas: 2\n"
DB_YAML = "host: db.internal\nport: 5432\nname: inventory\n"
MAIN_PY_COMMITTED = 'def main():\n    print("inventory service")\n'
MAIN_PY_WORKTREE = 'def main():\n    print("inventory service")\n    # TODO: read config\n'


def git(*args):
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null",
               LC_ALL="C")
    done = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(REPO), *args], env=env,
                          capture_output=True, text=True, timeout=15)
    assert done.returncode == 0, f"git {' '.join(args)} failed: {done.stderr.strip()}"
    return done.stdout


def test_history_on_main():
    assert git("symbolic-ref", "HEAD").strip() == "refs/heads/main"
    subjects = git("log", "--format=%s", "main").splitlines()
    assert subjects == ["Ignore log files", "Update service configuration", "Improve greeting", "Initial import"]
    assert git("rev-parse", "main~2").strip() == OLD_HEAD, "existing history must not be rewritten"


def test_config_commit():
    commit = git("rev-parse", "main~1").strip()
    assert git("cat-file", "commit", commit).split("\n\n", 1)[1] == "Update service configuration\n"
    changes = sorted(git("diff-tree", "--no-commit-id", "--name-status", "-r", commit).splitlines())
    assert changes == ["A\tconfig/db.yaml", "M\tconfig/app.yaml"]
    assert git("show", f"{commit}:config/app.yaml") == APP_YAML
    assert git("show", f"{commit}:config/db.yaml") == DB_YAML


def test_gitignore_commit_and_tag():
    head = git("rev-parse", "main").strip()
    assert git("cat-file", "commit", head).split("\n\n", 1)[1] == "Ignore log files\n"
    assert git("diff-tree", "--no-commit-id", "--name-status", "-r", head).splitlines() == ["A\t.gitignore"]
    assert git("show", f"{head}:.gitignore") == "*.log\n"
    assert git("cat-file", "-t", "refs/tags/v1.1").strip() == "commit", "v1.1 must be a lightweight tag"
    assert git("rev-parse", "refs/tags/v1.1").strip() == head


def test_identity_of_new_commits():
    lines = git("log", "-2", "--format=%an|%ae|%cn|%ce", "main").splitlines()
    assert lines == ["Dev Bot|devbot@example.com|Dev Bot|devbot@example.com"] * 2


def test_rest_left_alone():
    tracked = sorted(git("ls-tree", "-r", "--name-only", "main").splitlines())
    assert tracked == [".gitignore", "README.md", "config/app.yaml", "config/db.yaml", "src/main.py"]
    assert git("show", "main:src/main.py") == MAIN_PY_COMMITTED
    assert (REPO / "src/main.py").read_text() == MAIN_PY_WORKTREE, "src/main.py must keep its uncommitted change"
    assert git("status", "--porcelain", "--untracked-files=no") == " M src/main.py\n"
    assert (REPO / "notes/scratch.txt").read_text() == "remember to ask about replica count\n"
    assert (REPO / "server.log").read_text() == "DEBUG started\nDEBUG stopped\n"
    git("check-ignore", "-q", "server.log")
