"""Config-file edits: INI change lists, .env overrides, sshd-style hardening, YAML overrides."""

from __future__ import annotations

import random

from ..common import INPUT_UNCHANGED_TEST, PROJECT_WORDS, TaskSpec, input_hashes, pick, sha256, test_module

FAMILY = "confedit"
CATEGORY = "config"
VARIANTS = ("ini_changes", "env_override", "sshd_harden", "yaml_override")

INI_SECTIONS = {
    "server": [("host", "0.0.0.0"), ("port", "8080"), ("port_admin", "8081"), ("workers", "4"), ("debug", "true")],
    "database": [("host", "db.internal"), ("port", "5432"), ("name", "app"), ("pool_size", "10")],
    "replica": [("host", "db-replica.internal"), ("port", "5432")],
    "logging": [("level", "DEBUG"), ("file", "/var/log/app.log"), ("rotate", "daily")],
    "mail": [("relay", "smtp.internal"), ("port", "25"), ("from", "noreply@example.com")],
    "cache": [("backend", "redis"), ("ttl", "60")],
}
NEW_VALUES = {"port": ["5433", "9090", "8443", "6432"], "debug": ["false"], "workers": ["8", "16"], "level": ["INFO", "WARNING"],
              "pool_size": ["20", "32"], "ttl": ["300", "900"], "rotate": ["weekly"], "relay": ["smtp.example.net"],
              "host": ["10.0.0.5", "db2.internal"], "name": ["app_prod"], "file": ["/srv/log/app.log"],
              "backend": ["memcached"], "from": ["alerts@example.com"], "port_admin": ["9091"]}
ADDS = [("timeout", "30"), ("retries", "3"), ("tls", "on"), ("max_body", "10m"), ("keepalive", "75")]


def _ini_render(sections) -> str:
    out = ["; service configuration", "; edit with care", ""]
    for i, (name, entries) in enumerate(sections):
        out.append(f"[{name}]")
        for kind, a, b in entries:
            out.append(f"{a} = {b}" if kind == "kv" else a)
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _ini(rng: random.Random, folder: str):
    names = rng.sample(list(INI_SECTIONS), 4)
    if "database" in names and "replica" not in names:
        names[-1] = "replica"
    sections = []
    for name in names:
        entries: list[tuple[str, str, str | None]] = [("kv", k, v) for k, v in INI_SECTIONS[name]]
        if rng.random() < 0.5:
            entries.insert(rng.randrange(1, len(entries)), ("comment", f"; {pick(rng, ['tuned in March', 'see runbook', 'do not lower'])}", None))
        sections.append((name, entries))
    ops = []
    used = set()
    for _ in range(rng.randint(2, 3)):
        sec = rng.choice(sections)
        kvs = [e for e in sec[1] if e[0] == "kv" and e[1] in NEW_VALUES and (sec[0], e[1]) not in used]
        if not kvs:
            continue
        e = rng.choice(kvs)
        used.add((sec[0], e[1]))
        ops.append(("set", sec[0], e[1], pick(rng, [v for v in NEW_VALUES[e[1]] if v != e[2]] or ["1"])))
    sec = rng.choice(sections)
    kvs = [e for e in sec[1] if e[0] == "kv" and (sec[0], e[1]) not in used]
    ops.append(("del", sec[0], kvs[-1][1], None))
    used.add((sec[0], kvs[-1][1]))
    sec = rng.choice(sections)
    k, v = rng.choice(ADDS)
    ops.append(("add", sec[0], k, v))
    rng.shuffle(ops)
    before = _ini_render(sections)
    # Apply.
    after = {n: list(es) for n, es in sections}
    for op, s, k, v in ops:
        es = after[s]
        if op == "set":
            after[s] = [("kv", a, v) if kind == "kv" and a == k else (kind, a, b) for kind, a, b in es]
        elif op == "del":
            after[s] = [(kind, a, b) for kind, a, b in es if not (kind == "kv" and a == k)]
        else:
            last = max(i for i, (kind, _a, _b) in enumerate(es) if kind == "kv")
            after[s] = es[:last + 1] + [("kv", k, v)] + es[last + 1:]
    expected = _ini_render([(n, after[n]) for n, _ in sections])
    lines = []
    for op, s, k, v in ops:
        lines.append(f"set {s}.{k} {v}" if op == "set" else f"delete {s}.{k}" if op == "del" else f"add {s}.{k} {v}")
    return before, expected, "\n".join(["# change request " + pick(rng, ["CR-1042", "CR-2210", "OPS-77"])] + lines) + "\n"


