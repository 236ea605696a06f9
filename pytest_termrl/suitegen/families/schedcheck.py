"""Cron and systemd-like configuration validation: report per entry/unit and a cleaned or flagged copy."""

from __future__ import annotations

import random
import re

from ..common import INPUT_UNCHANGED_TEST, PROJECT_WORDS, TaskSpec, input_hashes, pick, test_module

FAMILY = "schedcheck"
CATEGORY = "config"
VARIANTS = ("cron", "systemd")

MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]
MACROS = ["@reboot", "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"]

VALID_CRON = ["*/5 * * * * {cmd}", "0 3 * * * {cmd} --nightly", "15 8-18/2 * * MON-FRI {cmd}", "0 0 1 JAN,JUL * {cmd}",
              "30 2 * * sun {cmd} --weekly", "@daily {cmd}", "@reboot {cmd} --warmup", "0,30 * 1-15 * * {cmd}",
              "59 23 31 12 7 {cmd}", "0 12 * mar-may 1 {cmd}", "@hourly {cmd} > /dev/null 2>&1", "*/10 6-22 * * * {cmd}",
              "5 4 * * 0 {cmd}", "0 */6 * * * {cmd}"]
INVALID_CRON = ["60 * * * * {cmd}", "* 24 * * * {cmd}", "0 0 0 * * {cmd}", "0 0 * 13 * {cmd}", "0 0 * * 8 {cmd}",
                "*/0 * * * * {cmd}", "0 5-2 * * * {cmd}", "0 0 * * MON-FOO {cmd}", "@every5m {cmd}",
                "* * * * {cmd}", "0 0 * * * ", "0 0 1 * MONDAY {cmd}", "1,,2 * * * * {cmd}", "0 0 * * SUN-SAT/0 {cmd}",
                "@daily", "0 0 1-31/x * * {cmd}", "0 0 * DEC-JAN * {cmd}"]


def _value(tok: str, field: int):
    if tok.isdigit():
        return int(tok)
    names = MONTHS if field == 3 else DAYS if field == 4 else None
    if names and tok.upper() in names:
        return names.index(tok.upper()) + (1 if field == 3 else 0)
    return None


def cron_entry_ok(line: str) -> bool:
    fields = line.split()
    if not fields:
        return False
    if fields[0].startswith("@"):
        return fields[0] in MACROS and len(fields) >= 2
    if len(fields) < 6:
        return False
    for i, field in enumerate(fields[:5]):
        lo, hi = RANGES[i]
        for item in field.split(","):
            base, _, step = item.partition("/")
            if "/" in item and (not step.isdigit() or int(step) < 1):
                return False
            if base == "*":
                continue
            a, dash, b = base.partition("-")
            va = _value(a, i)
            vb = _value(b, i) if dash else va
            if va is None or vb is None or not (lo <= va <= vb <= hi):
                return False
            if not dash and "/" in item:
                return False
    return True


ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")

TYPES = ["simple", "exec", "forking", "oneshot", "notify", "dbus", "idle"]
RESTARTS = ["no", "on-success", "on-failure", "on-abnormal", "on-watchdog", "on-abort", "always"]
CHECKS = [("NO_DESCRIPTION", "the `[Unit]` section has no `Description=` line with a non-empty value"),
          ("NO_EXECSTART", "the `[Service]` section has no `ExecStart=` line"),
          ("RELATIVE_EXECSTART", "the first word of the `ExecStart=` value is not an absolute path (does not start with `/`)"),
          ("BAD_TYPE", f"a `Type=` line in `[Service]` has a value other than {', '.join('`' + t + '`' for t in TYPES)}"),
          ("BAD_RESTART", f"a `Restart=` line in `[Service]` has a value other than {', '.join('`' + r + '`' for r in RESTARTS)}"),
          ("NO_WANTEDBY", "the `[Install]` section is missing or has no `WantedBy=` line"),
          ("BAD_WANTEDBY", "a `WantedBy=` value does not end in `.target`")]


def parse_unit(text: str) -> dict[str, list[tuple[str, str]]]:
    sections: dict[str, list[tuple[str, str]]] = {}
    cur = None
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith(("#", ";")):
            continue
        if s.startswith("[") and s.endswith("]"):
            cur = s[1:-1]
            sections.setdefault(cur, [])
        elif "=" in s and cur is not None:
            k, v = s.split("=", 1)
            sections[cur].append((k.strip(), v.strip()))
    return sections


