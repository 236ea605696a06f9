"""Git housekeeping: selective commits and tags, untracking artifacts, release changelogs, pruning branches.

The setup builds the repository with fixed identities and dates, so its commit ids are
known in advance; they are computed here (git's object format) and written into the tests.
"""

from __future__ import annotations

import hashlib
import random
from datetime import datetime, timedelta, timezone

from ..common import FIRST_NAMES, INPUT_UNCHANGED_TEST, LAST_NAMES, PROJECT_WORDS, TaskSpec, pick, test_module

FAMILY = "gitchores"
CATEGORY = "git"
VARIANTS = ("commit_tag", "untrack", "changelog", "prune")


def _obj(kind: str, data: bytes) -> tuple[str, bytes]:
    raw = f"{kind} {len(data)}\0".encode() + data
    return hashlib.sha1(raw).hexdigest(), raw


def tree_id(files: dict[str, str]) -> str:
    """The id git gives the tree of these (path -> text) regular, non-executable files."""
    def build(entries: dict[str, str], prefix: str) -> str:
        here: dict[str, tuple[str, str]] = {}
        subdirs: dict[str, dict[str, str]] = {}
        for path, text in entries.items():
            head, sep, rest = path.partition("/")
            if sep:
                subdirs.setdefault(head, {})[rest] = text
            else:
                here[head] = ("100644", _obj("blob", text.encode())[0])
        for name, sub in subdirs.items():
            here[name] = ("40000", build(sub, prefix + name + "/"))
        data = b""
        for name in sorted(here, key=lambda n: n + "/" if here[n][0] == "40000" else n):
            mode, sha = here[name]
            data += f"{mode} {name}".encode() + b"\0" + bytes.fromhex(sha)
        return _obj("tree", data)[0]
    return build(files, "")


def commit_id(tree: str, parents: list[str], who: tuple[str, str], when: datetime, message: str) -> str:
    stamp = f"{int(when.timestamp())} +0000"
    text = f"tree {tree}\n" + "".join(f"parent {p}\n" for p in parents)
    text += f"author {who[0]} <{who[1]}> {stamp}\ncommitter {who[0]} <{who[1]}> {stamp}\n\n{message}\n"
    return _obj("commit", text.encode())[0]


def _person(rng: random.Random) -> tuple[str, str]:
    f, l = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    return f"{f.title()} {l.title()}", f"{f}.{l}@example.com"


