"""Permission fixes: apply the modes a spec asks for (octal or symbolic), and report what changed."""

from __future__ import annotations

import random

from ..common import INPUT_UNCHANGED_TEST, TaskSpec, input_hashes, pick, sha256, test_module

FAMILY = "permfix"
CATEGORY = "permissions"
STYLES = ("octal", "symbolic", "csv", "colon")


def _sym(mode: int) -> str:
    def letters(bits: int) -> str:
        return "".join(ch for ch, b in (("r", 4), ("w", 2), ("x", 1)) if bits & b)
    u, g, o = (mode >> 6) & 7, (mode >> 3) & 7, mode & 7
    parts = []
    if u == g == o:
        parts.append(f"a={letters(u)}")
    elif u == g:
        parts += [f"ug={letters(u)}", f"o={letters(o)}"]
    elif g == o:
        parts += [f"u={letters(u)}", f"go={letters(g)}"]
    else:
        parts += [f"u={letters(u)}", f"g={letters(g)}", f"o={letters(o)}"]
    return ",".join(parts)


def _site(rng: random.Random):
    name = pick(rng, ["site", "webapp", "portal", "shop", "wiki"])
    files = {
        "index.html": ("<h1>home</h1>\n", 0o644),
        "about.html": ("<h1>about</h1>\n", 0o644),
        "bin/deploy.sh": ("#!/bin/sh\necho deploy\n", 0o755),
        "bin/rotate-logs.sh": ("#!/bin/sh\necho rotate\n", 0o750),
        "cgi/status.py": ("print('ok')\n", 0o755),
        "conf/app.conf": ("listen 8080\n", 0o640),
        "secrets/api.key": (f"key-{rng.randint(10**6, 10**7)}\n", 0o600),
        "secrets/db.pass": (f"pw-{rng.randint(10**6, 10**7)}\n", 0o400),
        "static/site.css": ("body{}\n", 0o644),
        "static/app.js": ("console.log(1)\n", 0o644),
        "uploads/README": ("user uploads land here\n", 0o644),
        "data/cache.db": ("not a database\n", 0o660),
    }
    dirs = {"bin": 0o755, "cgi": 0o755, "conf": 0o750, "secrets": 0o700, "static": 0o755, "uploads": 0o1777, "data": 0o770}
    return name, files, dirs


