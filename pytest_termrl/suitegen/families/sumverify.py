"""Checksum verification: GNU and BSD checksum lists, size+hash manifests, quarantine of bad files."""

from __future__ import annotations

import random

from ..common import INPUT_UNCHANGED_TEST, PROJECT_WORDS, TaskSpec, digest, input_hashes, pick, sha256, test_module

FAMILY = "sumverify"
CATEGORY = "checksum"
VARIANTS = ("gnu", "bsd", "quarantine", "csv_manifest")
TAG = {"sha256": "SHA256", "md5": "MD5", "sha1": "SHA1", "sha512": "SHA512"}


def _payloads(rng: random.Random, folder: str, n: int):
    names = []
    for w in rng.sample(PROJECT_WORDS, n):
        ext = pick(rng, ["tar.gz", "iso", "txt", "json", "bin", "deb"])
        sub = pick(rng, ["", "", "pkgs/", "images/"])
        names.append(f"{sub}{w}-{rng.randint(1, 9)}.{rng.randint(0, 20)}.{ext}")
    contents = {n: f"payload of {n}\n{'#' * rng.randint(1, 60)}\n" for n in names}
    # Statuses: some corrupted, one or two missing.
    status = {}
    order = list(names)
    rng.shuffle(order)
    for i, name in enumerate(order):
        status[name] = "FAILED" if i < 2 else "MISSING" if i < 3 + (name > order[3]) else "OK"
    return names, contents, status


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    variant = VARIANTS[index % len(VARIANTS)]
    folder = pick(rng, ["downloads", "mirror", "releases", "incoming/isos", "vendor"])
    names, contents, status = _payloads(rng, folder, rng.randint(6, 8))
    algo = pick(rng, ["sha256", "md5", "sha1", "sha512"])
    files: dict[str, str] = {}
    on_disk = {}
    for n in names:
        if status[n] == "MISSING":
            continue
        data = contents[n] if status[n] == "OK" else contents[n].replace("payload", "pay1oad")
        on_disk[n] = data
        files[f"{folder}/{n}"] = data
    quarantine_moves = {}
    if variant == "gnu":
        sums_rel = f"{folder}/{TAG[algo]}SUMS"
        lines = [f"{digest(algo, contents[n])} {'*' if rng.random() < 0.3 else ' '}{n}" for n in names]
        files[sums_rel] = "\n".join(lines) + "\n"
        report_rel = f"{folder}/verify.txt"
        entries = [f"{n}: {status[n]}" for n in names]
        summary = (f"total: {len(names)}, ok: {sum(s == 'OK' for s in status.values())}, failed: "
                   f"{sum(s == 'FAILED' for s in status.values())}, missing: {sum(s == 'MISSING' for s in status.values())}")
        report = "\n".join(entries + [summary]) + "\n"
        text = (f"`/home/user/{sums_rel}` lists expected {algo.upper()} checksums in `{algo}sum` format for files under "
                f"`/home/user/{folder}` (paths relative to it; a `*` before the name marks binary mode and is not part of the "
                f"name). Verify every entry and write `/home/user/{report_rel}`:\n\n"
                "- one line per entry, in the order of the list: `<path>: <STATUS>`, where STATUS is `OK` (the file exists and "
                "matches), `FAILED` (it exists but does not match) or `MISSING` (it does not exist);\n"
                "- then `total: <T>, ok: <O>, failed: <F>, missing: <M>`.\n\nEvery line ends with a newline. Do not modify, "
                f"move or delete anything in `/home/user/{folder}`.")
        py = ["import hashlib, os", f"base = '/home/user/{folder}'", "out, n = [], {'OK': 0, 'FAILED': 0, 'MISSING': 0}",
              f"for line in open('/home/user/{sums_rel}'):", "    h, name = line.rstrip('\\n').split(' ', 1)",
              "    name = name[1:]", "    p = os.path.join(base, name)", "    if not os.path.exists(p):", "        s = 'MISSING'",
              f"    elif hashlib.{algo}(open(p, 'rb').read()).hexdigest() == h:", "        s = 'OK'", "    else:", "        s = 'FAILED'",
              "    n[s] += 1", "    out.append(f'{name}: {s}')",
              "out.append(f\"total: {sum(n.values())}, ok: {n['OK']}, failed: {n['FAILED']}, missing: {n['MISSING']}\")",
              f"open('/home/user/{report_rel}', 'w').write('\\n'.join(out) + '\\n')"]
        title = f"Verify files against {TAG[algo]}SUMS"
    elif variant == "bsd":
        sums_rel = f"{folder}/CHECKSUMS"
        algos = {n: pick(rng, list(TAG)) for n in names}
        files[sums_rel] = "".join(f"{TAG[algos[n]]} ({n}) = {digest(algos[n], contents[n])}\n" for n in names)
        report_rel = f"{pick(rng, ['reports', 'out'])}/checksums.tsv"
        report = "".join(f"{n}\t{algos[n]}\t{status[n].lower()}\n" for n in sorted(names))
        text = (f"`/home/user/{sums_rel}` lists checksums in the BSD tag format, one per line: `<ALGO> (<path>) = <hex digest>`, "
                "where ALGO is one of `SHA256`, `SHA1`, `MD5`, `SHA512` (it can differ from line to line) and the path is "
                f"relative to `/home/user/{folder}`.\n\nCheck every entry and write `/home/user/{report_rel}` (create the "
                "directory if needed): one tab-separated line `<path><TAB><algo><TAB><status>` per entry, sorted by path in "
                "byte order, with the algorithm in lower case (`sha256`, ...) and the status `ok`, `failed` (the file exists "
                "but its digest differs) or `missing`. Every line ends with a newline.\n\n"
                f"Do not modify anything in `/home/user/{folder}`.")
        py = ["import hashlib, os, re", f"base = '/home/user/{folder}'", "rows = []",
              f"for line in open('/home/user/{sums_rel}'):", "    algo, name, h = re.fullmatch(r'(\\w+) \\((.*)\\) = ([0-9a-f]+)', line.strip()).groups()",
              "    algo = algo.lower()", "    p = os.path.join(base, name)", "    if not os.path.exists(p):", "        s = 'missing'",
              "    else:", "        s = 'ok' if hashlib.new(algo, open(p, 'rb').read()).hexdigest() == h else 'failed'",
              "    rows.append(f'{name}\\t{algo}\\t{s}\\n')",
              f"os.makedirs(os.path.dirname('/home/user/{report_rel}'), exist_ok=True)",
              f"open('/home/user/{report_rel}', 'w').write(''.join(sorted(rows)))"]
        title = "Verify a BSD-style checksum list"
    elif variant == "quarantine":
        sums_rel = f"{folder}/{algo}sums.txt"
        files[sums_rel] = "".join(f"{digest(algo, contents[n])}  {n}\n" for n in names)
        qdir = f"{pick(rng, ['quarantine', 'bad', 'rejected'])}"
        report_rel = f"{qdir}/REPORT"
        bad = [n for n in names if status[n] == "FAILED"]
        missing = [n for n in names if status[n] == "MISSING"]
        for n in bad:
            quarantine_moves[f"/home/user/{folder}/{n}"] = [f"/home/user/{qdir}/{n.rsplit('/', 1)[-1]}", sha256(on_disk[n])]
        report = "".join(f"corrupt {n}\n" for n in sorted(bad)) + "".join(f"missing {n}\n" for n in sorted(missing))
        text = (f"`/home/user/{sums_rel}` holds {algo.upper()} checksums in `{algo}sum` format for files under "
                f"`/home/user/{folder}` (paths relative to it).\n\n"
                f"1. Move every listed file whose checksum does not match into `/home/user/{qdir}/` (create it), keeping only "
                "its base name (no subfolders), contents unchanged. Files that match stay where they are.\n"
                f"2. Write `/home/user/{report_rel}`: a line `corrupt <path>` for each moved file, then a line `missing <path>` "
                "for each listed file that does not exist, paths as written in the list, each group sorted in byte order. "
                "Every line ends with a newline.\n\n"
                f"Do not modify the checksum list, and do not touch any other file.")
        py = ["import hashlib, os", f"base, q = '/home/user/{folder}', '/home/user/{qdir}'", "os.makedirs(q, exist_ok=True)",
              "bad, missing = [], []", f"for line in open('/home/user/{sums_rel}'):", "    h, name = line.rstrip('\\n').split('  ', 1)",
              "    p = os.path.join(base, name)", "    if not os.path.exists(p):", "        missing.append(name)",
              f"    elif hashlib.{algo}(open(p, 'rb').read()).hexdigest() != h:",
              "        os.rename(p, os.path.join(q, os.path.basename(name)))", "        bad.append(name)",
              f"open('/home/user/{report_rel}', 'w').write(''.join(f'corrupt {{n}}\\n' for n in sorted(bad)) + ''.join(f'missing {{n}}\\n' for n in sorted(missing)))"]
        title = "Quarantine files that fail their checksum"
    else:
        sums_rel = f"{folder}/manifest.csv"
        # One file whose size matches but hash differs, one whose size differs.
        rows = ["path,bytes,sha256"]
        st = {}
        for n in names:
            size = len(contents[n].encode())
            rows.append(f"{n},{size},{sha256(contents[n])}")
            if status[n] == "MISSING":
                st[n] = "missing"
            elif status[n] == "OK":
                st[n] = "ok"
            else:
                st[n] = "bad_hash" if len(on_disk[n].encode()) == size else "bad_size"
        grow = [n for n in names if status[n] == "FAILED"][0]
        on_disk[grow] = on_disk[grow] + "extra\n"
        files[f"{folder}/{grow}"] = on_disk[grow]
        st[grow] = "bad_size"
        files[sums_rel] = "\n".join(rows) + "\n"
        report_rel = f"{pick(rng, ['reports', 'out', 'audit'])}/manifest_check.json"
        expected_obj = {"checked": len(names), "results": {n: st[n] for n in sorted(names)},
                        "ok": sum(v == "ok" for v in st.values())}
        report = None
        text = (f"`/home/user/{sums_rel}` (header `path,bytes,sha256`, paths relative to `/home/user/{folder}`) describes "
                "what each file should be.\n\n"
                f"Check every row and write `/home/user/{report_rel}` (create the directory if needed): a JSON object with "
                "`checked` (the number of rows), `ok` (how many passed) and `results`, an object mapping each path to one of "
                "`ok`, `missing` (no such file), `bad_size` (the size in bytes differs; the hash is not checked then) or "
                "`bad_hash` (the size matches but the SHA-256 differs).\n\n"
                f"Do not modify anything in `/home/user/{folder}`.")
        py = ["import csv, hashlib, json, os", f"base = '/home/user/{folder}'", "res = {}",
              f"for r in csv.DictReader(open('/home/user/{sums_rel}')):", "    p = os.path.join(base, r['path'])",
              "    if not os.path.exists(p):", "        res[r['path']] = 'missing'", "        continue", "    data = open(p, 'rb').read()",
              "    if len(data) != int(r['bytes']):", "        res[r['path']] = 'bad_size'",
              "    elif hashlib.sha256(data).hexdigest() != r['sha256']:", "        res[r['path']] = 'bad_hash'", "    else:",
              "        res[r['path']] = 'ok'", f"os.makedirs(os.path.dirname('/home/user/{report_rel}'), exist_ok=True)",
              "out = {'checked': len(res), 'ok': sum(v == 'ok' for v in res.values()), 'results': res}",
              f"open('/home/user/{report_rel}', 'w').write(json.dumps(out, indent=2) + '\\n')"]
        title = "Check files against a size and hash manifest"
        algo = "sha256"
    solution = "python3 - <<'PY'\n" + "\n".join(py) + "\nPY\n"
    if variant == "gnu" and rng.random() < 0.5:
        # A shell variant of the same reference.
        solution = (f"(\n  cd /home/user/{folder} || return\n  ok=0 failed=0 missing=0\n  : > /home/user/{report_rel}.tmp\n"
                    f"  while read -r sum name; do\n    name=${{name#\\*}}\n"
                    f"    if [ ! -e \"$name\" ]; then s=MISSING; missing=$((missing + 1))\n"
                    f"    elif [ \"$({algo}sum < \"$name\" | cut -d' ' -f1)\" = \"$sum\" ]; then s=OK; ok=$((ok + 1))\n"
                    f"    else s=FAILED; failed=$((failed + 1)); fi\n"
                    f"    printf '%s: %s\\n' \"$name\" \"$s\" >> /home/user/{report_rel}.tmp\n"
                    f"  done < /home/user/{sums_rel}\n"
                    f"  printf 'total: %d, ok: %d, failed: %d, missing: %d\\n' $((ok + failed + missing)) $ok $failed $missing "
                    f">> /home/user/{report_rel}.tmp\n  mv /home/user/{report_rel}.tmp /home/user/{report_rel}\n)\n")
    present = {f"/home/user/{folder}/{n}": sha256(d) for n, d in sorted(on_disk.items())
               if f"/home/user/{folder}/{n}" not in quarantine_moves}
    constants = [("REPORT", f"/home/user/{report_rel}"), ("PRESENT", present), ("MOVED", quarantine_moves)]
    imports = ["import hashlib", "import os", "from pathlib import Path"]
    if report is not None:
        named = [n for n in names if variant != "quarantine" or status[n] != "OK"]
        constants += [("REPORT_LINES", report.splitlines()), ("NAMED", named)]
        body = '''
        def _lines():
            path = Path(REPORT)
            assert path.is_file(), f"{REPORT} does not exist"
            return path.read_text().splitlines()


        def test_report_not_empty():
            assert _lines(), "the report is empty"


        def test_every_entry_reported():
            text = "\\n".join(_lines())
            missing = [name for name in NAMED if name not in text]
            assert not missing, f"not in the report: {missing}"


        def test_exact_report():
            assert _lines() == REPORT_LINES
            assert Path(REPORT).read_text() == "".join(line + "\\n" for line in REPORT_LINES)
        '''
    else:
        imports.append("import json")
        constants += [("EXPECTED", expected_obj)]
        body = '''
        def _data():
            path = Path(REPORT)
            assert path.is_file(), f"{REPORT} does not exist"
            return json.loads(path.read_text())


        def test_counts():
            data = _data()
            assert data.get("checked") == EXPECTED["checked"]
            assert data.get("ok") == EXPECTED["ok"]


        def test_results_per_file():
            assert _data().get("results") == EXPECTED["results"]


        def test_exact_object():
            assert _data() == EXPECTED
        '''
    files_body = '''
    def test_files_left_in_place():
        for path, digest in PRESENT.items():
            p = Path(path)
            assert p.is_file(), f"{path} must stay where it is"
            assert hashlib.sha256(p.read_bytes()).hexdigest() == digest, f"{path} was modified"


    def test_quarantined_files():
        for old, (new, digest) in MOVED.items():
            assert not os.path.lexists(old), f"{old} must be moved to quarantine"
            assert Path(new).is_file(), f"{new} is missing"
            assert hashlib.sha256(Path(new).read_bytes()).hexdigest() == digest
    '''
    constants.append(("INPUT_SHA256", input_hashes(files, [sums_rel])))
    tests = test_module(task_id, imports, constants, body, files_body, INPUT_UNCHANGED_TEST)
    return TaskSpec(task_id=task_id, title=title, difficulty="medium" if variant in ("gnu", "quarantine") else "hard",
                    category=CATEGORY, tags=["checksum", algo, variant.replace("_", "-"), "generated"], inputs=[sums_rel],
                    requires=["bash", "python3"] if "python3" in solution else ["bash", f"{algo}sum"],
                    instruction=text, solution=solution, tests=tests, files=files)
