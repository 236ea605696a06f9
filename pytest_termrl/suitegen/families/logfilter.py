"""Log filtering: copy the entries of a log that match a rule, verbatim and in order."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from typing import NotRequired, TypedDict

from ..common import COMPONENTS, INPUT_UNCHANGED_TEST, TaskSpec, input_hashes, pick, test_module

FAMILY = "logfilter"
CATEGORY = "logs"
VARIANTS = ("iso_component", "pylog_window", "jsonl_component", "access_status", "iso_window", "pylog_component",
            "jsonl_window", "access_prefix")

MESSAGES = ["request served", "job started", "job finished", "cache warmed", "user logged in",
            "connection refused", "timeout after 30s", "upstream returned 502", "slow query took 1200ms",
            "retrying after ERROR from upstream", "disk usage at 91%", "invalid token", "payload size 512",
            "WARN threshold reached", "config reloaded", "FATAL: nothing, just a word in a message"]
SIMILAR = {"auth": "authz", "api": "api-gw", "db": "db-replica", "cache": "cache2", "mailer": "mailer-old",
           "search": "search-ui", "billing": "billing-v1", "queue": "queue-dlq", "storage": "storage-s3",
           "metrics": "metrics-push", "gateway": "gateway-int", "payments": "payments-eu",
           "scheduler": "scheduler-lite", "reports": "reports-pdf", "indexer": "indexer2", "notifier": "notifier-sms"}
LEVELS = ["DEBUG", "INFO", "INFO", "INFO", "WARN", "ERROR", "ERROR", "FATAL"]
SEVERE = ("WARN", "ERROR", "FATAL")
PATHS = ["/api/orders", "/api/users", "/api/cart", "/static/app.js", "/health", "/login", "/api/search",
         "/admin/stats", "/apiary/info", "/api-docs"]


class _Record(TypedDict):
    """One log entry before formatting: an access-log request (status, path, method, ip, bytes) or an
    application entry (level, comp, msg; level_out is the level as written in a JSONL log)."""

    t: datetime
    status: NotRequired[int]
    path: NotRequired[str]
    method: NotRequired[str]
    ip: NotRequired[str]
    bytes: NotRequired[int]
    level: NotRequired[str]
    comp: NotRequired[str]
    msg: NotRequired[str]
    level_out: NotRequired[str]


def _times(rng: random.Random, n: int) -> list[datetime]:
    t = datetime(2024, rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 20), rng.randint(0, 59), rng.randint(0, 59))
    out = []
    for _ in range(n):
        t += timedelta(seconds=rng.randint(5, 140))
        out.append(t)
    # A few late-arriving entries: order in the file is not chronological everywhere.
    for _ in range(3):
        i = rng.randrange(2, n - 2)
        out[i], out[i + 1] = out[i + 1], out[i]
    return out


def _fmt_time(fmt: str, t: datetime, rng: random.Random) -> str:
    if fmt == "iso":
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")
    if fmt == "pylog":
        return t.strftime("%Y-%m-%d %H:%M:%S") + f",{rng.randint(0, 999):03d}"
    if fmt == "jsonl":
        return t.strftime("%Y-%m-%dT%H:%M:%S")
    return t.strftime("%d/%b/%Y:%H:%M:%S +0000")


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    variant = VARIANTS[index % len(VARIANTS)]
    fmt, rule = variant.split("_")
    n = rng.randint(45, 70)
    times = _times(rng, n)
    comps = rng.sample([c for c in COMPONENTS if c in SIMILAR], 5)
    target = comps[0]
    twin = SIMILAR[target]
    pool = comps + [twin]
    folder = pick(rng, ["logs", "var/log", "srv/logs", "app/logs", "incoming/logs"])
    base = pick(rng, ["service", "app", "backend", "worker", "platform"])
    ext = {"iso": ".log", "pylog": ".log", "jsonl": ".jsonl", "access": ".log"}[fmt]
    log_name = ("access" if fmt == "access" else base) + ext
    log_rel = f"{folder}/{log_name}"
    out_dir = pick(rng, ["reports", "out", "triage", "incident"])

    records: list[_Record] = []
    for i, t in enumerate(times):
        if fmt == "access":
            status = rng.choice([200, 200, 200, 201, 204, 301, 304, 400, 401, 403, 404, 404, 500, 502, 503, 504])
            path = rng.choice(PATHS)
            records.append({"t": t, "status": status, "path": path, "method": rng.choice(["GET", "GET", "POST", "PUT", "DELETE"]),
                            "ip": f"10.{rng.randint(0, 9)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                            "bytes": rng.randint(0, 90000)})
        else:
            comp = target if rng.random() < 0.3 else rng.choice(pool)
            records.append({"t": t, "level": rng.choice(LEVELS), "comp": comp, "msg": rng.choice(MESSAGES)})

    # Rule parameters and traps.
    if rule == "window":
        ordered = sorted(records, key=lambda r: r["t"])
        lo_i = rng.randint(n // 5, n // 3)
        hi_i = rng.randint(lo_i + n // 4, lo_i + n // 2)
        t1, t2 = ordered[lo_i]["t"], ordered[hi_i]["t"]
        # Entries exactly on both edges, severe, so the edge rule matters.
        ordered[lo_i]["level"] = "ERROR"
        ordered[hi_i]["level"] = "ERROR"
    if fmt != "access":
        # Case trap: a lowercase level never matches; a severe word inside a message never counts.
        trap = records[rng.randrange(n)]
        trap["level"] = "error" if fmt != "jsonl" else "Error"
        trap["comp"] = target
        records[rng.randrange(n)].update({"level": "INFO", "comp": target, "msg": "ERROR budget recalculated"})
        records[rng.randrange(n)].update({"level": "ERROR", "comp": twin})

    if fmt == "iso":
        lines = [f"{_fmt_time(fmt, r['t'], rng)} {r['level']} [{r['comp']}] {r['msg']}" for r in records]
        shape = "`<timestamp> <LEVEL> [<component>] <message>`"
    elif fmt == "pylog":
        lines = [f"{_fmt_time(fmt, r['t'], rng)} {r['level']} {r['comp']} - {r['msg']}" for r in records]
        shape = "`<date> <time,milliseconds> <LEVEL> <component> - <message>`"
    elif fmt == "jsonl":
        lines = []
        for r in records:
            level = r["level"] if r["level"] != r["level"].upper() else r["level"].lower()
            r["level_out"] = level
            lines.append(json.dumps({"ts": _fmt_time(fmt, r["t"], rng), "level": level, "component": r["comp"], "msg": r["msg"]},
                                    separators=(",", ":")))
        shape = 'a single JSON object with the keys `ts`, `level`, `component` and `msg`'
    else:
        lines = [f'{r["ip"]} - - [{_fmt_time(fmt, r["t"], rng)}] "{r["method"]} {r["path"]} HTTP/1.1" {r["status"]} {r["bytes"]}'
                 for r in records]
        shape = 'in the common log format, `<ip> - - [<dd/Mon/yyyy:HH:MM:SS +0000>] "<METHOD> <path> HTTP/1.1" <status> <bytes>`'

    levels_wanted: list[str] = []
    if fmt == "access":
        if rule == "status":
            floor = pick(rng, [500, 400])
            match = [r["status"] >= floor for r in records]
            rule_text = f"the status code is {floor} or greater"
            out_name = "server_errors.log" if floor == 500 else "failed_requests.log"
        else:
            prefix = "/api/"
            match = [400 <= r["status"] <= 499 and r["path"].startswith(prefix) for r in records]
            rule_text = (f"the status code is in the 4xx range (400 to 499) and the request path starts with `{prefix}` "
                         "(with the trailing slash, so `/apiary/info` or `/api-docs` do not count)")
            out_name = "api_client_errors.log"
    elif rule == "component":
        levels_wanted = sorted(rng.sample(SEVERE, rng.choice([1, 2, 2, 3])), key=SEVERE.index)
        if fmt == "jsonl":
            levels_wanted = [lv.lower() for lv in levels_wanted]
        match = [r.get("level_out", r["level"]) in levels_wanted and r["comp"] == target for r in records]
        quoted = ", ".join(f"`{lv}`" for lv in levels_wanted)
        rule_text = (f"the component is exactly `{target}` (not `{twin}` or any other name that merely starts with it) "
                     f"and the level is one of {quoted}, compared case-sensitively")
        out_name = f"{target}_{'_'.join(lv.lower() for lv in levels_wanted)}.log"
    else:
        sev = SEVERE if fmt != "jsonl" else tuple(s.lower() for s in SEVERE)
        match = [t1 <= r["t"] < t2 and r.get("level_out", r["level"]) in sev for r in records]
        stamp = {"iso": "%Y-%m-%dT%H:%M:%SZ", "pylog": "%Y-%m-%d %H:%M:%S", "jsonl": "%Y-%m-%dT%H:%M:%S"}[fmt]
        ts1, ts2 = t1.strftime(stamp), t2.strftime(stamp)
        quoted = ", ".join(f"`{s}`" for s in sev)
        rule_text = (f"the timestamp is at or after `{ts1}` and strictly before `{ts2}` (entries are not "
                     f"strictly in chronological order, so compare every timestamp) and the level is one of {quoted} "
                     "(exactly, case-sensitively)")
        out_name = "incident_window.log"
    if fmt == "pylog" and rule == "window":
        rule_text += "; ignore the milliseconds when comparing"

    expected = [line for line, m in zip(lines, match) if m]
    assert 2 <= len(expected) < n - 5, (task_id, len(expected))
    log_text = "\n".join(lines) + "\n"
    out_rel = f"{out_dir}/{out_name}"
    with_count = rng.random() < 0.5
    count_rel = f"{out_dir}/{pick(rng, ['count.txt', 'matches.txt', 'summary.txt'])}"
    count_text = f"{len(expected)}\n"

    intro = pick(rng, [
        f"`/home/user/{log_rel}` is the {pick(rng, ['service', 'application', 'server'])} log; each line is {shape}.",
        f"The log file `/home/user/{log_rel}` has one entry per line, written as {shape}.",
        f"Entries in `/home/user/{log_rel}` follow this layout: {shape}.",
    ])
    ask = pick(rng, [
        f"Copy every entry for which {rule_text} into `/home/user/{out_rel}`",
        f"Extract the lines where {rule_text}, and write them to `/home/user/{out_rel}`",
        f"Select each entry such that {rule_text}; save them in `/home/user/{out_rel}`",
    ])
    text = intro + "\n\n" + ask + (
        f" (create `/home/user/{out_dir}` if it does not exist). Keep each selected line byte for byte as it is in the log, "
        "in the order the lines appear in the log, one per line, and end the file with a single newline.\n")
    if with_count:
        text += (f"\nAlso write the number of selected lines, as a bare decimal number followed by a newline, "
                 f"to `/home/user/{count_rel}`.\n")
    text += "\nDo not modify the log file.\n"

    py = ["import json, sys", f"src = '/home/user/{log_rel}'", "keep = []", "with open(src) as fh:", "    for line in fh:",
          "        line = line.rstrip('\\n')"]
    if fmt == "access":
        py += ["        f = line.split()", "        status, path = int(f[8]), f[6]"]
        if rule == "status":
            py += [f"        if status >= {floor}:", "            keep.append(line)"]
        else:
            py += ["        if 400 <= status <= 499 and path.startswith('/api/'):", "            keep.append(line)"]
    elif fmt == "jsonl":
        py += ["        r = json.loads(line)"]
        if rule == "component":
            py += [f"        if r['component'] == {target!r} and r['level'] in {levels_wanted!r}:", "            keep.append(line)"]
        else:
            py += [f"        if {ts1!r} <= r['ts'] < {ts2!r} and r['level'] in {list(sev)!r}:",
                   "            keep.append(line)"]
    elif fmt == "iso":
        py += ["        ts, level, comp = line.split(' ', 3)[:3]", "        comp = comp.strip('[]')"]
        if rule == "component":
            py += [f"        if comp == {target!r} and level in {levels_wanted!r}:", "            keep.append(line)"]
        else:
            py += [f"        if {ts1!r} <= ts < {ts2!r} and level in {list(sev)!r}:",
                   "            keep.append(line)"]
    else:
        py += ["        d, tm, level, comp = line.split(' ', 4)[:4]", "        ts = d + ' ' + tm.split(',')[0]"]
        if rule == "component":
            py += [f"        if comp == {target!r} and level in {levels_wanted!r}:", "            keep.append(line)"]
        else:
            py += [f"        if {ts1!r} <= ts < {ts2!r} and level in {list(sev)!r}:", "            keep.append(line)"]
    py += [f"with open('/home/user/{out_rel}', 'w') as out:", "    out.write(''.join(l + '\\n' for l in keep))"]
    if with_count:
        py += [f"with open('/home/user/{count_rel}', 'w') as out:", "    out.write(f'{len(keep)}\\n')"]
    solution = f"mkdir -p /home/user/{out_dir}\npython3 - <<'PY'\n" + "\n".join(py) + "\nPY\n"
    if fmt == "iso" and rule == "component" and rng.random() < 0.6:
        # An awk variant of the same reference, for variety.
        conds = " || ".join(f'$2 == "{lv}"' for lv in levels_wanted)
        solution = (f"mkdir -p /home/user/{out_dir}\n"
                    f"awk '$3 == \"[{target}]\" && ({conds})' /home/user/{log_rel} > /home/user/{out_rel}\n")
        if with_count:
            solution += f"wc -l < /home/user/{out_rel} | tr -d ' ' > /home/user/{count_rel}\n"

    if fmt == "access":
        near = [(r["status"] >= 400 and r["path"].startswith("/api")) for r in records]
    else:
        near = [twin in line or "ERROR budget" in line or " error " in line or '"Error"' in line for line in lines]
    non_matching_traps = [line for line, m, x in zip(lines, match, near) if not m and x]
    constants: list[tuple[str, object]] = [("OUT", f"/home/user/{out_rel}"), ("EXPECTED", expected), ("TRAPS", non_matching_traps[:6])]
    body = '''
    def _text():
        path = Path(OUT)
        assert path.is_file(), f"{OUT} does not exist"
        return path.read_text()


    def test_output_ends_with_single_newline():
        text = _text()
        assert text, "the output is empty"
        assert text.endswith("\\n") and not text.endswith("\\n\\n")


    def test_selected_lines():
        got = _text().splitlines()
        missing = [line for line in EXPECTED if line not in got]
        extra = [line for line in got if line not in EXPECTED]
        assert not missing, f"{len(missing)} matching line(s) missing, e.g. {missing[:2]}"
        assert not extra, f"{len(extra)} line(s) that do not match, e.g. {extra[:2]}"


    def test_traps_not_selected():
        got = set(_text().splitlines())
        assert not [line for line in TRAPS if line in got]


    def test_order_and_exact_content():
        assert _text() == "".join(line + "\\n" for line in EXPECTED)
    '''
    if with_count:
        constants += [("COUNT_FILE", f"/home/user/{count_rel}"), ("COUNT_TEXT", count_text)]
        count_body = '''
    def test_count_file():
        path = Path(COUNT_FILE)
        assert path.is_file(), f"{COUNT_FILE} does not exist"
        assert path.read_text() == COUNT_TEXT
    '''
    files = {log_rel: log_text}
    constants.append(("INPUT_SHA256", input_hashes(files, [log_rel])))
    tests = test_module(task_id, ["import hashlib", "from pathlib import Path"], constants, body,
                        count_body if with_count else "", INPUT_UNCHANGED_TEST)
    title = {"component": f"Filter {target} entries by level", "window": "Extract severe entries in a time window",
             "status": "Extract failed requests from an access log", "prefix": "Extract API client errors"}[rule]
    return TaskSpec(
        task_id=task_id, title=title, difficulty="easy" if rule in ("component", "status") else "medium",
        category=CATEGORY, tags=["logs", "filter", fmt, "generated"], inputs=[log_rel],
        requires=["bash", "python3"] if "awk" not in solution else ["bash", "awk"],
        instruction=text, solution=solution, tests=tests, files=files)
