"""Backups: copy the selected files into a dated snapshot with a checksum manifest."""

from __future__ import annotations

import random

from ..common import INPUT_UNCHANGED_TEST, PROJECT_WORDS, TaskSpec, digest, input_hashes, pick, test_module

FAMILY = "snapshot"
CATEGORY = "backup"
LIST_STYLES = ("plain", "csv", "plain", "csv")
MANIFESTS = ("gnu", "csv", "tsv", "gnu")


def _tree(rng: random.Random) -> dict[str, tuple[str, int]]:
    proj = pick(rng, PROJECT_WORDS)
    t = {
        f"documents/{pick(rng, ['cv', 'letter', 'plan'])}.md": (f"# {pick(rng, ['Plan', 'Letter', 'CV'])}\n\nDraft {rng.randint(1, 9)}.\n", 0o644),
        f"documents/taxes/{2020 + rng.randint(0, 4)}.csv": (f"item,amount\nrent,{rng.randint(500, 2000)}\n", 0o600),
        f"projects/{proj}/main.py": ("print('hi')\n", 0o644),
        f"projects/{proj}/run.sh": ("#!/bin/sh\npython3 main.py\n", 0o755),
        f"projects/{proj}/notes.log": ("scratch output\n" * rng.randint(1, 3), 0o644),
        ".config/app/settings.json": (f'{{"theme": "{pick(rng, ["dark", "light"])}"}}\n', 0o644),
        ".local/bin/backup-helper": ("#!/bin/sh\necho helper\n", 0o750),
        f"photos/{rng.randint(2019, 2024)}/img_{rng.randint(100, 999)}.txt": ("pretend image bytes\n", 0o644),
        "music/playlist.m3u": ("track1.mp3\ntrack2.mp3\n", 0o644),
        "keys/deploy.pem": (f"-----BEGIN FAKE KEY-----\n{rng.randint(10**8, 10**9)}\n-----END FAKE KEY-----\n", 0o600),
    }
    return t


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    list_style = LIST_STYLES[index % 4]
    manifest = MANIFESTS[(index // 2 + index) % 4]
    algo = pick(rng, ["sha256", "md5", "sha1"])
    tree = _tree(rng)
    paths = sorted(tree)
    chosen = sorted(rng.sample(paths, rng.randint(5, 7)))
    date = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    dest = pick(rng, [f"backups/{date}", f"backup/snap-{date}", f"snapshots/{date.replace('-', '')}"])
    # The selection lives in a folder of its own (not the home itself), like a real backup configuration.
    list_rel = pick(rng, ["etc/backup.list", "etc/backup-files.txt", ".backup/include.txt", "admin/nightly.list"]) \
        if list_style == "plain" else pick(rng, ["etc/backup-plan.csv", "admin/backup.csv", ".backup/plan.csv"])
    if list_style == "plain":
        order = list(chosen)
        rng.shuffle(order)
        lines = ["# nightly backup selection", ""] + order[:3] + ["", "# keep keys"] + order[3:]
        list_text = "\n".join(lines) + "\n"
        list_desc = (f"`/home/user/{list_rel}` selects the files to back up: one path per line, relative to `/home/user`. "
                     "Blank lines and lines starting with `#` are ignored.")
        read_py = [f"sel = [l.strip() for l in open('/home/user/{list_rel}') if l.strip() and not l.startswith('#')]"]
    else:
        rows = ["path,include"]
        for p in paths:
            rows.append(f"{p},{'yes' if p in chosen else pick(rng, ['no', 'no', 'NO', ''])}")
        list_text = "\n".join(rows) + "\n"
        list_desc = (f"`/home/user/{list_rel}` is a CSV backup plan with the header `path,include`; paths are relative to "
                     "`/home/user`. Back up exactly the rows whose `include` is `yes` (any other value, including an empty "
                     "one, means no).")
        read_py = ["import csv", f"sel = [r['path'] for r in csv.DictReader(open('/home/user/{list_rel}')) if r['include'] == 'yes']"]

    H = {p: digest(algo, tree[p][0]) for p in chosen}
    if manifest == "gnu":
        man_name = f"{algo.upper()}SUMS"
        man_text = "".join(f"{H[p]}  {p}\n" for p in chosen)
        man_desc = (f"in `{algo}sum` format: the lower-case hex {algo.upper()} digest, two spaces and the relative path, "
                    "one line per file")
        man_py = "text = ''.join(f'{h}  {p}\\n' for p, h, n in rows)"
    elif manifest == "csv":
        man_name = "manifest.csv"
        man_text = f"path,bytes,{algo}\n" + "".join(f"{p},{len(tree[p][0].encode())},{H[p]}\n" for p in chosen)
        man_desc = (f"as CSV with the header `path,bytes,{algo}`: the relative path, the size in bytes and the lower-case "
                    f"hex {algo.upper()} digest, one row per file")
        man_py = f"text = 'path,bytes,{algo}\\n' + ''.join(f'{{p}},{{n}},{{h}}\\n' for p, h, n in rows)"
    else:
        man_name = "manifest.tsv"
        man_text = "".join(f"{p}\t{H[p]}\n" for p in chosen)
        man_desc = f"as tab-separated lines `<relative path><TAB><lower-case hex {algo.upper()} digest>`, no header"
        man_py = "text = ''.join(f'{p}\\t{h}\\n' for p, h, n in rows)"
    man_rel = f"{dest}/{man_name}"
    text = (list_desc + "\n\n" + f"Make the backup snapshot `/home/user/{dest}/`:\n\n"
            f"1. Copy every selected file to `/home/user/{dest}/<path>`, keeping its relative path (so `{chosen[0]}` goes to "
            f"`/home/user/{dest}/{chosen[0]}`), with identical contents and the same permission bits as the original.\n"
            f"2. Write `/home/user/{man_rel}` {man_desc}, sorted by path in plain byte order (as `LC_ALL=C sort` does), "
            "every line ending with a newline.\n\n"
            f"The snapshot must contain only these copies and `{man_name}` (plus the directories they need). Leave the "
            "originals and the selection file untouched.")
    py = ["import hashlib, os, shutil", *read_py, f"dest = '/home/user/{dest}'", "rows = []", "for p in sorted(sel):",
          "    src, dst = '/home/user/' + p, os.path.join(dest, p)", "    os.makedirs(os.path.dirname(dst), exist_ok=True)",
          "    shutil.copy2(src, dst)", "    data = open(src, 'rb').read()",
          f"    rows.append((p, hashlib.{algo}(data).hexdigest(), len(data)))", man_py,
          f"open('/home/user/{man_rel}', 'w').write(text)"]
    solution = f"mkdir -p /home/user/{dest}\npython3 - <<'PY'\n" + "\n".join(py) + "\nPY\n"
    if list_style == "plain" and manifest == "gnu" and rng.random() < 0.7:
        solution = (f"mkdir -p /home/user/{dest}\n(\n  cd /home/user || return\n"
                    f"  grep -v -e '^#' -e '^[[:space:]]*$' {list_rel} | LC_ALL=C sort | while IFS= read -r p; do\n"
                    f"    cp --parents -p -- \"$p\" {dest}/\n  done\n"
                    f"  cd {dest} && grep -v -e '^#' -e '^[[:space:]]*$' /home/user/{list_rel} | LC_ALL=C sort "
                    f"| xargs -d '\\n' {algo}sum -- > {man_name}\n)\n")
    files = {p: c for p, (c, _m) in tree.items()}
    files[list_rel] = list_text
    setup = "\n".join(f"chmod {m:04o} /home/user/{p}" for p, (c, m) in sorted(tree.items())) + "\n"
    constants = [("DEST", f"/home/user/{dest}"), ("COPIES", {p: [digest("sha256", tree[p][0]), tree[p][1]] for p in chosen}),
                 ("MANIFEST", f"/home/user/{man_rel}"), ("MANIFEST_TEXT", man_text),
                 ("INPUT_SHA256", input_hashes(files, [list_rel]))]
    body = '''
    def test_copies_have_identical_content():
        for rel, (sha, _mode) in COPIES.items():
            path = Path(DEST) / rel
            assert path.is_file() and not path.is_symlink(), f"missing copy {path}"
            assert hashlib.sha256(path.read_bytes()).hexdigest() == sha, f"{rel} differs from the original"


    def test_copies_keep_permission_bits():
        for rel, (_sha, mode) in COPIES.items():
            path = Path(DEST) / rel
            assert path.is_file(), f"missing copy {path}"
            got = stat.S_IMODE(path.stat().st_mode)
            assert got == mode, f"{rel}: mode {oct(got)}, expected {oct(mode)}"


    def test_snapshot_holds_only_the_selection():
        found = sorted(str(p.relative_to(DEST)) for p in Path(DEST).rglob("*") if not p.is_dir())
        want = sorted(list(COPIES) + [str(Path(MANIFEST).relative_to(DEST))])
        assert found == want


    def test_manifest_exact():
        path = Path(MANIFEST)
        assert path.is_file(), f"{MANIFEST} does not exist"
        assert path.read_text() == MANIFEST_TEXT
    '''
    tests = test_module(task_id, ["import hashlib", "import stat", "from pathlib import Path"], constants, body,
                        INPUT_UNCHANGED_TEST)
    return TaskSpec(task_id=task_id, title="Back up selected files with a checksum manifest", difficulty="medium",
                    category=CATEGORY, tags=["backup", "cp", algo, list_style, "generated"], inputs=[list_rel],
                    requires=["bash", "python3"] if "python3" in solution else ["bash", "cp", f"{algo}sum"],
                    instruction=text, solution=solution, tests=tests, files=files, setup=setup)