def _q(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


class RepoScript:
    """Builds a setup script commit by commit, and the ids git will give the commits."""

    def __init__(self, root: str, author: tuple[str, str], start: datetime):
        self.root = root
        self.author = author
        self.when = start
        self.files: dict[str, str] = {}
        self.head: str | None = None
        self.ids: list[str] = []
        self.lines = [
            "# Build a small repository with a fixed history (identities and dates), then leave work in it.",
            f"R=/home/user/{root}",
            "export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null",
            f"g() {{ git -C \"$R\" -c user.name={_q(author[0])} -c user.email={_q(author[1])} -c init.defaultBranch=main "
            "-c commit.gpgsign=false -c tag.gpgsign=false \"$@\"; }",
            "mkdir -p \"$R\"",
            "g init -q",
        ]

    def write(self, path: str, text: str) -> None:
        if "/" in path:
            self.lines.append(f"mkdir -p \"$R/{path.rsplit('/', 1)[0]}\"")
        self.lines.append(f"printf '%s' {_q(text)} > \"$R/{path}\"")

    def commit(self, message: str, changes: dict[str, str | None], hours: int = 26) -> str:
        self.when += timedelta(hours=hours)
        for path, text in changes.items():
            if text is None:
                self.lines.append(f"rm -f \"$R/{path}\"")
                self.files.pop(path, None)
            else:
                self.write(path, text)
                self.files[path] = text
        date = self.when.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        self.lines.append(f"export GIT_AUTHOR_DATE={date} GIT_COMMITTER_DATE={date}")
        self.lines.append("g add -A")
        self.lines.append(f"g commit -q -m {_q(message)}")
        self.head = commit_id(tree_id(self.files), [self.head] if self.head else [], self.author, self.when, message)
        self.ids.append(self.head)
        return self.head

    def run(self, line: str) -> None:
        self.lines.append(line)

    def script(self) -> str:
        return "\n".join(self.lines) + "\n"


GIT_HELPER = '''
def git(*args):
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", LC_ALL="C")
    done = subprocess.run(["git", "-c", "safe.directory=*", "-C", REPO, *args], env=env, capture_output=True, text=True,
                          timeout=15)
    assert done.returncode == 0, f"git {' '.join(args)} failed: {done.stderr.strip()}"
    return done.stdout
'''


def _base_files(rng: random.Random, proj: str) -> dict[str, str]:
    return {
        "README.md": f"# {proj}\n\n{pick(rng, ['Inventory service.', 'Billing worker.', 'Metrics exporter.'])}\n",
        "src/main.py": f'def main():\n    print("{proj}")\n',
        "config/app.yaml": f"service: {proj}\nport: {rng.choice([8080, 8000, 9000])}\nlog_level: debug\n",
    }


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    variant = VARIANTS[index % len(VARIANTS)]
    proj = pick(rng, PROJECT_WORDS)
    repo = pick(rng, [proj, f"src/{proj}", f"work/{proj}", "repo"])
    lead = _person(rng)
    bot = pick(rng, [("Release Bot", "release-bot@example.com"), ("Dev Bot", "devbot@example.com"),
                     ("CI Runner", "ci@example.org"), ("Ops Automation", "ops-automation@example.net")])
    start = datetime(2024, rng.randint(1, 10), rng.randint(1, 20), 9, 0, tzinfo=timezone.utc)
    rs = RepoScript(repo, lead, start)
    files = _base_files(rng, proj)
    sol_date = (start + timedelta(days=40)).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    sol_env = (f"export GIT_AUTHOR_NAME={_q(bot[0])} GIT_AUTHOR_EMAIL={bot[1]} GIT_COMMITTER_NAME={_q(bot[0])} "
               f"GIT_COMMITTER_EMAIL={bot[1]} GIT_AUTHOR_DATE={sol_date} GIT_COMMITTER_DATE={sol_date}")
    constants: list = [("REPO", f"/home/user/{repo}"), ("BOT", f"{bot[0]}|{bot[1]}")]
    identity = (f"Use the name `{bot[0]}` and the email `{bot[1]}` as both author and committer of every new commit "
                "(you may pass them on the command line or in the environment; do not change any global configuration).")
    inputs: list[str]
    if variant == "commit_tag":
        version_old = f"1.{rng.randint(0, 9)}.{rng.randint(0, 9)}"
        files["VERSION"] = version_old + "\n"
        rs.commit("Initial import", dict(files))
        rs.commit(pick(rng, ["Improve greeting", "Tidy main", "Print service name"]),
                  {"src/main.py": f'def main():\n    print("{proj} service")\n'})
        old_head = rs.head
        app_new = files["config/app.yaml"].replace("log_level: debug", "log_level: info") + f"replicas: {rng.randint(2, 5)}\n"
        extra_name = pick(rng, ["db.yaml", "cache.yaml", "queue.yaml"])
        extra = f"host: {extra_name[:-5]}.internal\nport: {rng.choice([5432, 6379, 5672])}\n"
        main_wt = f'def main():\n    print("{proj} service")\n    # TODO: read config\n'
        scratch = pick(rng, ["ask about replica count\n", "remember the staging deploy\n"])
        for path, text in (("config/app.yaml", app_new), (f"config/{extra_name}", extra), ("src/main.py", main_wt),
                           ("notes/scratch.txt", scratch), ("server.log", "DEBUG started\n")):
            rs.write(path, text)
        version_new = version_old.rsplit(".", 1)[0] + "." + str(int(version_old.rsplit(".", 1)[1]) + 1)
        msg = pick(rng, ["Update service configuration", "Configure replicas and " + extra_name[:-5], "Prepare config for rollout"])
        annotated = rng.random() < 0.5
        tag = f"v{version_new}"
        tag_msg = f"Release {version_new}"
        text = (f"`/home/user/{repo}` is a git repository on branch `main` with uncommitted work. {identity}\n\n"
                f"1. Make one commit with the message `{msg}` that contains exactly: the modified "
                f"`/home/user/{repo}/config/app.yaml`, the new file `/home/user/{repo}/config/{extra_name}`, and `VERSION` "
                f"changed to contain the single line `{version_new}` (it now says `{version_old}`). Nothing else goes into "
                "the commit.\n"
                + (f"2. Create an annotated tag `{tag}` on that commit with the message `{tag_msg}`.\n" if annotated else
                   f"2. Create a lightweight tag `{tag}` on that commit.\n")
                + "\nDo not rewrite or amend existing history. Leave everything else as it is: the change to `src/main.py` "
                "stays uncommitted, `notes/scratch.txt` and `server.log` stay untracked, and `main` stays checked out.")
        tag_cmd = f"git tag -a {tag} -m {_q(tag_msg)}" if annotated else f"git tag {tag}"
        solution = (f"(\n  cd /home/user/{repo} || return\n  {sol_env}\n  printf '{version_new}\\n' > VERSION\n"
                    f"  git add -- config/app.yaml config/{extra_name} VERSION\n"
                    f"  git commit -q -m {_q(msg)} -- config/app.yaml config/{extra_name} VERSION\n  {tag_cmd}\n)\n")
        inputs = [f"{repo}/config/{extra_name}"]
        constants += [("OLD_HEAD", old_head), ("MESSAGE", msg), ("TAG", tag), ("ANNOTATED", annotated), ("TAG_MESSAGE", tag_msg),
                      ("COMMITTED", {"config/app.yaml": app_new, f"config/{extra_name}": extra, "VERSION": version_new + "\n"}),
                      ("CHANGES", sorted(["M\tconfig/app.yaml", f"A\tconfig/{extra_name}", "M\tVERSION"])),
                      ("MAIN_COMMITTED", f'def main():\n    print("{proj} service")\n'), ("MAIN_WORKTREE", main_wt),
                      ("UNTRACKED", {"notes/scratch.txt": scratch, "server.log": "DEBUG started\n"})]
        body = '''
        def test_history():
            assert git("symbolic-ref", "HEAD").strip() == "refs/heads/main"
            assert git("rev-parse", "main~1").strip() == OLD_HEAD, "existing history must stay as it was"
            assert git("cat-file", "commit", "main").split("\\n\\n", 1)[1] == MESSAGE + "\\n"


        def test_commit_content():
            changes = sorted(git("diff-tree", "--no-commit-id", "--name-status", "-r", "main").splitlines())
            assert changes == CHANGES
            for path, text in COMMITTED.items():
                assert git("show", f"main:{path}") == text, f"{path} in the commit"
                assert (Path(REPO) / path).read_text() == text, f"{path} in the working tree"


        def test_tag():
            kind = git("cat-file", "-t", f"refs/tags/{TAG}").strip()
            assert kind == ("tag" if ANNOTATED else "commit")
            assert git("rev-parse", f"{TAG}^{{commit}}").strip() == git("rev-parse", "main").strip()
            if ANNOTATED:
                assert git("cat-file", "tag", TAG).split("\\n\\n", 1)[1].strip() == TAG_MESSAGE


        def test_identity():
            assert git("log", "-1", "--format=%an|%ae", "main").strip() == BOT
            assert git("log", "-1", "--format=%cn|%ce", "main").strip() == BOT


        def test_rest_left_alone():
            assert git("show", "main:src/main.py") == MAIN_COMMITTED
            assert (Path(REPO) / "src/main.py").read_text() == MAIN_WORKTREE
            assert git("status", "--porcelain", "--untracked-files=no") == " M src/main.py\\n"
            for path, text in UNTRACKED.items():
                assert (Path(REPO) / path).read_text() == text
            untracked = git("ls-files", "--others", "--exclude-standard").split()
            assert [p for p in UNTRACKED if p not in untracked] == [], "these files must stay untracked"
        '''
        title = "Commit config changes, bump VERSION and tag"
        difficulty = "medium"
    elif variant == "untrack":
        version = f"{rng.randint(0, 3)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"
        files["VERSION"] = version + "\n"
        rs.commit("Initial import", dict(files))
        junk = {"build/app.bin": "ELF-ish bytes\n", f"logs/{pick(rng, ['debug', 'app', 'run'])}.log": "DEBUG x\n",
                ".env": f"TOKEN=dev-{rng.randint(1000, 9999)}\n", "src/__pycache__/main.cpython-311.pyc": "pyc\n"}
        drop = dict(rng.sample(sorted(junk.items()), 3))
        rs.commit(pick(rng, ["Add build output", "WIP", "Save local state"]), dict(drop))
        rs.commit(pick(rng, ["Fix port", "Lower log level"]), {"config/app.yaml": files["config/app.yaml"].replace("debug", "info")})
        old_head = rs.head
        patterns = []
        for p in sorted(drop):
            patterns.append({"build/app.bin": "build/", ".env": ".env", "src/__pycache__/main.cpython-311.pyc": "__pycache__/"}
                            .get(p, "*.log"))
        msg = pick(rng, ["Stop tracking generated files", "Untrack build artifacts and secrets", "Clean up tracked junk"])
        gitignore = "".join(p + "\n" for p in patterns)
        text = (f"In the git repository `/home/user/{repo}` (branch `main`), some generated or private files were committed "
                f"by mistake: {', '.join('`' + p + '`' for p in sorted(drop))}. {identity}\n\n"
                f"1. Stop tracking these files, but keep them in the working tree unchanged.\n"
                f"2. Create `.gitignore` at the root of the repository with exactly these lines, in this order: "
                f"{', '.join('`' + p + '`' for p in patterns)}.\n"
                f"3. Commit both changes as one commit with the message `{msg}`.\n"
                f"4. Create a lightweight tag named `v` followed by the version in `/home/user/{repo}/VERSION` (its only line) on "
                "that commit.\n\nDo not rewrite existing history; nothing else changes.")
        rm_paths = " ".join(sorted(drop))
        solution = (f"(\n  cd /home/user/{repo} || return\n  {sol_env}\n  git rm -q --cached -- {rm_paths}\n"
                    f"  printf '{gitignore.replace(chr(10), chr(92) + 'n')}' > .gitignore\n  git add .gitignore\n"
                    f"  git commit -q -m {_q(msg)}\n  git tag \"v$(cat VERSION)\"\n)\n")
        inputs = [f"{repo}/VERSION"]
        tracked = sorted(set(rs.files) - set(drop)) + [".gitignore"]
        constants += [("OLD_HEAD", old_head), ("MESSAGE", msg), ("TAG", f"v{version}"), ("GITIGNORE", gitignore),
                      ("TRACKED", sorted(tracked)), ("KEPT", drop)]
        body = '''
        def test_history():
            assert git("symbolic-ref", "HEAD").strip() == "refs/heads/main"
            assert git("rev-parse", "main~1").strip() == OLD_HEAD, "existing history must stay as it was"
            assert git("cat-file", "commit", "main").split("\\n\\n", 1)[1] == MESSAGE + "\\n"


        def test_tracked_files():
            assert sorted(git("ls-tree", "-r", "--name-only", "main").split("\\n")[:-1]) == TRACKED
            assert git("ls-files").split("\\n")[:-1] == TRACKED


        def test_files_kept_and_ignored():
            for path, text in KEPT.items():
                assert (Path(REPO) / path).read_text() == text, f"{path} must stay in the working tree"
                git("check-ignore", "-q", path)


        def test_gitignore():
            assert (Path(REPO) / ".gitignore").read_text() == GITIGNORE
            assert git("show", "main:.gitignore") == GITIGNORE


        def test_tag_and_identity():
            assert git("cat-file", "-t", f"refs/tags/{TAG}").strip() == "commit", "a lightweight tag"
            assert git("rev-parse", TAG).strip() == git("rev-parse", "main").strip()
            assert git("log", "-1", "--format=%an|%ae|%cn|%ce", "main").strip() == BOT + "|" + BOT
            assert git("status", "--porcelain", "--untracked-files=no") == ""
        '''
        title = "Untrack committed artifacts, ignore them and tag"
        difficulty = "medium"
    elif variant == "changelog":
        prev = f"{rng.randint(1, 3)}.{rng.randint(0, 9)}.0"
        major, minor, _ = prev.split(".")
        version = f"{major}.{int(minor) + 1}.0"
        files["VERSION"] = prev + "\n"
        rs.commit("Initial import", dict(files))
        rs.run(f"g tag v{prev}")
        subjects = rng.sample(["feat: add health endpoint", "fix: handle empty config", "chore: bump dependencies",
                               "feat: support JSON logs", "fix: close db connections", "docs: explain setup",
                               "feat: add --dry-run flag", "fix: retry on timeout", "chore: reformat code"], 5)
        for i, s in enumerate(subjects):
            rs.commit(s, {f"notes/{i}.txt": f"{s}\n"})
        rs.commit(f"Bump version to {version}", {"VERSION": version + "\n"})
        old_head = rs.head
        subjects.append(f"Bump version to {version}")
        feats = [s.split(": ", 1)[1] for s in subjects if s.startswith("feat: ")]
        fixes = [s.split(": ", 1)[1] for s in subjects if s.startswith("fix: ")]
        lines = [f"# {version}", "", "## Features", ""] + [f"- {s}" for s in feats] + ["", "## Fixes", ""] + [f"- {s}" for s in fixes]
        changelog = "\n".join(lines) + "\n"
        tag_msg = f"Release {version}"
        text = (f"Prepare the release of the git repository `/home/user/{repo}` (branch `main`). The version to release is the "
                f"single line of `/home/user/{repo}/VERSION`; the previous release is the tag `v{prev}`. {identity}\n\n"
                "1. Write `CHANGELOG.md` at the root of the repository from the subjects of the commits after "
                f"`v{prev}` up to `main`, oldest first, in exactly this form:\n\n"
                "```\n# <version>\n\n## Features\n\n- <subject without the `feat: ` prefix>\n...\n\n## Fixes\n\n"
                "- <subject without the `fix: ` prefix>\n...\n```\n\n"
                "   Only subjects starting with `feat: ` or `fix: ` are listed. The file ends with a single newline.\n"
                f"2. Commit it (and nothing else) with the message `{tag_msg}`.\n"
                f"3. Create an annotated tag `v<version>` on that commit with the message `{tag_msg}`.\n\n"
                "Do not rewrite existing history.")
        solution = (f"(\n  cd /home/user/{repo} || return\n  {sol_env}\n  v=$(cat VERSION)\n"
                    f"  {{\n    printf '# %s\\n\\n## Features\\n\\n' \"$v\"\n"
                    f"    git log --reverse --format=%s v{prev}..main | sed -n 's/^feat: /- /p'\n"
                    f"    printf '\\n## Fixes\\n\\n'\n"
                    f"    git log --reverse --format=%s v{prev}..main | sed -n 's/^fix: /- /p'\n"
                    f"  }} > CHANGELOG.md\n  git add CHANGELOG.md\n  git commit -q -m \"Release $v\"\n"
                    f"  git tag -a \"v$v\" -m \"Release $v\"\n)\n")
        inputs = [f"{repo}/VERSION"]
        constants += [("OLD_HEAD", old_head), ("TAG", f"v{version}"), ("MESSAGE", tag_msg), ("CHANGELOG", changelog)]
        body = '''
        def test_changelog_in_working_tree():
            path = Path(REPO) / "CHANGELOG.md"
            assert path.is_file(), "CHANGELOG.md is missing"
            assert path.read_text() == CHANGELOG


        def test_release_commit():
            assert git("symbolic-ref", "HEAD").strip() == "refs/heads/main"
            assert git("rev-parse", "main~1").strip() == OLD_HEAD, "existing history must stay as it was"
            assert git("cat-file", "commit", "main").split("\\n\\n", 1)[1] == MESSAGE + "\\n"
            assert git("diff-tree", "--no-commit-id", "--name-status", "-r", "main") == "A\\tCHANGELOG.md\\n"
            assert git("show", "main:CHANGELOG.md") == CHANGELOG


        def test_annotated_tag():
            assert git("cat-file", "-t", f"refs/tags/{TAG}").strip() == "tag", "the tag must be annotated"
            assert git("rev-parse", f"{TAG}^{{commit}}").strip() == git("rev-parse", "main").strip()
            assert git("cat-file", "tag", TAG).split("\\n\\n", 1)[1].strip() == MESSAGE


        def test_identity_and_clean_tree():
            assert git("log", "-1", "--format=%an|%ae|%cn|%ce", "main").strip() == BOT + "|" + BOT
            assert git("status", "--porcelain", "--untracked-files=no") == ""
        '''
        title = "Write a release changelog from git history and tag it"
        difficulty = "hard"
    else:
        rs.commit("Initial import", dict(files))
        names = rng.sample(["feature/login", "feature/export", "fix/typo", "old/prototype", "experiment/cache",
                            "feature/search", "fix/timeout", "spike/grpc"], 6)
        merged = set(names[:3])
        for i, b in enumerate(names):
            if b in merged:
                rs.run(f"g branch {b}")
            rs.commit(pick(rng, ["Update docs", "Refactor", "Tune config", "Add test"]) + f" {i}", {f"docs/{i}.md": f"note {i}\n"})
        main_head = rs.head
        for b in names:
            if b not in merged:
                rs.run(f"g checkout -q -b {b}")
                rs.when += timedelta(hours=3)
                date = rs.when.strftime("%Y-%m-%dT%H:%M:%S+00:00")
                rs.run(f"printf 'wip\\n' > \"$R/{b.replace('/', '_')}.txt\"")
                rs.run(f"export GIT_AUTHOR_DATE={date} GIT_COMMITTER_DATE={date}")
                rs.run("g add -A")
                rs.run(f"g commit -q -m 'WIP {b}'")
                rs.run("g checkout -q main")
        listed = rng.sample(names, 4) + [pick(rng, ["feature/ghost", "fix/old-bug"])]
        rng.shuffle(listed)
        list_rel = f"{pick(rng, ['maintenance', 'ops', 'todo'])}/{pick(rng, ['branches-to-delete.txt', 'prune.txt'])}"
        report_rel = list_rel.rsplit("/", 1)[0] + "/prune-report.txt"
        files_extra = {list_rel: "".join(b + "\n" for b in listed)}
        report = []
        for b in listed:
            report.append(f"deleted {b}" if b in merged else f"kept {b}" if b in names else f"missing {b}")
        remaining = sorted(["main"] + [b for b in names if not (b in merged and b in listed)])
        text = (f"The git repository `/home/user/{repo}` has accumulated branches. `/home/user/{list_rel}` lists, one per line, "
                "branches someone asked to delete.\n\nFor each listed branch, in list order: if it exists and is fully merged "
                "into `main` (its tip is an ancestor of `main`), delete it; if it exists but is not merged, keep it; if it "
                f"does not exist, do nothing. Write `/home/user/{report_rel}` with one line per listed branch, in list order: "
                "`deleted <branch>`, `kept <branch>` or `missing <branch>`, each ending with a newline.\n\n"
                "Do not delete any other branch, do not change `main` or any commit, and keep `main` checked out.")
        solution = (f"(\n  cd /home/user/{repo} || return\n  : > /home/user/{report_rel}\n"
                    f"  while IFS= read -r b; do\n    [ -z \"$b\" ] && continue\n"
                    f"    if ! git rev-parse -q --verify \"refs/heads/$b\" >/dev/null; then echo \"missing $b\"\n"
                    f"    elif git merge-base --is-ancestor \"refs/heads/$b\" main; then git branch -q -D \"$b\" && echo \"deleted $b\"\n"
                    f"    else echo \"kept $b\"; fi >> /home/user/{report_rel}\n  done < /home/user/{list_rel}\n)\n")
        inputs = [list_rel]
        files.update(files_extra)
        constants += [("MAIN", main_head), ("BRANCHES", remaining), ("REPORT", f"/home/user/{report_rel}"),
                      ("REPORT_TEXT", "".join(r + "\n" for r in report))]
        body = '''
        def test_main_unchanged_and_checked_out():
            assert git("symbolic-ref", "HEAD").strip() == "refs/heads/main"
            assert git("rev-parse", "main").strip() == MAIN


        def test_remaining_branches():
            got = sorted(git("for-each-ref", "--format=%(refname:short)", "refs/heads").split())
            assert got == BRANCHES


        def test_unmerged_branches_kept():
            for b in BRANCHES:
                if b != "main":
                    git("rev-parse", "--verify", f"refs/heads/{b}")


        def test_report():
            path = Path(REPORT)
            assert path.is_file(), f"{REPORT} does not exist"
            assert path.read_text() == REPORT_TEXT
        '''
        title = "Prune merged branches from a list"
        difficulty = "medium"
    setup = rs.script()
    if variant == "prune":
        # The branch list lives outside the repository, in environment/.
        env = {inputs[0]: files[inputs[0]]}
    else:
        env = {}
    digests = {f"/home/user/{inputs[0]}": hashlib.sha256(
        (env[inputs[0]] if env else rs.files.get(inputs[0].removeprefix(repo + "/"), "")).encode()).hexdigest()}
    if variant == "commit_tag":
        digests = {f"/home/user/{inputs[0]}": hashlib.sha256(
            [v for k, v in constants if k == "COMMITTED"][0][inputs[0].removeprefix(repo + "/")].encode()).hexdigest()}
    constants.append(("INPUT_SHA256", digests))
    tests = test_module(task_id, ["import hashlib", "import os", "import subprocess", "from pathlib import Path"], constants,
                        GIT_HELPER, body, INPUT_UNCHANGED_TEST)
    return TaskSpec(task_id=task_id, title=title, difficulty=difficulty, category=CATEGORY,
                    tags=["git", variant.replace("_", "-"), "generated"], inputs=inputs, requires=["bash", "git"],
                    instruction=text, solution=solution, tests=tests, files=env, setup=setup)
