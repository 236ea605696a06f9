"""Deduplication: duplicate files (delete or symlink), duplicate CSV rows, duplicate list entries."""

from __future__ import annotations

import csv
import io
import os
import random

from ..common import CITIES, FIRST_NAMES, INPUT_UNCHANGED_TEST, LAST_NAMES, PROJECT_WORDS, TaskSpec, input_hashes, pick, sha256, test_module

FAMILY = "dedup"
CATEGORY = "dedup"
VARIANTS = ("files_delete", "csv_rows", "files_symlink", "list_lines")


def _file_tree(rng: random.Random, root: str):
    subdirs = rng.sample(["2022", "2023", "phone", "camera", "old", "import", "backup_copy", "misc"], 4)
    ext = pick(rng, ["bin", "dat", "raw", "img"])
    blobs = [f"blob {rng.randint(10**6, 10**7)} {'x' * rng.randint(1, 40)}\n" for _ in range(7)]
    files = {}
    for i in range(rng.randint(12, 15)):
        content = rng.choice(blobs[:4]) if rng.random() < 0.6 else blobs[4 + i % 3] + f"{i}\n"
        rel = f"{root}/{rng.choice(subdirs)}/{pick(rng, PROJECT_WORDS)}_{i:02d}.{ext}"
        files[rel] = content
    return files


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    variant = VARIANTS[index % len(VARIANTS)]
    files: dict[str, str] = {}
    extra_constants: list = []
    if variant.startswith("files"):
        root = pick(rng, ["media", "archive/photos", "storage", "pictures"])
        tree = _file_tree(rng, root)
        files.update(tree)
        inv_rel = f"{root}/{pick(rng, ['inventory.txt', 'files.lst', 'catalog.txt'])}"
        listed = sorted(tree)
        rng.shuffle(listed)
        files[inv_rel] = "".join(p.removeprefix(root + "/") + "\n" for p in listed)
        groups: dict[str, list[str]] = {}
        for p in sorted(tree):
            groups.setdefault(tree[p], []).append(p)
        dup_groups = [g for g in groups.values() if len(g) > 1]
        assert dup_groups
        report_rel = f"{pick(rng, ['reports', 'out', 'cleanup'])}/duplicates.txt"
        lines = []
        removed = {}
        for g in sorted(dup_groups, key=lambda g: g[0]):
            keep = g[0]
            for other in g[1:]:
                lines.append(f"{other.removeprefix(root + '/')} {keep.removeprefix(root + '/')}")
                removed[other] = keep
        lines.sort()
        report_text = "".join(line + "\n" for line in lines)
        mode = "delete" if variant == "files_delete" else "symlink"
        action = ("delete every other copy" if mode == "delete" else
                  "replace every other copy by a symbolic link to the kept file, with a *relative* link target (for example "
                  "`../2023/a.bin` for a link in another folder, or just `a.bin` in the same folder)")
        text = (f"`/home/user/{inv_rel}` lists files under `/home/user/{root}`, one path per line, relative to "
                f"`/home/user/{root}`. Some of them are byte-for-byte identical copies of each other.\n\n"
                "For each group of listed files with identical contents, keep the one whose relative path comes first in "
                f"byte order (as `LC_ALL=C sort` orders them) and {action}. Files with unique contents, and anything not in the "
                "list, are left alone.\n\n"
                f"Write `/home/user/{report_rel}` (create the directory if needed) with one line `<duplicate> <kept>` per "
                f"{'deleted' if mode == 'delete' else 'replaced'} file, both relative to `/home/user/{root}`, sorted in byte "
                "order, each line ending with a newline.\n\nDo not modify the inventory.")
        py = ["import hashlib, os", f"root = '/home/user/{root}'",
              f"paths = sorted(l.strip() for l in open('/home/user/{inv_rel}') if l.strip())", "first, out = {}, []",
              "for p in paths:", "    h = hashlib.sha256(open(os.path.join(root, p), 'rb').read()).hexdigest()",
              "    if h not in first:", "        first[h] = p", "        continue", "    keep = first[h]",
              "    full = os.path.join(root, p)", "    os.remove(full)"]
        if mode == "symlink":
            py += ["    os.symlink(os.path.relpath(os.path.join(root, keep), os.path.dirname(full)), full)"]
        py += ["    out.append(f'{p} {keep}\\n')", f"os.makedirs('/home/user/{report_rel.rsplit('/', 1)[0]}', exist_ok=True)",
               f"open('/home/user/{report_rel}', 'w').write(''.join(sorted(out)))"]
        solution = "python3 - <<'PY'\n" + "\n".join(py) + "\nPY\n"
        kept = {f"/home/user/{p}": sha256(c) for p, c in tree.items() if p not in removed}
        gone = {f"/home/user/{p}": f"/home/user/{k}" for p, k in removed.items()}
        links = {f"/home/user/{p}": os.path.relpath(k, os.path.dirname(p)) for p, k in removed.items()}
        constants = [("KEPT", kept), ("REMOVED", gone), ("LINKS", links if mode == "symlink" else {}), ("MODE", mode),
                     ("REPORT", f"/home/user/{report_rel}"), ("REPORT_TEXT", report_text),
                     ("INPUT_SHA256", input_hashes(files, [inv_rel]))]
        body = '''
        def test_kept_files_untouched():
            for path, digest in KEPT.items():
                p = Path(path)
                assert p.is_file() and not p.is_symlink(), f"{path} must stay a regular file"
                assert hashlib.sha256(p.read_bytes()).hexdigest() == digest, f"{path} was modified"


        def test_duplicates_handled():
            for path, kept in REMOVED.items():
                if MODE == "delete":
                    assert not os.path.lexists(path), f"{path} is a duplicate of {kept} and must be deleted"
                else:
                    assert os.path.islink(path), f"{path} must be a symbolic link to {kept}"


        def test_link_targets_relative_and_right():
            for path, target in LINKS.items():
                assert os.path.islink(path), f"{path} is not a symbolic link"
                assert os.readlink(path) == target, f"{path} -> {os.readlink(path)}, expected {target}"
                assert Path(path).read_bytes() == Path(REMOVED[path]).read_bytes()


        def test_report_exact():
            path = Path(REPORT)
            assert path.is_file(), f"{REPORT} does not exist"
            assert path.read_text() == REPORT_TEXT
        '''
        inputs = [inv_rel]
        title = "Delete duplicate files" if mode == "delete" else "Replace duplicate files by relative symlinks"
        imports = ["import hashlib", "import os", "from pathlib import Path"]
    elif variant == "csv_rows":
        folder = pick(rng, ["data", "crm", "exports"])
        src = f"{folder}/{pick(rng, ['contacts', 'leads', 'subscribers'])}.csv"
        key = pick(rng, ["email", "phone"])
        keep_last = rng.random() < 0.5
        people = []
        for _ in range(rng.randint(9, 12)):
            f, l = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            people.append((f"{f.title()} {l.title()}", f"{f}.{l}@example.com", f"+351 9{rng.randint(10, 99)} {rng.randint(100, 999)} {rng.randint(100, 999)}",
                           rng.choice(CITIES)))
        rows = []
        for p in people:
            rows.append(list(p))
        for _ in range(rng.randint(4, 6)):
            p = list(rng.choice(people))
            if key == "email":
                p[1] = pick(rng, [p[1].upper(), " " + p[1], p[1].title() + " "])
            else:
                digits = "".join(ch for ch in p[2] if ch.isdigit())
                p[2] = pick(rng, [digits, f"+{digits[:3]}-{digits[3:6]}-{digits[6:]}", f"({digits[:3]}) {digits[3:]}"])
            p[3] = rng.choice(CITIES)
            rows.insert(rng.randrange(1, len(rows) + 1), p)
        header = ["name", "email", "phone", "city"]
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows([header] + rows)
        files[src] = buf.getvalue()

        def norm(r):
            return r[1].strip().lower() if key == "email" else "".join(ch for ch in r[2] if ch.isdigit())
        chosen: dict[str, int] = {}
        for i, r in enumerate(rows):
            if keep_last or norm(r) not in chosen:
                chosen[norm(r)] = i
        order = sorted(chosen.values())
        out_rows = [rows[i] for i in order]
        out_rel = f"{pick(rng, ['out', 'clean', 'reports'])}/{src.rsplit('/', 1)[1].replace('.csv', '_unique.csv')}"
        expected = ",".join(header) + "\n" + "".join(",".join(r) + "\n" for r in out_rows)
        rule = ("their `email` values are equal after trimming surrounding spaces and converting to lower case" if key == "email"
                else "their `phone` values have the same digits (ignore every character that is not a digit `0`-`9`)")
        which = "last" if keep_last else "first"
        text = (f"`/home/user/{src}` (header `name,email,phone,city`, no field contains a comma or a quote) has duplicate "
                f"people. Two rows are duplicates when {rule}.\n\n"
                f"Write `/home/user/{out_rel}` (create the directory if needed) with the same header and, of each group of "
                f"duplicates, only the **{which}** row of the group in file order; rows are copied unchanged and kept in their "
                "original relative order. Every line ends with a newline.\n\nDo not modify the input file.")
        normexpr = "r['email'].strip().lower()" if key == "email" else "''.join(c for c in r['phone'] if c.isdigit())"
        py = ["import csv", f"rows = list(csv.DictReader(open('/home/user/{src}', newline='')))", "pick = {}",
              "for i, r in enumerate(rows):", f"    k = {normexpr}",
              *(["    pick[k] = i"] if keep_last else ["    if k not in pick:", "        pick[k] = i"]),
              "out = ['name,email,phone,city'] + [','.join(rows[i][c] for c in ('name', 'email', 'phone', 'city')) for i in sorted(pick.values())]",
              f"open('/home/user/{out_rel}', 'w').write('\\n'.join(out) + '\\n')"]
        solution = f"mkdir -p /home/user/{out_rel.rsplit('/', 1)[0]}\npython3 - <<'PY'\n" + "\n".join(py) + "\nPY\n"
        inputs = [src]
        constants = [("OUT", f"/home/user/{out_rel}"), ("EXPECTED", expected.splitlines()), ("KEEP", which),
                     ("INPUT_SHA256", input_hashes(files, inputs))]
        body = '''
        def _lines():
            path = Path(OUT)
            assert path.is_file(), f"{OUT} does not exist"
            return path.read_text().splitlines()


        def test_header():
            assert _lines()[:1] == EXPECTED[:1]


        def test_row_count():
            assert len(_lines()) == len(EXPECTED), f"expected {len(EXPECTED) - 1} unique rows"


        def test_kept_rows():
            assert sorted(_lines()[1:]) == sorted(EXPECTED[1:]), f"the {KEEP} row of each group must be kept, unchanged"


        def test_exact_file():
            assert Path(OUT).read_text() == "".join(line + "\\n" for line in EXPECTED)
        '''
        title = f"Deduplicate people by {key}, keeping the {which} row"
        imports = ["import hashlib", "from pathlib import Path"]
    else:
        folder = pick(rng, ["dns", "filters", "etc/blocklists", "security"])
        srcs = [f"{folder}/{n}" for n in rng.sample(["ads.txt", "trackers.txt", "malware.txt", "custom.txt"], 2)]
        base_domains = [f"{w}.{pick(rng, ['com', 'net', 'io', 'org'])}" for w in rng.sample(PROJECT_WORDS, 12)]
        for s in srcs:
            lines = [f"# {s.rsplit('/', 1)[1]} blocklist", ""]
            for d in rng.sample(base_domains, 8):
                variant_d = pick(rng, [d, d.upper(), d + ".", f"  {d}  ", f"{d} # added {rng.randint(1, 28)} May"])
                lines.append(variant_d)
                if rng.random() < 0.2:
                    lines.append("")
            files[s] = "\n".join(lines) + "\n"

        def clean(line):
            line = line.split("#", 1)[0].strip().lower().rstrip(".")
            return line
        out = []
        for s in srcs:
            for line in files[s].splitlines():
                c = clean(line)
                if c and c not in out:
                    out.append(c)
        sort_out = rng.random() < 0.5
        if sort_out:
            out = sorted(out)
        out_rel = f"{folder}/{pick(rng, ['merged.txt', 'blocklist.combined', 'all-domains.txt'])}"
        text = (f"Merge the domain blocklists `/home/user/{srcs[0]}` and `/home/user/{srcs[1]}` (in that order) into "
                f"`/home/user/{out_rel}`. In both files, `#` starts a comment (whole line or end of line) and blank lines "
                "mean nothing. Normalise each entry: strip surrounding whitespace, convert to lower case and remove a "
                "trailing `.`. Each distinct domain appears once in the output, "
                + ("sorted in ascending byte order" if sort_out else "in the order of its first appearance (first file first)")
                + ", one per line, each line ending with a newline; no comments or blank lines.\n\nDo not modify the input files.")
        py = ["out = []", f"for src in {['/home/user/' + s for s in srcs]!r}:", "    for line in open(src):",
              "        d = line.split('#', 1)[0].strip().lower().rstrip('.')", "        if d and d not in out:", "            out.append(d)",
              *(["out.sort()"] if sort_out else []), f"open('/home/user/{out_rel}', 'w').write(''.join(d + '\\n' for d in out))"]
        solution = "python3 - <<'PY'\n" + "\n".join(py) + "\nPY\n"
        inputs = srcs
        constants = [("OUT", f"/home/user/{out_rel}"), ("EXPECTED", out), ("INPUT_SHA256", input_hashes(files, inputs))]
        body = '''
        def _lines():
            path = Path(OUT)
            assert path.is_file(), f"{OUT} does not exist"
            return path.read_text().splitlines()


        def test_no_duplicates_or_junk():
            lines = _lines()
            assert lines, "the output is empty"
            assert len(lines) == len(set(lines)), "duplicates remain"
            assert all(l and l == l.strip().lower() and not l.endswith(".") and "#" not in l for l in lines)


        def test_same_domains():
            assert sorted(_lines()) == sorted(EXPECTED)


        def test_exact_file():
            assert Path(OUT).read_text() == "".join(d + "\\n" for d in EXPECTED)
        '''
        title = "Merge and deduplicate domain blocklists"
        imports = ["import hashlib", "from pathlib import Path"]
    tests = test_module(task_id, imports, constants, body, INPUT_UNCHANGED_TEST)
    return TaskSpec(task_id=task_id, title=title, difficulty="medium", category=CATEGORY,
                    tags=["dedup", variant.replace("_", "-"), "generated"], inputs=inputs, requires=["bash", "python3"],
                    instruction=text, solution=solution, tests=tests, files=files)