def unit_status(text: str) -> str:
    sec = parse_unit(text)
    get = lambda s, k: [v for kk, v in sec.get(s, []) if kk == k]  # noqa: E731
    if not any(get("Unit", "Description")):
        return "NO_DESCRIPTION"
    ex = get("Service", "ExecStart")
    if not ex:
        return "NO_EXECSTART"
    if not ex[0].split()[0].lstrip("-@+!").startswith("/") if ex[0].split() else True:
        return "RELATIVE_EXECSTART"
    if any(v not in TYPES for v in get("Service", "Type")):
        return "BAD_TYPE"
    if any(v not in RESTARTS for v in get("Service", "Restart")):
        return "BAD_RESTART"
    wb = get("Install", "WantedBy")
    if not wb:
        return "NO_WANTEDBY"
    if any(not v.endswith(".target") for v in wb):
        return "BAD_WANTEDBY"
    return "OK"


def _unit(rng: random.Random, name: str, fault: str | None) -> str:
    desc = f"{name.title()} {pick(rng, ['worker', 'daemon', 'sync service', 'API'])}"
    typ = pick(rng, ["simple", "exec", "notify", "oneshot"])
    lines = ["[Unit]", f"Description={desc}", f"After={pick(rng, ['network.target', 'network-online.target'])}", "",
             "[Service]", f"Type={typ}", f"ExecStart=/usr/local/bin/{name} --config /etc/{name}.conf",
             f"Restart={pick(rng, ['on-failure', 'always', 'no'])}", f"User={name}", "", "[Install]",
             f"WantedBy={pick(rng, ['multi-user.target', 'default.target'])}"]
    if rng.random() < 0.4:
        lines.insert(1, f"# {name} unit, managed by ops")
    if fault == "NO_DESCRIPTION":
        lines = [l for l in lines if not l.startswith("Description=")] if rng.random() < 0.5 else \
            [("Description=" if l.startswith("Description=") else l) for l in lines]
    elif fault == "NO_EXECSTART":
        lines = [("#" + l if l.startswith("ExecStart=") else l) for l in lines]
    elif fault == "RELATIVE_EXECSTART":
        lines = [(f"ExecStart={name} --foreground" if l.startswith("ExecStart=") else l) for l in lines]
    elif fault == "BAD_TYPE":
        lines = [(f"Type={pick(rng, ['daemon', 'Simple', 'background'])}" if l.startswith("Type=") else l) for l in lines]
    elif fault == "BAD_RESTART":
        lines = [(f"Restart={pick(rng, ['sometimes', 'yes', 'on-crash'])}" if l.startswith("Restart=") else l) for l in lines]
    elif fault == "NO_WANTEDBY":
        lines = lines[:lines.index("[Install]") - 1] if rng.random() < 0.5 else [l for l in lines if not l.startswith("WantedBy=")]
    elif fault == "BAD_WANTEDBY":
        lines = [("WantedBy=multi-user" if l.startswith("WantedBy=") else l) for l in lines]
    elif fault == "TWO":
        lines = [(f"ExecStart={name}" if l.startswith("ExecStart=") else "Restart=maybe" if l.startswith("Restart=") else l)
                 for l in lines]
    return "\n".join(lines) + "\n"


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    variant = VARIANTS[index % len(VARIANTS)]
    files: dict[str, str] = {}
    if variant == "cron":
        folder = pick(rng, ["cron", "etc/cron.d", "ops/cron", "deploy/cron"])
        src = f"{folder}/{pick(rng, ['jobs.crontab', 'crontab.txt', 'app.cron'])}"
        cmds = [f"/opt/{w}/bin/{pick(rng, ['run', 'sync', 'report', 'cleanup'])}" for w in rng.sample(PROJECT_WORDS, 6)]
        valid = [v.format(cmd=rng.choice(cmds)) for v in rng.sample(VALID_CRON, rng.randint(6, 8))]
        invalid = [v.format(cmd=rng.choice(cmds)) for v in rng.sample(INVALID_CRON, rng.randint(6, 8))]
        entries = valid + invalid
        rng.shuffle(entries)
        lines = ["# crontab for " + pick(rng, PROJECT_WORDS), "SHELL=/bin/bash", f"MAILTO={pick(rng, ['ops', 'root', 'alerts'])}@example.com", ""]
        for i, e in enumerate(entries):
            if i and i % 5 == 0:
                lines += ["", pick(rng, ["# maintenance", "  # indented comment", "PATH=/usr/local/bin:/usr/bin:/bin"])]
            lines.append(e if rng.random() > 0.15 else "  " + e)
        content = "\n".join(lines) + "\n"
        files[src] = content
        flag = pick(rng, ["#INVALID# ", "# DISABLED: ", "#BAD "])
        report_fmt = pick(rng, ["{n} {s}", "line {n}: {s}", "{n}\t{s}"])
        ok_word, bad_word = pick(rng, [("OK", "INVALID"), ("valid", "invalid"), ("ok", "bad")])
        report, flagged, nv, ni = [], [], 0, 0
        for n, line in enumerate(lines, 1):
            s = line.strip()
            if not s or s.startswith("#") or ASSIGN.match(line):
                flagged.append(line)
                continue
            ok = cron_entry_ok(line)
            assert ok == (line.strip() in [v.strip() for v in valid]), (task_id, line)
            nv, ni = nv + ok, ni + (not ok)
            report.append(report_fmt.format(n=n, s=ok_word if ok else bad_word))
            flagged.append(line if ok else flag + line)
        report.append(f"{ok_word}: {nv}, {bad_word}: {ni}")
        report_rel = f"{folder}/{pick(rng, ['report.txt', 'check.txt', 'validation.txt'])}"
        flagged_rel = src + ".checked"
        example_line = report_fmt.format(n=7, s=ok_word).replace("\t", "<TAB>")
        shown_fmt = report_fmt.replace("{n}", "<line number>").replace("{s}", "<result>").replace("\t", "<TAB>")
        text = (f"Validate the crontab `/home/user/{src}` before it is installed.\n\n"
                "**Entries.** Blank lines, comment lines (first non-blank character `#`) and variable assignments (a line "
                "starting with a name of letters, digits and underscores, not starting with a digit, immediately followed "
                "by `=`) are not entries. Every other line is an entry.\n\n"
                "**Valid entries.** An entry is valid when, split on whitespace, either\n\n"
                f"- its first field is one of {', '.join('`' + m + '`' for m in MACROS)} and a command follows, or\n"
                "- it has five time fields followed by a command (at least one more field). Each time field is a "
                "comma-separated list of items `*`, `*/S`, `V`, `A-B` or `A-B/S`; `S` is a decimal number of at least 1; "
                "`V`, `A`, `B` are decimal numbers or, in the month field, the names `JAN`-`DEC` (1-12) and, in the "
                "day-of-week field, `SUN`-`SAT` (0-6), names in any letter case; `A` must not exceed `B`; ranges are minute "
                "0-59, hour 0-23, day of month 1-31, month 1-12, day of week 0-7. Anything else is invalid (a step on a "
                "single value like `5/2` too).\n\n"
                "**Outputs.**\n\n"
                f"1. `/home/user/{report_rel}`: one line per entry in file order, `{shown_fmt}` "
                f"(for example `{example_line}`{', with a tab character between the two' if chr(9) in report_fmt else ''}), where the result is `{ok_word}` or `{bad_word}` and the line number is "
                f"1-based in the crontab; then a final line `{ok_word}: <count>, {bad_word}: <count>`.\n"
                f"2. `/home/user/{flagged_rel}`: a copy of the crontab in which every invalid entry line is prefixed with "
                f"`{flag}` (exactly these characters, including the trailing space, before the original line with its "
                "leading whitespace). All other lines are copied byte for byte.\n\nEvery line ends with a newline. Do not "
                "modify the crontab.")
        py = ["import re", f"MACROS = {MACROS!r}", f"MONTHS = {MONTHS!r}", f"DAYS = {DAYS!r}", f"RANGES = {RANGES!r}",
              "def val(t, f):", "    if t.isdigit():", "        return int(t)",
              "    names = MONTHS if f == 3 else DAYS if f == 4 else []", "    if t.upper() in names:",
              "        return names.index(t.upper()) + (1 if f == 3 else 0)", "    return None",
              "def ok(line):", "    fs = line.split()", "    if fs[0].startswith('@'):", "        return fs[0] in MACROS and len(fs) > 1",
              "    if len(fs) < 6:", "        return False", "    for i, field in enumerate(fs[:5]):", "        lo, hi = RANGES[i]",
              "        for item in field.split(','):", "            m = re.fullmatch(r'([^/]+)(?:/(\\d+))?', item)",
              "            if not m or (m.group(2) is not None and int(m.group(2)) < 1):", "                return False",
              "            base = m.group(1)", "            if base == '*':", "                continue",
              "            if m.group(2) is not None and '-' not in base:", "                return False",
              "            a, _, b = base.partition('-')", "            va, vb = val(a, i), (val(b, i) if b else val(a, i))",
              "            if va is None or vb is None or not lo <= va <= vb <= hi:", "                return False",
              "            if '-' in base and not b:", "                return False", "    return True",
              f"lines = open('/home/user/{src}').read().split('\\n')[:-1]", "rep, out, nv, ni = [], [], 0, 0",
              "for n, line in enumerate(lines, 1):", "    s = line.strip()",
              "    if not s or s.startswith('#') or re.match(r'[A-Za-z_][A-Za-z0-9_]*=', line):", "        out.append(line)",
              "        continue", "    good = ok(line)", "    nv, ni = nv + good, ni + (not good)",
              f"    rep.append({report_fmt!r}.format(n=n, s={ok_word!r} if good else {bad_word!r}))",
              f"    out.append(line if good else {flag!r} + line)", f"rep.append(f'{ok_word}: {{nv}}, {bad_word}: {{ni}}')",
              f"open('/home/user/{report_rel}', 'w').write('\\n'.join(rep) + '\\n')",
              f"open('/home/user/{flagged_rel}', 'w').write('\\n'.join(out) + '\\n')"]
        outputs = {f"/home/user/{report_rel}": report, f"/home/user/{flagged_rel}": flagged}
        inputs = [src]
        title = "Validate a crontab and flag invalid entries"
    else:
        folder = pick(rng, ["units", "systemd", "deploy/units", "srv/systemd"])
        list_rel = f"{folder}/{pick(rng, ['units.list', 'INDEX', 'to-check.txt'])}"
        names = rng.sample(PROJECT_WORDS, rng.randint(7, 9))
        faults = [c for c, _ in CHECKS]
        rng.shuffle(faults)
        plan = faults[:rng.randint(4, 6)] + ["TWO"] + [None] * (len(names) - 7)
        plan = (plan + [None] * len(names))[:len(names)]
        rng.shuffle(plan)
        statuses = {}
        for name, fault in zip(names, plan):
            t = _unit(rng, name, fault)
            files[f"{folder}/{name}.service"] = t
            statuses[f"{name}.service"] = unit_status(t)
            want = "RELATIVE_EXECSTART" if fault == "TWO" else (fault or "OK")
            assert statuses[f"{name}.service"] == want, (task_id, name, fault, statuses[f"{name}.service"])
        listed = sorted(statuses)
        unlisted = names[-1] + ".service"
        listed.remove(unlisted)
        files[list_rel] = "".join(u + "\n" for u in listed)
        rule_lines = "\n".join(f"{i}. `{c}`: {d};" for i, (c, d) in enumerate(CHECKS, 1))
        report_rel = f"{pick(rng, ['reports', 'out', 'lint'])}/units.txt"
        report = [f"{u}: {statuses[u]}" for u in listed]
        report.append(f"checked: {len(listed)}, ok: {sum(statuses[u] == 'OK' for u in listed)}")
        text = (f"`/home/user/{list_rel}` names, one per line, the systemd service units in `/home/user/{folder}` to check "
                "before deployment (other unit files in that folder are not checked).\n\n"
                "A unit file has `[Section]` headers and `Key=Value` lines; blank lines and lines starting with `#` or `;` are "
                "ignored, and surrounding whitespace of keys and values does not matter. Check each listed unit against these "
                "rules, in this order, and report the code of the **first** rule it breaks:\n\n"
                f"{rule_lines}\n\n"
                "(For rule 3, a leading `-`, `@`, `+` or `!` prefix of the executable is ignored.) A unit that breaks no rule "
                "is `OK`.\n\n"
                f"Write `/home/user/{report_rel}` (create the directory if needed): one line `<unit file name>: <code or OK>` per "
                "listed unit, in the order of the list, then a final line `checked: <N>, ok: <number OK>`. Every line ends "
                "with a newline.\n\nDo not modify the unit files or the list.")
        py = ["import os", f"TYPES = {TYPES!r}", f"RESTARTS = {RESTARTS!r}", "def parse(path):", "    sec, cur = {}, None",
              "    for line in open(path):", "        s = line.strip()", "        if not s or s[0] in '#;':", "            continue",
              "        if s[0] == '[' and s[-1] == ']':", "            cur = s[1:-1]", "            sec.setdefault(cur, [])",
              "        elif '=' in s and cur:", "            k, v = s.split('=', 1)", "            sec[cur].append((k.strip(), v.strip()))",
              "    return sec", "def check(path):", "    sec = parse(path)",
              "    get = lambda s, k: [v for kk, v in sec.get(s, []) if kk == k]",
              "    if not any(get('Unit', 'Description')):", "        return 'NO_DESCRIPTION'", "    ex = get('Service', 'ExecStart')",
              "    if not ex:", "        return 'NO_EXECSTART'", "    if not ex[0].split() or not ex[0].split()[0].lstrip('-@+!').startswith('/'):",
              "        return 'RELATIVE_EXECSTART'", "    if any(v not in TYPES for v in get('Service', 'Type')):", "        return 'BAD_TYPE'",
              "    if any(v not in RESTARTS for v in get('Service', 'Restart')):", "        return 'BAD_RESTART'",
              "    wb = get('Install', 'WantedBy')", "    if not wb:", "        return 'NO_WANTEDBY'",
              "    if any(not v.endswith('.target') for v in wb):", "        return 'BAD_WANTEDBY'", "    return 'OK'",
              f"units = [l.strip() for l in open('/home/user/{list_rel}') if l.strip()]",
              f"res = [(u, check('/home/user/{folder}/' + u)) for u in units]",
              "out = [f'{u}: {s}' for u, s in res] + [f\"checked: {len(res)}, ok: {sum(s == 'OK' for _, s in res)}\"]",
              f"os.makedirs('/home/user/{report_rel.rsplit('/', 1)[0]}', exist_ok=True)",
              f"open('/home/user/{report_rel}', 'w').write('\\n'.join(out) + '\\n')"]
        outputs = {f"/home/user/{report_rel}": report}
        inputs = [list_rel]
        title = "Lint systemd service units"
    solution = "python3 - <<'PY'\n" + "\n".join(py) + "\nPY\n"
    constants = [("OUTPUTS", outputs), ("INPUT_SHA256", input_hashes(files, inputs))]
    body = '''
    def _lines(path):
        p = Path(path)
        assert p.is_file(), f"{path} does not exist"
        return p.read_text().splitlines()


    def test_outputs_exist_and_not_empty():
        for path in OUTPUTS:
            assert _lines(path), f"{path} is empty"


    def test_verdicts_per_entry():
        report = next(iter(OUTPUTS))
        want, got = OUTPUTS[report][:-1], _lines(report)[:-1]
        wrong = [w for w in want if w not in got]
        assert not wrong, f"wrong or missing verdicts: {wrong[:4]}"


    def test_summary_line():
        report = next(iter(OUTPUTS))
        assert _lines(report)[-1:] == OUTPUTS[report][-1:]


    def test_exact_outputs():
        for path, lines in OUTPUTS.items():
            assert Path(path).read_text() == "".join(line + "\\n" for line in lines), f"{path} differs"
    '''
    tests = test_module(task_id, ["import hashlib", "from pathlib import Path"], constants, body, INPUT_UNCHANGED_TEST)
    return TaskSpec(task_id=task_id, title=title, difficulty="hard", category=CATEGORY,
                    tags=["config", variant, "validation", "generated"], inputs=inputs, requires=["bash", "python3"],
                    instruction=text, solution=solution, tests=tests, files=files)