WRONG_FILE = [0o600, 0o644, 0o666, 0o664, 0o755, 0o777, 0o640, 0o700]
WRONG_DIR = [0o700, 0o777, 0o755, 0o711, 0o750, 0o775]


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    style = STYLES[index % len(STYLES)]
    name, files, dirs = _site(rng)
    root = pick(rng, [name, f"srv/{name}", f"www/{name}"])
    entries = {**{p: m for p, (c, m) in files.items()}, **dirs}
    spec_paths = sorted(rng.sample(sorted(entries), rng.randint(7, 10)))
    for must in ("secrets", "secrets/api.key"):
        if must not in spec_paths:
            spec_paths.append(must)
    spec_paths.sort()
    before = {}
    for p, m in entries.items():
        pool = WRONG_DIR if p in dirs else WRONG_FILE
        before[p] = m if (p in spec_paths and rng.random() < 0.25) else rng.choice([x for x in pool if x != m] if p in spec_paths else pool)
    changed = [p for p in spec_paths if before[p] != entries[p]]
    if not changed:
        before[spec_paths[0]] = 0o777 if spec_paths[0] in dirs else 0o666
        changed = [spec_paths[0]]
    spec_dir = pick(rng, ["ops", "admin", "deploy/policy"])
    spec_rel = f"{spec_dir}/{pick(rng, ['permissions.txt', 'modes.spec', 'perms.list'])}" if style != "csv" else \
        f"{spec_dir}/permissions.csv"
    order = list(spec_paths)
    rng.shuffle(order)
    if style == "octal":
        lines = [f"# wanted modes for {root}"] + [f"{entries[p]:04o} {p}" for p in order]
        fmt = "`<octal mode> <path>`"
    elif style == "symbolic":
        for p in order:
            assert entries[p] < 0o1000 or p == "uploads"
        lines = ["# symbolic modes, chmod syntax"] + [f"{p} {_sym(entries[p]) if entries[p] < 0o1000 else '1777'}" for p in order]
        fmt = ("`<path> <mode>`, where the mode is either written in chmod's symbolic syntax using only `=` assignments "
               "(such as `u=rwx,go=rx`; classes not mentioned get no permission bits from it, see below) or as an octal number")
    elif style == "csv":
        lines = ["path,mode"] + [f"{p},{entries[p]:o}" for p in order]
        fmt = "a CSV row `<path>,<octal mode>` (after the header `path,mode`; the mode may have no leading zero)"
    else:
        lines = [f"# {root} permission policy", ""] + [f"{p}: {entries[p]:04o}" for p in order]
        fmt = "`<path>: <octal mode>`"
    spec_text = "\n".join(lines) + "\n"
    with_report = rng.random() < 0.6 or style == "symbolic"
    report_rel = f"{spec_dir}/{pick(rng, ['fixed.txt', 'changes.log', 'perm-report.txt'])}"
    report_text = "".join(f"{p} {before[p]:04o} -> {entries[p]:04o}\n" for p in changed)
    text = (f"The files under `/home/user/{root}` have wrong permissions. `/home/user/{spec_rel}` gives the wanted mode of some "
            f"of them: each entry is {fmt}, with the path relative to `/home/user/{root}` (a file or a directory)."
            + (" " if style != "csv" else "")
            + ("Lines starting with `#` and blank lines are not entries." if style != "csv" else "")
            + (" For symbolic modes, every class (`u`, `g`, `o`) is assigned exactly once (`a` means all three), so each "
               "entry names one absolute mode." if style == "symbolic" else "")
            + "\n\nSet every listed path to exactly that mode, special bits included (the sticky bit of a directory, for "
            "example). Nothing is recursive. Do not change the mode of anything that is not listed (including "
            f"`/home/user/{root}` itself and the spec file), and do not change any file's contents.")
    if with_report:
        text += (f"\n\nThen write `/home/user/{report_rel}`: one line `<path> <old mode> -> <new mode>` for each listed "
                 "path whose mode you actually had to change (leave out those that were already right), with both modes as "
                 "four octal digits (e.g. `0644`), sorted by path in byte order, every line ending with a newline.")
    if style == "symbolic":
        parse = ["def mode_of(m):", "    if m.isdigit():", "        return int(m, 8)", "    bits = 0",
                 "    for part in m.split(','):", "        who, perm = part.split('=')",
                 "        val = sum({'r': 4, 'w': 2, 'x': 1}[c] for c in perm)",
                 "        for w in ('ugo' if who == 'a' else who):", "            bits |= val << {'u': 6, 'g': 3, 'o': 0}[w]",
                 "    return bits", f"for line in open('/home/user/{spec_rel}'):", "    line = line.strip()",
                 "    if not line or line.startswith('#'):", "        continue", "    p, m = line.split()",
                 "    want[p] = mode_of(m)"]
    elif style == "csv":
        parse = ["import csv", f"for r in csv.DictReader(open('/home/user/{spec_rel}')):", "    want[r['path']] = int(r['mode'], 8)"]
    elif style == "octal":
        parse = [f"for line in open('/home/user/{spec_rel}'):", "    if not line.strip() or line.startswith('#'):",
                 "        continue", "    m, p = line.split()", "    want[p] = int(m, 8)"]
    else:
        parse = [f"for line in open('/home/user/{spec_rel}'):", "    if not line.strip() or line.startswith('#'):",
                 "        continue", "    p, m = line.split(': ')", "    want[p] = int(m, 8)"]
    py = ["import os, stat", "want = {}", *parse, "log = []", "for p in sorted(want):",
          f"    full = '/home/user/{root}/' + p", "    old = stat.S_IMODE(os.lstat(full).st_mode)", "    if old != want[p]:",
          "        os.chmod(full, want[p])", "        log.append(f'{p} {old:04o} -> {want[p]:04o}\\n')"]
    if with_report:
        py += [f"open('/home/user/{report_rel}', 'w').write(''.join(log))"]
    solution = "python3 - <<'PY'\n" + "\n".join(py) + "\nPY\n"
    if style == "octal" and not with_report:
        solution = (f"while read -r mode path; do\n  case \"$mode\" in ''|'#'*) continue ;; esac\n"
                    f"  chmod \"$mode\" \"/home/user/{root}/$path\"\ndone < /home/user/{spec_rel}\n")
    env = {f"{root}/{p}": c for p, (c, m) in files.items()}
    env[spec_rel] = spec_text
    # Files first, directories last (deepest first), so no chmod locks the owner out mid-way.
    setup_lines = [f"chmod {before[p]:04o} /home/user/{root}/{p}" for p in sorted(files)]
    setup_lines += [f"chmod {before[p]:04o} /home/user/{root}/{p}" for p in sorted(dirs, reverse=True)]
    setup_lines += [f"chmod 0755 /home/user/{root}", f"chmod 0644 /home/user/{spec_rel}"]
    constants = [("ROOT", f"/home/user/{root}"), ("WANT", {p: f"{entries[p]:04o}" for p in spec_paths}),
                 ("UNLISTED", {p: f"{before[p]:04o}" for p in sorted(entries) if p not in spec_paths}),
                 ("CONTENT_SHA256", {p: sha256(c) for p, (c, m) in sorted(files.items())}),
                 ("DIRS", sorted(dirs)), ("INPUT_SHA256", input_hashes(env, [spec_rel]))]
    body = '''
    def _mode(rel):
        """The permission bits of a path under ROOT, as four octal digits (e.g. '0644')."""
        return "%04o" % stat.S_IMODE((Path(ROOT) / rel).lstat().st_mode)


    def test_listed_files():
        wrong = {p: _mode(p) for p, m in WANT.items() if p not in DIRS and _mode(p) != m}
        assert not wrong, f"wrong modes: {wrong}"


    def test_listed_directories():
        wrong = {p: _mode(p) for p, m in WANT.items() if p in DIRS and _mode(p) != m}
        assert not wrong, f"wrong modes: {wrong}"


    def test_secrets_private():
        assert _mode("secrets/api.key") == WANT["secrets/api.key"]
        assert _mode("secrets") == WANT["secrets"]


    def test_unlisted_modes_untouched():
        changed = {p: _mode(p) for p, m in UNLISTED.items() if _mode(p) != m}
        assert not changed, f"modes of unlisted paths changed: {changed}"
        assert _mode("") == "0755"


    def test_contents_and_types_unchanged():
        for rel, digest in CONTENT_SHA256.items():
            path = Path(ROOT) / rel
            assert path.is_file() and not path.is_symlink(), f"{rel} must stay a regular file"
            assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, f"{rel} was modified"
        for rel in DIRS:
            assert (Path(ROOT) / rel).is_dir() and not (Path(ROOT) / rel).is_symlink()
    '''
    chunks = [body]
    if with_report:
        constants += [("REPORT", f"/home/user/{report_rel}"), ("REPORT_TEXT", report_text)]
        chunks.append('''
        def test_report():
            path = Path(REPORT)
            assert path.is_file(), f"{REPORT} does not exist"
            assert path.read_text() == REPORT_TEXT
        ''')
    tests = test_module(task_id, ["import hashlib", "import stat", "from pathlib import Path"], constants, *chunks,
                        INPUT_UNCHANGED_TEST)
    return TaskSpec(task_id=task_id, title=f"Fix permissions from a {style} spec" + (" and report" if with_report else ""),
                    difficulty="hard" if style == "symbolic" else "easy" if not with_report else "medium",
                    category=CATEGORY, tags=["permissions", "chmod", style, "generated"], inputs=[spec_rel],
                    requires=["bash", "chmod"] if "python3" not in solution else ["bash", "python3"],
                    instruction=text, solution=solution, tests=tests, files=env, setup="\n".join(setup_lines) + "\n")
