"""Log aggregation: counts, sums and means per key, written in a fixed table format."""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from typing import TypedDict

from ..common import (COMPONENTS, FIRST_NAMES, HOSTS, INPUT_UNCHANGED_TEST, TaskSpec, dec_mean, input_hashes, pick,
                      test_module)

FAMILY = "logagg"
CATEGORY = "logs"
VARIANTS = ("status_by_path", "level_matrix", "user_durations", "bytes_by_ip", "hourly_errors", "syslog_programs")
PATHS = ["/api/orders", "/api/users", "/api/cart", "/static/app.js", "/health", "/login", "/api/search", "/admin"]
PROGRAMS = ["sshd", "cron", "nginx", "postfix", "dockerd", "kernel", "systemd"]


class _Request(TypedDict):
    """One record of the user_durations log, in JSON order."""

    time: str
    user: str
    duration_ms: int
    ok: bool


def _clock(rng: random.Random, n: int, step=(20, 400)) -> list[datetime]:
    t = datetime(2024, rng.randint(1, 12), rng.randint(1, 27), rng.randint(0, 21), rng.randint(0, 59), rng.randint(0, 59))
    out = []
    for _ in range(n):
        t += timedelta(seconds=rng.randint(*step))
        out.append(t)
    return out


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    variant = VARIANTS[index % len(VARIANTS)]
    folder = pick(rng, ["logs", "var/log", "srv/logs", "data/logs", "ops/logs"])
    out_dir = pick(rng, ["reports", "out", "stats", "summary"])
    n = rng.randint(50, 80)
    times = _clock(rng, n)
    solution_py: list[str]
    extra_note = ""

    if variant == "status_by_path":
        log_rel = f"{folder}/access.log"
        klass = pick(rng, ["4", "5"])
        recs = []
        for t in times:
            path = rng.choice(PATHS) + (f"?id={rng.randint(1, 99)}" if rng.random() < 0.3 else "")
            status = rng.choice([200, 200, 201, 304, 400, 401, 404, 404, 500, 502, 503])
            recs.append(f'10.0.{rng.randint(0, 9)}.{rng.randint(1, 250)} - - [{t:%d/%b/%Y:%H:%M:%S} +0000] '
                        f'"{rng.choice(["GET", "POST"])} {path} HTTP/1.1" {status} {rng.randint(100, 9000)}')
        counts: Counter[str] = Counter()
        for line in recs:
            f = line.split()
            if f[8].startswith(klass):
                counts[f[6].split("?")[0]] += 1
        rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        sep = pick(rng, ["\t", ","])
        header = sep.join(["path", "count"])
        expected = header + "\n" + "".join(f"{p}{sep}{c}\n" for p, c in rows)
        out_rel = f"{out_dir}/{'client' if klass == '4' else 'server'}_errors_by_path.{'tsv' if sep == chr(9) else 'csv'}"
        sepname = "a tab" if sep == "\t" else "a comma"
        what = (f"Each line of the access log `/home/user/{log_rel}` is in the common log format "
                f'(`<ip> - - [<time>] "<METHOD> <path> HTTP/1.1" <status> <bytes>`). Count, per path, the requests whose '
                f"status code is in the {klass}xx range. The path is the request path without its query string "
                f"(`/api/users?id=4` counts as `/api/users`).")
        fmt = (f"a header line `path{sep}count` (fields separated by {sepname}), then one line `<path>{sep}<count>` per path "
               "with at least one such request, sorted by count from highest to lowest and then by path in ascending "
               "(byte) order")
        files = {log_rel: "\n".join(recs) + "\n"}
        solution_py = ["from collections import Counter", "c = Counter()", f"for line in open('/home/user/{log_rel}'):",
                       "    f = line.split()", f"    if f[8].startswith('{klass}'):", "        c[f[6].split('?')[0]] += 1",
                       "rows = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))",
                       f"text = {header!r} + '\\n' + ''.join(f'{{p}}{sep!r:s}{{n}}\\n' for p, n in rows)".replace(f"{sep!r:s}", sep.replace("\t", "\\t"))]
        title = f"Count {klass}xx responses per path"
    elif variant == "level_matrix":
        log_rel = f"{folder}/{pick(rng, ['app', 'service', 'platform'])}.log"
        comps = sorted(rng.sample(COMPONENTS, rng.randint(4, 6)))
        levels = ["DEBUG", "INFO", "WARN", "ERROR"]
        entries = []
        for t in times:
            lv = rng.choice(levels + ["INFO", "INFO"])
            entries.append((t, lv, rng.choice(comps)))
        lines = [f"{t:%Y-%m-%dT%H:%M:%SZ} {lv} [{c}] {pick(rng, ['done', 'ok', 'retry', 'ERROR seen upstream', 'slow'])}"
                 for t, lv, c in entries]
        # A comment line and a blank line that are not entries.
        lines.insert(rng.randrange(5, n - 5), "# rotated from previous file")
        lines.insert(rng.randrange(5, n - 5), "")
        m: defaultdict[str, Counter[str]] = defaultdict(Counter)
        for t, lv, c in entries:
            m[c][lv] += 1
        present = [c for c in comps if m[c]]
        expected = "component," + ",".join(levels) + "\n" + "".join(
            c + "," + ",".join(str(m[c][lv]) for lv in levels) + "\n" for c in present)
        out_rel = f"{out_dir}/levels_by_component.csv"
        what = (f"`/home/user/{log_rel}` is an application log with entries `<timestamp> <LEVEL> [<component>] <message>`; "
                "blank lines and lines starting with `#` are not entries. The level is always one of `DEBUG`, `INFO`, `WARN`, `ERROR`.")
        fmt = ("a CSV table with the header `component,DEBUG,INFO,WARN,ERROR`, then one row per component that has at least one "
               "entry, in ascending alphabetical order, holding the number of entries of each level (write `0` for none)")
        files = {log_rel: "\n".join(lines) + "\n"}
        solution_py = ["from collections import Counter, defaultdict", "m = defaultdict(Counter)",
                       f"for line in open('/home/user/{log_rel}'):", "    if not line.strip() or line.startswith('#'):",
                       "        continue", "    f = line.split()", "    m[f[2].strip('[]')][f[1]] += 1",
                       "lv = ['DEBUG', 'INFO', 'WARN', 'ERROR']",
                       "text = 'component,' + ','.join(lv) + '\\n' + ''.join(c + ',' + ','.join(str(m[c][l]) for l in lv) + '\\n' for c in sorted(m))"]
        title = "Level counts per component"
    elif variant == "user_durations":
        log_rel = f"{folder}/{pick(rng, ['sessions', 'jobs', 'requests'])}.jsonl"
        users = rng.sample(FIRST_NAMES, rng.randint(4, 7))
        records: list[_Request] = []
        for t in times:
            rec: _Request = {"time": f"{t:%Y-%m-%dT%H:%M:%S}", "user": rng.choice(users), "duration_ms": rng.randint(3, 4000),
                   "ok": rng.random() > 0.2}
            records.append(rec)
        only_ok = rng.random() < 0.5
        agg: defaultdict[str, list[int]] = defaultdict(list)
        for r in records:
            if r["ok"] or not only_ok:
                agg[r["user"]].append(r["duration_ms"])
        by_user = sorted(agg.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
        expected = "user,requests,total_ms,avg_ms\n" + "".join(
            f"{u},{len(v)},{sum(v)},{dec_mean(v, 1)}\n"
            for u, v in by_user)
        out_rel = f"{out_dir}/durations_by_user.csv"
        cond = " whose `ok` field is `true`" if only_ok else " (whatever their `ok` field)"
        what = (f"`/home/user/{log_rel}` holds one JSON object per line with the keys `time`, `user`, `duration_ms` (an integer) "
                f"and `ok` (a boolean). Aggregate the records{cond} per user.")
        fmt = ("a CSV file with the header `user,requests,total_ms,avg_ms` and one row per user: the number of records, the sum "
               "of `duration_ms`, and the mean `duration_ms` rounded to one decimal place (halves rounded up) and always written "
               "with one decimal (e.g. `250.0`); rows sorted by `total_ms` from highest to lowest, ties by user name ascending")
        files = {log_rel: "".join(json.dumps(r) + "\n" for r in records)}
        solution_py = ["import json", "from decimal import Decimal, ROUND_HALF_UP", "agg = {}",
                       f"for line in open('/home/user/{log_rel}'):", "    r = json.loads(line)",
                       *(["    if not r['ok']:", "        continue"] if only_ok else []),
                       "    agg.setdefault(r['user'], []).append(r['duration_ms'])",
                       "rows = sorted(agg.items(), key=lambda kv: (-sum(kv[1]), kv[0]))",
                       "avg = lambda v: (Decimal(sum(v)) / len(v)).quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)",
                       "text = 'user,requests,total_ms,avg_ms\\n' + ''.join(f'{u},{len(v)},{sum(v)},{avg(v)}\\n' for u, v in rows)"]
        title = "Per-user request durations"
    elif variant == "bytes_by_ip":
        log_rel = f"{folder}/{pick(rng, ['access.log', 'web-access.log', 'proxy.log'])}"
        ips = [f"192.168.{rng.randint(0, 3)}.{rng.randint(2, 250)}" for _ in range(rng.randint(4, 7))]
        hits = []
        for t in times:
            status = rng.choice([200, 200, 200, 206, 304, 404, 500])
            size = "-" if status == 304 else str(rng.randint(0, 50000))
            hits.append((rng.choice(ips), t, status, size))
        lines = [f'{ip} - - [{t:%d/%b/%Y:%H:%M:%S} +0000] "GET /f/{rng.randint(1, 40)} HTTP/1.1" {st} {sz}'
                 for ip, t, st, sz in hits]
        tot: Counter[str] = Counter()
        for ip, t, st, sz in hits:
            if 200 <= st <= 299:
                tot[ip] += int(sz)
        rows = sorted(tot.items(), key=lambda kv: (-kv[1], kv[0]))
        expected = "".join(f"{b} {ip}\n" for ip, b in rows)
        out_rel = f"{out_dir}/bytes_by_client.txt"
        what = (f"`/home/user/{log_rel}` is a web server access log in the common log format "
                '(`<ip> - - [<time>] "<request>" <status> <bytes>`, where `<bytes>` is `-` when no body was sent). '
                "Sum, per client IP, the bytes of the requests with a 2xx status (200 to 299).")
        fmt = ("one line `<total bytes> <ip>` (a single space) per client with at least one 2xx request, sorted by total "
               "from highest to lowest, ties by IP in ascending byte order; no header")
        files = {log_rel: "\n".join(lines) + "\n"}
        solution_py = ["from collections import Counter", "tot = Counter()", f"for line in open('/home/user/{log_rel}'):",
                       "    f = line.split()", "    if 200 <= int(f[-2]) <= 299:",
                       "        tot[f[0]] += 0 if f[-1] == '-' else int(f[-1])",
                       "text = ''.join(f'{b} {ip}\\n' for ip, b in sorted(tot.items(), key=lambda kv: (-kv[1], kv[0])))"]
        title = "Bytes served per client"
    elif variant == "hourly_errors":
        log_rel = f"{folder}/{pick(rng, ['app', 'worker', 'api'])}.log"
        times = _clock(rng, n, (60, 900))
        stamped = [(t, rng.choice(["INFO", "INFO", "WARN", "ERROR", "ERROR"])) for t in times]
        lines = [f"[{t:%Y-%m-%d %H:%M:%S}] {lv}: {pick(rng, ['task done', 'retrying', 'ERROR in payload ignored', 'timeout'])}"
                 for t, lv in stamped]
        hours = Counter(f"{t:%Y-%m-%d %H}:00" for t, lv in stamped if lv == "ERROR")
        expected = "".join(f"{h} {c}\n" for h, c in sorted(hours.items()))
        out_rel = f"{out_dir}/errors_per_hour.txt"
        what = (f"`/home/user/{log_rel}` has lines `[YYYY-MM-DD HH:MM:SS] <LEVEL>: <message>` in chronological order. "
                "Count the entries whose level is `ERROR` per clock hour.")
        fmt = ("one line `YYYY-MM-DD HH:00 <count>` per hour that has at least one `ERROR` entry, in chronological order "
               "(hours without errors are left out)")
        files = {log_rel: "\n".join(lines) + "\n"}
        solution_py = ["from collections import Counter", "c = Counter()", f"for line in open('/home/user/{log_rel}'):",
                       "    stamp, rest = line[1:20], line[22:]", "    if rest.startswith('ERROR:'):",
                       "        c[stamp[:13] + ':00'] += 1",
                       "text = ''.join(f'{h} {n}\\n' for h, n in sorted(c.items()))"]
        title = "Errors per hour"
    else:
        log_rel = f"{folder}/syslog"
        hosts = rng.sample(HOSTS, 3)
        msgs = [(t, rng.choice(hosts), rng.choice(PROGRAMS)) for t in times]
        lines = []
        for t, h, p in msgs:
            tag = "kernel:" if p == "kernel" else f"{p}[{rng.randint(100, 9999)}]:"
            lines.append(f"{t:%b} {t.day:2d} {t:%H:%M:%S} {h} {tag} {pick(rng, ['started', 'session opened', 'reload', 'link up'])}")
        per_program = Counter((h, p) for t, h, p in msgs)
        expected = "host,program,count\n" + "".join(f"{h},{p},{k}\n" for (h, p), k in sorted(per_program.items()))
        out_rel = f"{out_dir}/messages_by_program.csv"
        what = (f"`/home/user/{log_rel}` is a syslog file: `<Mon> <day> <HH:MM:SS> <host> <program>[<pid>]: <message>`, where "
                "the `[<pid>]` part may be missing (as in `kernel:`) and a one-digit day is padded with a space. "
                "Count the messages per host and program.")
        fmt = ("a CSV table with the header `host,program,count` and one row per (host, program) pair that occurs, "
               "sorted by host and then by program, both ascending; the program name is written without the pid and colon")
        files = {log_rel: "\n".join(lines) + "\n"}
        solution_py = ["import re", "from collections import Counter", "c = Counter()",
                       f"for line in open('/home/user/{log_rel}'):", "    f = line.split()",
                       "    c[(f[3], re.sub(r'(\\[\\d+\\])?:$', '', f[4]))] += 1",
                       "text = 'host,program,count\\n' + ''.join(f'{h},{p},{k}\\n' for (h, p), k in sorted(c.items()))"]
        title = "Messages per host and program"

    intro_out = pick(rng, ["Write the result to", "Save the summary as", "Produce"])
    text = (what + "\n\n" + f"{intro_out} `/home/user/{out_rel}` (create the directory if needed): {fmt}. "
            "Every line ends with a newline; no blank lines, no extra spaces." + extra_note + "\n\nDo not modify the log.\n")
    solution = (f"mkdir -p /home/user/{out_dir}\npython3 - <<'PY'\n" + "\n".join(solution_py)
                + f"\nwith open('/home/user/{out_rel}', 'w') as fh:\n    fh.write(text)\nPY\n")
    exp_lines = expected.splitlines()
    has_header = not (variant in ("bytes_by_ip", "hourly_errors"))
    constants = [("OUT", f"/home/user/{out_rel}"), ("EXPECTED", exp_lines), ("HAS_HEADER", has_header),
                 ("INPUT_SHA256", input_hashes(files, [log_rel]))]
    body = '''
    def _lines():
        path = Path(OUT)
        assert path.is_file(), f"{OUT} does not exist"
        return path.read_text().splitlines()


    def test_header_or_first_row():
        lines = _lines()
        assert lines, "the output is empty"
        if HAS_HEADER:
            assert lines[0] == EXPECTED[0], f"header: {lines[0]!r}"


    def test_same_rows_in_any_order():
        data = EXPECTED[1:] if HAS_HEADER else EXPECTED
        got = _lines()[1:] if HAS_HEADER else _lines()
        assert sorted(got) == sorted(data), "the aggregated values differ"


    def test_row_order():
        assert _lines() == EXPECTED


    def test_exact_file():
        assert Path(OUT).read_text() == "".join(line + "\\n" for line in EXPECTED)
    '''
    tests = test_module(task_id, ["import hashlib", "from pathlib import Path"], constants, body, INPUT_UNCHANGED_TEST)
    return TaskSpec(task_id=task_id, title=title, difficulty="medium", category=CATEGORY,
                    tags=["logs", "aggregation", variant.replace("_", "-"), "generated"], inputs=[log_rel],
                    requires=["bash", "python3"], instruction=text, solution=solution, tests=tests, files=files)