ENV_KEYS = [("APP_NAME", "{proj}"), ("APP_ENV", "development"), ("APP_DEBUG", "true"), ("APP_PORT", "3000"),
            ("DB_HOST", "localhost"), ("DB_PORT", "5432"), ("DB_NAME", "{proj}_dev"), ("CACHE_URL", "redis://localhost:6379/0"),
            ("LOG_LEVEL", "debug"), ("SENTRY_DSN", ""), ("FEATURE_BETA", "on"), ("DB_PORT_REPLICA", "5433")]


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    variant = VARIANTS[index % len(VARIANTS)]
    proj = pick(rng, PROJECT_WORDS)
    files: dict[str, str] = {}
    checks: list[tuple[str, str]] = []
    if variant == "ini_changes":
        folder = pick(rng, ["app", f"{proj}", f"srv/{proj}", "etc/app"])
        target = f"{folder}/{pick(rng, ['settings.ini', 'config.ini', 'service.ini'])}"
        changes = f"{folder}/{pick(rng, ['changes.txt', 'change-request.txt', 'edits.txt'])}"
        before, expected, req = _ini(rng, folder)
        files = {target: before, changes: req}
        inputs = [changes]
        out_rel = target
        text = (f"`/home/user/{changes}` is a change request for the INI file `/home/user/{target}`. Apply it to that file, "
                "in place. Each non-comment line of the request is one of:\n\n"
                "- `set <section>.<key> <value>`: change the value of that key in that section;\n"
                "- `delete <section>.<key>`: remove that key's line from that section;\n"
                "- `add <section>.<key> <value>`: add a new line `<key> = <value>` right after the last `key = value` line "
                "of that section.\n\n"
                "Lines starting with `#` in the request are comments. Only the named section is affected (other sections may "
                "have keys of the same name, and keys such as `port_admin` are not `port`). Keep every other line of the INI "
                "file exactly as it is, including comments, blank lines and the `key = value` spacing.\n\n"
                "Do not modify the change request.")
        py = ["import re", f"path = '/home/user/{target}'", "lines = open(path).read().split('\\n')[:-1]",
              f"for req in open('/home/user/{changes}'):", "    req = req.strip()",
              "    if not req or req.startswith('#'):", "        continue", "    op, ref, *val = req.split(' ', 2)",
              "    sec, key = ref.split('.', 1)", "    cur, last_kv, hits = None, None, []",
              "    for i, line in enumerate(lines):", "        m = re.fullmatch(r'\\[(.+)\\]', line)",
              "        if m:", "            cur = m.group(1)", "            continue",
              "        if cur == sec and ' = ' in line and not line.startswith(';'):", "            last_kv = i",
              "            if line.split(' = ', 1)[0] == key:", "                hits.append(i)",
              "    if op == 'set':", "        for i in hits:", "            lines[i] = f'{key} = {val[0]}'",
              "    elif op == 'delete':", "        for i in reversed(hits):", "            del lines[i]",
              "    else:", "        lines.insert(last_kv + 1, f'{key} = {val[0]}')",
              "open(path, 'w').write('\\n'.join(lines) + '\\n')"]
        title = "Apply a change request to an INI file"
        for line in expected.splitlines():
            pass
    elif variant == "env_override":
        folder = pick(rng, ["deploy", f"{proj}/config", "ops/env", "srv/env"])
        src = f"{folder}/{pick(rng, ['app.env', '.env.example', 'base.env'])}"
        env_name = pick(rng, ["prod", "staging", "production"])
        out_rel = f"{folder}/{env_name}.env"
        keys = [(k, v.format(proj=proj)) for k, v in ENV_KEYS if rng.random() < 0.85 or k in ("DB_PORT", "DB_PORT_REPLICA")]
        lines = [f"# {proj} environment", ""]
        for i, (k, v) in enumerate(keys):
            if i and i % 4 == 0:
                lines += ["", f"# {pick(rng, ['database', 'runtime', 'observability', 'features'])}"]
            lines.append(f"{k}={v}")
        before = "\n".join(lines) + "\n"
        present = [k for k, _ in keys]
        sets = rng.sample([k for k in present if k not in ("APP_NAME",)], 3)
        if "DB_PORT" not in sets:
            sets[0] = "DB_PORT"
        newvals = {"APP_ENV": env_name, "APP_DEBUG": "false", "APP_PORT": "8080", "DB_HOST": f"db.{env_name}.internal",
                   "DB_PORT": "6432", "DB_NAME": proj, "CACHE_URL": f"redis://cache.{env_name}.internal:6379/0",
                   "LOG_LEVEL": "warning", "SENTRY_DSN": f"https://key@sentry.example.com/{rng.randint(2, 99)}",
                   "FEATURE_BETA": "off", "DB_PORT_REPLICA": "6433"}
        removes = [rng.choice([k for k in present if k not in sets and k != "APP_NAME" and k != "DB_PORT_REPLICA"])]
        adds = rng.sample([("TZ", "UTC"), ("WORKERS", str(rng.randint(2, 12))), ("READ_ONLY", "0"), ("REGION", "eu-west-1")], 2)
        out_lines = []
        for line in lines:
            key = line.split("=", 1)[0] if "=" in line and not line.startswith("#") else None
            if key in removes:
                continue
            out_lines.append(f"{key}={newvals[key]}" if key in sets else line)
        out_lines += [f"{k}={v}" for k, v in adds]
        expected = "\n".join(out_lines) + "\n"
        files = {src: before}
        inputs = [src]
        bullets = "\n".join([f"- set `{k}` to `{newvals[k]}`;" for k in sets] + [f"- remove `{k}` entirely;" for k in removes]
                            + [f"- add `{k}={v}`;" for k, v in adds])
        text = (f"`/home/user/{src}` holds `KEY=value` settings, comments (`#`) and blank lines. Create "
                f"`/home/user/{out_rel}`, a copy of it with these changes for the {env_name} environment:\n\n{bullets}\n\n"
                "Changed keys stay on their line, in place; added keys go at the very end of the file, in the order "
                "listed, one per line. Everything else (comments, blank lines, order, other keys such as "
                "`DB_PORT_REPLICA`) stays exactly as in the original. The file ends with a single newline.\n\n"
                f"Do not modify `/home/user/{src}`.")
        sed = " ".join([f"-e 's|^{k}=.*|{k}={newvals[k]}|'" for k in sets] + [f"-e '/^{k}=/d'" for k in removes])
        appends = "".join(f"{k}={v}\\n" for k, v in adds)
        py = None
        shell = f"sed {sed} /home/user/{src} > /home/user/{out_rel}\nprintf '{appends}' >> /home/user/{out_rel}\n"
        title = f"Derive a {env_name} env file"
    elif variant == "sshd_harden":
        folder = pick(rng, ["etc/ssh", "config/ssh", "hardening"])
        src = f"{folder}/sshd_config"
        out_rel = f"{folder}/sshd_config.hardened"
        global_lines = ["# OpenSSH server configuration", "", "Port 22", "#AddressFamily any", "#ListenAddress 0.0.0.0", "",
                        "#PermitRootLogin prohibit-password", "#MaxAuthTries 6", "PubkeyAuthentication yes",
                        "PasswordAuthentication yes", "#PermitEmptyPasswords no", "", "X11Forwarding yes",
                        "PrintMotd no", "AcceptEnv LANG LC_*", "Subsystem sftp /usr/lib/openssh/sftp-server"]
        if rng.random() < 0.5:
            global_lines.insert(13, "PasswordAuthentication no")  # a later duplicate
        match = ["", "Match User backup", "    PasswordAuthentication yes", "    X11Forwarding no"]
        before_lines = global_lines + match
        wanted = rng.sample([("PermitRootLogin", "no"), ("PasswordAuthentication", "no"), ("X11Forwarding", "no"),
                             ("MaxAuthTries", "3"), ("ClientAliveInterval", "300"), ("AllowAgentForwarding", "no"),
                             ("Port", str(rng.choice([2222, 2200, 22022])))], 4)
        if not any(d == "PasswordAuthentication" for d, _ in wanted):
            wanted[0] = ("PasswordAuthentication", "no")
        cut = before_lines.index("Match User backup") - 1
        g = list(before_lines[:cut])
        for d, v in wanted:
            active = [i for i, line in enumerate(g) if line.split(" ", 1)[0] == d]
            commented = [i for i, line in enumerate(g) if line.startswith("#" + d + " ")]
            if active:
                g[active[0]] = f"{d} {v}"
                for i in reversed(active[1:]):
                    del g[i]
            elif commented:
                g[commented[0]] = f"{d} {v}"
            else:
                g.append(f"{d} {v}")
        expected = "\n".join(g + before_lines[cut:]) + "\n"
        files = {src: "\n".join(before_lines) + "\n"}
        inputs = [src]
        bullets = "\n".join(f"- `{d} {v}`" for d, v in wanted)
        text = (f"`/home/user/{src}` is an OpenSSH server configuration. Write a hardened copy to `/home/user/{out_rel}` that "
                f"sets these directives:\n\n{bullets}\n\n"
                "Rules, applied to the global part of the file only (the lines before the first `Match` line; the `Match` "
                "block at the end is copied unchanged):\n\n"
                "1. If the directive has active (uncommented) lines, replace the first one with `<Directive> <value>` and "
                "remove the other active lines of that directive.\n"
                "2. Otherwise, if there is a commented-out line `#<Directive> ...`, replace the first such line with "
                "`<Directive> <value>`.\n"
                "3. Otherwise, add `<Directive> <value>` as a new line at the end of the global part, i.e. right before the "
                "blank line that precedes `Match` (directives added in the order listed above).\n\n"
                "Directive names are matched exactly as written. Every other line stays byte for byte the same.\n\n"
                f"Do not modify `/home/user/{src}`.")
        py = [f"wanted = {wanted!r}", f"lines = open('/home/user/{src}').read().split('\\n')[:-1]",
              "cut = lines.index('Match User backup') - 1", "g, rest = lines[:cut], lines[cut:]",
              "for d, v in wanted:", "    active = [i for i, l in enumerate(g) if l.split(' ', 1)[0] == d]",
              "    commented = [i for i, l in enumerate(g) if l.startswith('#' + d + ' ')]",
              "    if active:", "        g[active[0]] = f'{d} {v}'", "        for i in reversed(active[1:]):",
              "            del g[i]", "    elif commented:", "        g[commented[0]] = f'{d} {v}'", "    else:",
              "        g.append(f'{d} {v}')", f"open('/home/user/{out_rel}', 'w').write('\\n'.join(g + rest) + '\\n')"]
        title = "Harden an sshd configuration"
    else:
        folder = pick(rng, ["config", f"{proj}/conf", "srv/app/config"])
        src = f"{folder}/{pick(rng, ['app.yaml', 'settings.yaml', 'service.yml'])}"
        env_name = pick(rng, ["production", "prod", "live"])
        out_rel = src.rsplit(".", 1)[0] + f".{env_name}." + src.rsplit(".", 1)[1]
        doc = [("server", [("host", "127.0.0.1"), ("port", "8080"), ("workers", "2")]),
               ("database", [("url", f"postgres://localhost/{proj}"), ("pool", "5"), ("timeout", "30")]),
               ("logging", [("level", "debug"), ("format", "text")]),
               ("features", [("signup", "true"), ("beta_ui", "true")])]
        rng.shuffle(doc)
        yaml_changes = rng.sample([("server", "host", "0.0.0.0"), ("server", "port", "443"), ("server", "workers", "8"),
                              ("database", "pool", "20"), ("logging", "level", "warn"), ("logging", "format", "json"),
                              ("features", "beta_ui", "false"), ("database", "url", f"postgres://db.internal/{proj}")], 3)
        new_sec = pick(rng, ["cache", "metrics", "tls"])
        new_keys = {"cache": [("backend", "redis"), ("ttl", "600")], "metrics": [("enabled", "true"), ("port", "9102")],
                    "tls": [("cert", "/etc/ssl/app.pem"), ("min_version", "1.2")]}[new_sec]

        def render(d, comment=True):
            out = [f"# {proj} settings"] if comment else []
            for s, kv in d:
                out.append(f"{s}:")
                out += [f"  {k}: {v}" for k, v in kv]
            return "\n".join(out) + "\n"
        before = render(doc)
        after = [(s, [(k, next((c[2] for c in yaml_changes if c[0] == s and c[1] == k), v)) for k, v in kv]) for s, kv in doc]
        after.append((new_sec, new_keys))
        expected = render(after)
        files = {src: before}
        inputs = [src]
        bullets = "\n".join(f"- `{s}.{k}` becomes `{v}`;" for s, k, v in yaml_changes)
        newtext = ", ".join(f"`{k}: {v}`" for k, v in new_keys)
        text = (f"`/home/user/{src}` is a small YAML file: top-level sections, each with `key: value` lines indented by two "
                f"spaces, and a comment on the first line. Write `/home/user/{out_rel}`, the {env_name} variant, which is "
                f"identical except that:\n\n{bullets}\n- a new section `{new_sec}:` is appended at the end with the keys "
                f"{newtext}, in that order, indented by two spaces like the others.\n\n"
                "Keep the original order of sections and keys, the comment and the formatting (no quotes added, no blank "
                "lines, no document markers). The file ends with a single newline.\n\n"
                f"Do not modify `/home/user/{src}`.")
        py = [f"changes = {{(s, k): v for s, k, v in {yaml_changes!r}}}", "out, sec = [], None",
              f"for line in open('/home/user/{src}').read().splitlines():",
              "    if line and not line.startswith((' ', '#')):", "        sec = line[:-1]",
              "    elif line.startswith('  '):", "        k = line.strip().split(':', 1)[0]",
              "        if (sec, k) in changes:", "            line = f'  {k}: {changes[(sec, k)]}'", "    out.append(line)",
              f"out.append('{new_sec}:')", *[f"out.append('  {k}: {v}')" for k, v in new_keys],
              f"open('/home/user/{out_rel}', 'w').write('\\n'.join(out) + '\\n')"]
        title = f"Write a {env_name} YAML override"
    if py is None:
        solution = shell
    else:
        solution = "python3 - <<'PY'\n" + "\n".join(py) + "\nPY\n"
    exp_lines = expected.splitlines()
    constants = [("OUT", f"/home/user/{out_rel}"), ("EXPECTED", exp_lines), ("BEFORE_SHA256", sha256(files.get(out_rel, "")) if out_rel in files else None),
                 ("INPUT_SHA256", input_hashes(files, inputs))]
    body = '''
    def _text():
        path = Path(OUT)
        assert path.is_file(), f"{OUT} does not exist"
        return path.read_text()


    def test_file_was_changed():
        text = _text()
        assert text, "the file is empty"
        assert hashlib.sha256(text.encode()).hexdigest() != BEFORE_SHA256, "the file still has its original content"


    def test_ends_with_single_newline():
        text = _text()
        assert text.endswith("\\n") and not text.endswith("\\n\\n")


    def test_changed_lines_present():
        got = _text().splitlines()
        missing = [line for line in EXPECTED if line not in got]
        assert not missing, f"expected lines missing: {missing[:3]}"


    def test_no_unexpected_lines():
        extra = [line for line in _text().splitlines() if line not in EXPECTED]
        assert not extra, f"unexpected lines: {extra[:3]}"


    def test_exact_content():
        assert _text().splitlines() == EXPECTED
        assert _text() == "".join(line + "\\n" for line in EXPECTED)
    '''
    tests = test_module(task_id, ["import hashlib", "from pathlib import Path"], constants, body, INPUT_UNCHANGED_TEST)
    return TaskSpec(task_id=task_id, title=title, difficulty="medium" if variant != "sshd_harden" else "hard",
                    category=CATEGORY, tags=["config", variant.split("_")[0], "edit", "generated"], inputs=inputs,
                    requires=["bash", "sed"] if variant == "env_override" else ["bash", "python3"], instruction=text,
                    solution=solution, tests=tests, files=files)
