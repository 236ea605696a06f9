"""Find/rename/move batches: apply a move plan, sort by extension, file by date, slugify names."""

from __future__ import annotations

import random
import re
from datetime import date

from ..common import INPUT_UNCHANGED_TEST, PROJECT_WORDS, TaskSpec, input_hashes, pick, sha256, test_module

FAMILY = "filemove"
CATEGORY = "files"
VARIANTS = ("plan", "by_extension", "by_date", "slugify")
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _content(name: str, rng: random.Random) -> str:
    return f"placeholder for {name} #{rng.randint(1000, 9999)}\n"


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    variant = VARIANTS[index % len(VARIANTS)]
    files: dict[str, str] = {}
    moves: list[tuple[str, str]] = []   # home-relative (old, new)
    stay: list[str] = []
    log_extra = ""
    if variant == "plan":
        src_dir = pick(rng, ["inbox", "downloads", "incoming"])
        names = [f"{w}_{rng.randint(1, 99)}.{pick(rng, ['txt', 'pdf', 'dat'])}" for w in rng.sample(PROJECT_WORDS, 9)]
        for n in names:
            files[f"{src_dir}/{n}"] = _content(n, rng)
        plan_rel = f"{pick(rng, ['moves', 'ops', 'plans'])}/{pick(rng, ['plan.tsv', 'moves.tsv', 'relocate.tsv'])}"
        dests = ["archive/2023", "archive/2024", "projects/active", "projects/old", "shared/docs"]
        rows = []
        for n in names[:6]:
            new = f"{rng.choice(dests)}/{n if rng.random() < 0.6 else n.replace('_', '-')}"
            rows.append((f"{src_dir}/{n}", new))
            moves.append((f"{src_dir}/{n}", new))
        ghost = f"{src_dir}/{pick(rng, ['lost', 'gone', 'missing'])}_{rng.randint(1, 9)}.pdf"
        pos = rng.randrange(1, len(rows))
        rows.insert(pos, (ghost, f"archive/2024/{ghost.rsplit('/', 1)[1]}"))
        stay = [f"{src_dir}/{n}" for n in names[6:]]
        files[plan_rel] = "# old path<TAB>new path, relative to /home/user\n" + "".join(f"{a}\t{b}\n" for a, b in rows)
        log_rel = f"{plan_rel.rsplit('/', 1)[0]}/skipped.txt"
        log_text = f"{ghost}\n"
        inputs = [plan_rel]
        text = (f"`/home/user/{plan_rel}` is a move plan: after a comment line, each line holds an old path and a new path "
                "separated by a tab, both relative to `/home/user`.\n\n"
                "Carry it out: move each existing old path to its new path (creating directories as needed), keeping file "
                "contents unchanged. Some old paths do not exist; skip those and list them, in plan order, one per line, in "
                f"`/home/user/{log_rel}`. Files not named in the plan stay where they are.\n\n"
                "Do not modify the plan.")
        py = ["import os", "skipped = []", f"for line in open('/home/user/{plan_rel}'):",
              "    if line.startswith('#') or not line.strip():", "        continue",
              "    old, new = line.rstrip('\\n').split('\\t')", "    old, new = '/home/user/' + old, '/home/user/' + new",
              "    if not os.path.exists(old):", "        skipped.append(line.split('\\t')[0] + '\\n')", "        continue",
              "    os.makedirs(os.path.dirname(new), exist_ok=True)", "    os.rename(old, new)",
              f"open('/home/user/{log_rel}', 'w').write(''.join(skipped))"]
        title = "Carry out a move plan"
    elif variant == "by_extension":
        src_dir = pick(rng, ["inbox", "Downloads", "dropbox"])
        out = pick(rng, ["sorted", "organized", "library"])
        groups = {"images": ["jpg", "png", "gif"], "documents": ["pdf", "docx", "odt"], "audio": ["mp3", "flac"]}
        rules_rel = f"{pick(rng, ['config', 'etc', '.config/sorter'])}/{pick(rng, ['sort-rules.txt', 'extensions.map'])}"
        rules_lines = ["# extension -> folder under the output directory"]
        emap = {}
        for folder, exts in groups.items():
            for e in exts:
                emap[e] = folder
                rules_lines.append(f"{e} {folder}")
        files[rules_rel] = "\n".join(rules_lines) + "\n"
        stems = rng.sample(["holiday", "scan", "invoice", "song", "cover", "minutes", "draft", "poster", "memo", "intro",
                            "mix", "sketch", "receipt", "track"], 11)
        exts = list(emap) + ["zip", "iso", "exe"]
        for st in stems:
            e = rng.choice(exts)
            if rng.random() < 0.2 and e in emap:
                e = e.upper()
            n = f"{st}-{rng.randint(1, 40)}.{e}"
            rel = f"{src_dir}/{n}"
            files[rel] = _content(n, rng)
            if e.lower() in emap:
                new = f"{out}/{emap[e.lower()]}/{n}"
                moves.append((rel, new))
            else:
                stay.append(rel)
        moves.sort()
        log_rel = f"{out}/moved.txt"
        log_text = "".join(f"{a} -> {b}\n" for a, b in moves)
        inputs = [rules_rel]
        text = (f"`/home/user/{rules_rel}` maps file extensions to folders: each non-comment line is "
                "`<extension> <folder>`. Sort the files directly inside `/home/user/" + src_dir + "` (not in subfolders): "
                f"move each file whose extension (the part after the last `.`, compared case-insensitively, so `.JPG` counts as "
                f"`jpg`) appears in the map into `/home/user/{out}/<folder>/`, keeping its file name. Files with other "
                "extensions stay where they are.\n\n"
                f"Then write `/home/user/{log_rel}` with one line `<old path> -> <new path>` per moved file, both relative to "
                "`/home/user`, sorted by old path in byte order, each line ending with a newline.\n\n"
                "Do not modify the map.")
        py = ["import os", "emap = {}", f"for line in open('/home/user/{rules_rel}'):", "    if line.strip() and not line.startswith('#'):",
              "        e, f = line.split()", "        emap[e] = f", "log = []",
              f"for n in sorted(os.listdir('/home/user/{src_dir}')):", f"    old = '{src_dir}/' + n",
              "    if not os.path.isfile('/home/user/' + old) or '.' not in n:", "        continue",
              "    f = emap.get(n.rsplit('.', 1)[1].lower())", "    if f is None:", "        continue",
              f"    new = '{out}/' + f + '/' + n", "    os.makedirs(os.path.dirname('/home/user/' + new), exist_ok=True)",
              "    os.rename('/home/user/' + old, '/home/user/' + new)", "    log.append(f'{old} -> {new}\\n')",
              f"open('/home/user/{log_rel}', 'w').write(''.join(sorted(log)))"]
        title = "Sort files into folders by extension"
    elif variant == "by_date":
        src_dir = pick(rng, ["scans", "receipts", "statements"])
        out = pick(rng, ["archive", "filed", "records"])
        style = pick(rng, ["iso", "dmy", "mon"])
        idx_rel = f"{src_dir}/index.csv"
        index_lines = ["file,date"]
        for i in range(rng.randint(7, 10)):
            d = date(rng.randint(2022, 2024), rng.randint(1, 12), rng.randint(1, 28))
            n = f"{src_dir[:-1]}_{rng.randint(1000, 9999)}_{i}.pdf"
            files[f"{src_dir}/{n}"] = _content(n, rng)
            shown = {"iso": d.isoformat(), "dmy": f"{d.day:02d}/{d.month:02d}/{d.year}", "mon": f"{MONTHS[d.month - 1]} {d.day} {d.year}"}[style]
            if i < 7:
                index_lines.append(f"{n},{shown}" if style != "mon" else f'{n},"{shown}"')
                moves.append((f"{src_dir}/{n}", f"{out}/{d.year}/{d.month:02d}/{n}"))
            else:
                stay.append(f"{src_dir}/{n}")
        files[idx_rel] = "\n".join(index_lines) + "\n"
        datefmt = {"iso": "`YYYY-MM-DD`", "dmy": "`DD/MM/YYYY` (day first)", "mon": "`Mon D YYYY` (e.g. `\"Mar 7 2023\"`, quoted in the CSV)"}[style]
        log_rel = f"{out}/filed.log"
        log_text = "".join(f"{a.rsplit('/', 1)[1]} {b}\n" for a, b in moves)
        inputs = [idx_rel]
        text = (f"`/home/user/{idx_rel}` lists some of the PDF files in `/home/user/{src_dir}` with the date of each, "
                f"header `file,date`, dates written as {datefmt}.\n\n"
                f"Move every listed file to `/home/user/{out}/<YYYY>/<MM>/<file>` (four-digit year, two-digit month), "
                "creating directories as needed. Files that are not listed stay where they are. Then write "
                f"`/home/user/{log_rel}` with one line `<file> <new path relative to /home/user>` per moved file, in index "
                "order, each ending with a newline.\n\nDo not modify the index.")
        parse = {"iso": "y, m = d[:4], d[5:7]", "dmy": "y, m = d[6:10], d[3:5]",
                 "mon": "mon, _day, y = d.split(); m = '%02d' % (months.index(mon) + 1)"}[style]
        py = ["import csv, os", f"months = {MONTHS!r}", "log = []",
              f"for r in csv.DictReader(open('/home/user/{idx_rel}', newline='')):", "    d = r['date']", f"    {parse}",
              f"    new = '{out}/' + y + '/' + m + '/' + r['file']", "    os.makedirs(os.path.dirname('/home/user/' + new), exist_ok=True)",
              f"    os.rename('/home/user/{src_dir}/' + r['file'], '/home/user/' + new)", "    log.append(r['file'] + ' ' + new + '\\n')",
              f"open('/home/user/{log_rel}', 'w').write(''.join(log))"]
        title = "File scanned documents by date"
    else:
        src_dir = pick(rng, ["uploads", "shared/incoming", "media/raw", "inbox/to-clean", "work/attachments"])
        sep = pick(rng, ["_", "-"])
        batch_rel = f"{src_dir}/{pick(rng, ['batch.txt', 'rename-these.txt'])}"
        raw = ["Quarterly Report (Final).PDF", "Team Photo 2024.JPG", "meeting notes - March.docx", "Budget v2 (copy).xlsx",
               "Road_Trip  Map.png", "INVOICE #42.pdf", "Resume (old).txt", "Data Export [raw].CSV", "Logo-Dark.SVG",
               "Kick off agenda.md", "Pitch Deck v3 FINAL.pptx"]
        chosen = rng.sample(raw, 9)
        listed = chosen[:6]
        for n in chosen:
            files[f"{src_dir}/{n}"] = _content(n, rng)

        def slug(n):
            stem, ext = n.rsplit(".", 1)
            s = re.sub(r"[^a-z0-9]+", sep, stem.lower()).strip(sep)
            return f"{s}.{ext.lower()}"
        moves = [(f"{src_dir}/{n}", f"{src_dir}/{slug(n)}") for n in listed]
        stay = [f"{src_dir}/{n}" for n in chosen[6:]]
        files[batch_rel] = "".join(n + "\n" for n in listed)
        log_rel = f"{src_dir}/renamed.tsv"
        log_text = "".join(f"{a.rsplit('/', 1)[1]}\t{b.rsplit('/', 1)[1]}\n" for a, b in moves)
        inputs = [batch_rel]
        text = (f"`/home/user/{batch_rel}` lists, one per line, file names in `/home/user/{src_dir}` that must get clean names. "
                "Rename each listed file (in the same directory) as follows: split the name at its last `.` into stem and "
                "extension; convert the stem to lower case and replace every run of characters other than `a`-`z` and "
                f"`0`-`9` by a single `{sep}`, with no leading or trailing `{sep}`; lower-case the extension. For example "
                f"`Budget v2 (copy).xlsx` becomes `budget{sep}v2{sep}copy.xlsx`.\n\n"
                f"Files that are not listed keep their names. Then write `/home/user/{log_rel}`: one line "
                "`<old name><TAB><new name>` per renamed file, in list order, each ending with a newline.\n\n"
                "Do not modify the list.")
        py = ["import os, re", f"d = '/home/user/{src_dir}'", "log = []",
              f"for n in open('/home/user/{batch_rel}', encoding='utf-8').read().splitlines():", "    if not n:", "        continue",
              "    stem, ext = n.rsplit('.', 1)", f"    new = re.sub(r'[^a-z0-9]+', {sep!r}, stem.lower()).strip({sep!r}) + '.' + ext.lower()",
              "    os.rename(os.path.join(d, n), os.path.join(d, new))", "    log.append(f'{n}\\t{new}\\n')",
              f"open('/home/user/{log_rel}', 'w', encoding='utf-8').write(''.join(log))"]
        title = "Give listed files clean names"
    solution = "python3 - <<'PY'\n" + "\n".join(py) + "\nPY\n"
    constants = [("MOVES", {f"/home/user/{a}": [f"/home/user/{b}", sha256(files[a])] for a, b in moves}),
                 ("STAY", {f"/home/user/{p}": sha256(files[p]) for p in stay}),
                 ("LOG", f"/home/user/{log_rel}"), ("LOG_TEXT", log_text), ("INPUT_SHA256", input_hashes(files, inputs))]
    body = '''
    def test_moved_files_at_new_paths():
        for old, (new, digest) in MOVES.items():
            path = Path(new)
            assert path.is_file() and not path.is_symlink(), f"{new} is missing"
            assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, f"{new} does not hold the content of {old}"


    def test_old_paths_gone():
        left = [old for old in MOVES if os.path.lexists(old)]
        assert not left, f"still at the old path: {left}"


    def test_other_files_stay():
        for path, digest in STAY.items():
            p = Path(path)
            assert p.is_file(), f"{path} must stay where it is"
            assert hashlib.sha256(p.read_bytes()).hexdigest() == digest, f"{path} was modified"


    def test_log_exact():
        path = Path(LOG)
        assert path.is_file(), f"{LOG} does not exist"
        assert path.read_text(encoding="utf-8") == LOG_TEXT
    '''
    tests = test_module(task_id, ["import hashlib", "import os", "from pathlib import Path"], constants, body,
                        INPUT_UNCHANGED_TEST)
    return TaskSpec(task_id=task_id, title=title, difficulty="medium", category=CATEGORY,
                    tags=["files", "mv", variant.replace("_", "-"), "generated"], inputs=inputs, requires=["bash", "python3"],
                    instruction=text, solution=solution, tests=tests, files=files)
