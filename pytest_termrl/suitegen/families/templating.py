"""Config templating: render templates from variable files ({{ }}, ${VAR:-default}, @KEY@, dotted JSON keys)."""

from __future__ import annotations

import json
import random
import re

from ..common import INPUT_UNCHANGED_TEST, PROJECT_WORDS, TaskSpec, input_hashes, pick, test_module

FAMILY = "templating"
CATEGORY = "config"
VARIANTS = ("mustache", "shell", "multi_env", "json_dotted")


def _values(rng: random.Random, proj: str, env: str = "prod") -> dict[str, str]:
    return {
        "APP_NAME": proj, "PORT": str(rng.choice([8080, 8000, 9090, 3000])), "WORKERS": str(rng.randint(2, 16)),
        "DB_HOST": f"db.{env}.internal", "DB_PORT": str(rng.choice([5432, 6432])), "DB_NAME": f"{proj}_{env}",
        "LOG_LEVEL": pick(rng, ["info", "warn", "error"]), "DOMAIN": f"{proj}.{pick(rng, ['example.com', 'example.org'])}",
        "CACHE_TTL": str(rng.choice([60, 300, 900])), "ADMIN_EMAIL": f"admin@{proj}.example.net",
    }


def _template_lines(rng: random.Random, keys: list[str], wrap) -> list[str]:
    body = [f"server_name {wrap('DOMAIN')};", f"listen {wrap('PORT')};", f"worker_processes {wrap('WORKERS')};",
              f"upstream_db {wrap('DB_HOST')}:{wrap('DB_PORT')}/{wrap('DB_NAME')};", f"log_level {wrap('LOG_LEVEL')};",
              f"# contact {wrap('ADMIN_EMAIL')} for {wrap('APP_NAME')}", f"cache_ttl {wrap('CACHE_TTL')}s;"]
    rng.shuffle(body)
    return ["# generated from template, do not edit by hand"] + body


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    variant = VARIANTS[index % len(VARIANTS)]
    proj = pick(rng, PROJECT_WORDS)
    folder = pick(rng, ["deploy", "templates", f"{proj}/conf", "ops/render"])
    files: dict[str, str] = {}
    outputs: dict[str, str] = {}
    if variant == "mustache":
        vals = _values(rng, proj)
        spaced = {k: pick(rng, ["{{%s}}", "{{ %s }}", "{{  %s }}"]) for k in vals}
        lines = _template_lines(rng, list(vals), lambda k: spaced[k] % k.lower())
        tmpl_rel = f"{folder}/{pick(rng, ['app.conf.tmpl', 'nginx.conf.tpl', 'service.conf.in'])}"
        vars_rel = f"{folder}/{pick(rng, ['values.env', 'vars.env', 'prod.vars'])}"
        files[tmpl_rel] = "\n".join(lines) + "\n"
        extra = {"UNUSED_FLAG": "1", "REGION": "eu-west-1"}
        allv = {**vals, **extra}
        order = list(allv)
        rng.shuffle(order)
        files[vars_rel] = "# KEY=value, one per line\n" + "".join(f"{k.lower()}={allv[k]}\n" for k in order)
        out_rel = f"{pick(rng, ['out', 'rendered', 'build'])}/{tmpl_rel.rsplit('/', 1)[1].rsplit('.', 1)[0]}"
        outputs[out_rel] = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: allv[m.group(1).upper()], files[tmpl_rel])
        text = (f"Render the template `/home/user/{tmpl_rel}` with the variables in `/home/user/{vars_rel}` (lines "
                "`name=value`; `#` lines are comments) and write the result to "
                f"`/home/user/{out_rel}` (create the directory if needed).\n\nA placeholder is `{{{{` and `}}}}` around a "
                "variable name, with any amount of spaces (or none) inside the braces, e.g. `{{ port }}` or `{{port}}`. "
                "Replace each placeholder by the variable's value; every placeholder in this template has a value. "
                "Everything else, including comment lines, is copied unchanged.\n\nDo not modify the template or the "
                "variables file.")
        py = ["import re", "vals = {}", f"for line in open('/home/user/{vars_rel}'):",
              "    if line.strip() and not line.startswith('#'):", "        k, v = line.rstrip('\\n').split('=', 1)",
              "        vals[k] = v", f"t = open('/home/user/{tmpl_rel}').read()",
              "out = re.sub(r'\\{\\{\\s*(\\w+)\\s*\\}\\}', lambda m: vals[m.group(1)], t)",
              f"open('/home/user/{out_rel}', 'w').write(out)"]
        inputs = [tmpl_rel, vars_rel]
        title = "Render a {{ }} template from a variables file"
    elif variant == "shell":
        vals = _values(rng, proj)
        missing = rng.sample(sorted(vals), 2)
        empty = [k for k in rng.sample(sorted(vals), 3) if k not in missing][:1]
        defaults = {k: pick(rng, ["localhost", "8080", "info", "none", "4"]) for k in rng.sample(sorted(vals), 4)}
        for k in missing:
            defaults.setdefault(k, "fallback")
        wrap = lambda k: "${%s:-%s}" % (k, defaults[k]) if k in defaults else "${%s}" % k  # noqa: E731
        lines = _template_lines(rng, list(vals), wrap)
        lines.append("price_note: costs $5 per month")
        tmpl_rel = f"{folder}/{pick(rng, ['app.conf.template', 'settings.tmpl'])}"
        env_rel = f"{folder}/{pick(rng, ['.env', 'deploy.env'])}"
        files[tmpl_rel] = "\n".join(lines) + "\n"
        env_vals = {k: ("" if k in empty else v) for k, v in vals.items() if k not in missing}
        files[env_rel] = "".join(f"{k}={v}\n" for k, v in env_vals.items())

        def sub(m):
            k, d = m.group(1), m.group(3)
            v = env_vals.get(k, "")
            return v if v != "" else (d if d is not None else "")
        out_rel = f"{pick(rng, ['out', 'rendered', 'etc'])}/{tmpl_rel.rsplit('/', 1)[1].rsplit('.', 1)[0]}.conf"
        outputs[out_rel] = re.sub(r"\$\{(\w+)(:-([^}]*))?\}", sub, files[tmpl_rel])
        text = (f"`/home/user/{tmpl_rel}` uses shell-style placeholders: `${{NAME}}` and `${{NAME:-default}}`. The values "
                f"are in `/home/user/{env_rel}` (lines `NAME=value`, values unquoted).\n\nWrite "
                f"`/home/user/{out_rel}` (create the directory if needed): the template with each placeholder replaced. "
                "`${NAME}` becomes the value of NAME (empty if NAME is not defined); `${NAME:-default}` becomes the value of "
                "NAME if it is defined and non-empty, else the literal default text. A `$` that does not start a `${` "
                "placeholder stays as it is. Everything else is copied unchanged. Use only the values file, not the "
                "process environment.\n\nDo not modify the template or the values file.")
        py = ["import re", "vals = {}", f"for line in open('/home/user/{env_rel}'):", "    if '=' in line:",
              "        k, v = line.rstrip('\\n').split('=', 1)", "        vals[k] = v",
              "def sub(m):", "    v = vals.get(m.group(1), '')", "    return v if v else (m.group(3) if m.group(3) is not None else '')",
              f"t = open('/home/user/{tmpl_rel}').read()",
              f"open('/home/user/{out_rel}', 'w').write(re.sub(r'\\$\\{{(\\w+)(:-([^}}]*))?\\}}', sub, t))"]
        inputs = [tmpl_rel, env_rel]
        title = "Render a shell-style template with defaults"
    elif variant == "multi_env":
        envs = rng.sample(["staging", "prod", "qa", "dev"], 2)
        tmpl_rel = f"{folder}/{pick(rng, ['app.ini.in', 'service.ini.in'])}"
        keys = ["APP_NAME", "PORT", "DB_HOST", "DB_NAME", "LOG_LEVEL", "WORKERS"]
        lines = ["[app]", "name = @APP_NAME@", "port = @PORT@", "workers = @WORKERS@", "", "[database]", "host = @DB_HOST@",
                 "name = @DB_NAME@", "", "[logging]", "level = @LOG_LEVEL@", "; email me@example.com about @-signs"]
        files[tmpl_rel] = "\n".join(lines) + "\n"
        inputs = [tmpl_rel]
        out_dir = pick(rng, ["out", "build", "dist/config"])
        outname = tmpl_rel.rsplit("/", 1)[1][:-3]
        for env in envs:
            vals = {k: v for k, v in _values(rng, proj, env).items() if k in keys}
            vrel = f"{folder}/{env}.vars"
            files[vrel] = "".join(f"{k} = {vals[k]}\n" for k in keys)
            inputs.append(vrel)
            outputs[f"{out_dir}/{env}/{outname}"] = re.sub(r"@([A-Z_]+)@", lambda m: vals.get(m.group(1), m.group(0)), files[tmpl_rel])
        text = (f"`/home/user/{tmpl_rel}` is a configuration template with autoconf-style placeholders `@NAME@` (upper-case "
                f"letters and underscores between two `@`). There is one values file per environment: "
                + " and ".join(f"`/home/user/{folder}/{e}.vars`" for e in envs)
                + ", with lines `NAME = value` (spaces around `=` are not part of the name or value).\n\n"
                f"For each of these environments write `/home/user/{out_dir}/<environment>/{outname}` (create directories as "
                "needed): the template with every `@NAME@` replaced by that environment's value. An `@` that is not part "
                "of such a placeholder (as in the comment line) stays unchanged.\n\nDo not modify the template or the values files.")
        py = ["import os, re", f"t = open('/home/user/{tmpl_rel}').read()", f"for env in {envs!r}:", "    vals = {}",
              f"    for line in open('/home/user/{folder}/' + env + '.vars'):", "        if '=' in line:",
              "            k, v = line.split('=', 1)", "            vals[k.strip()] = v.strip()",
              f"    out = '/home/user/{out_dir}/' + env + '/{outname}'", "    os.makedirs(os.path.dirname(out), exist_ok=True)",
              "    open(out, 'w').write(re.sub(r'@([A-Z_]+)@', lambda m: vals.get(m.group(1), m.group(0)), t))"]
        title = "Render one template for several environments"
    else:
        vals = _values(rng, proj)
        data = {"app": {"name": vals["APP_NAME"], "port": int(vals["PORT"]), "workers": int(vals["WORKERS"])},
                "db": {"host": vals["DB_HOST"], "port": int(vals["DB_PORT"]), "name": vals["DB_NAME"]},
                "log": {"level": vals["LOG_LEVEL"]}, "admin": {"email": vals["ADMIN_EMAIL"]},
                "features": {"beta": rng.random() < 0.5}}
        vars_rel = f"{folder}/{pick(rng, ['values.json', 'context.json'])}"
        files[vars_rel] = json.dumps(data, indent=2) + "\n"
        tmpl_rel = f"{folder}/{pick(rng, ['docker-compose.yml.tmpl', 'app.yaml.tmpl'])}"
        lines = ["services:", "  {{app.name}}:", "    image: registry.example.com/{{app.name}}:latest",
                 "    ports:", '      - "{{app.port}}:{{app.port}}"', "    environment:", "      WORKERS: {{app.workers}}",
                 "      DB_URL: postgres://{{db.host}}:{{db.port}}/{{db.name}}", "      LOG_LEVEL: {{log.level}}",
                 "      BETA: {{features.beta}}", "      ADMIN: {{admin.email}}"]
        files[tmpl_rel] = "\n".join(lines) + "\n"

        def look(path):
            v = data
            for part in path.split("."):
                v = v[part]
            return json.dumps(v) if isinstance(v, bool) else str(v)
        out_rel = f"{pick(rng, ['out', 'rendered', 'deploy'])}/{tmpl_rel.rsplit('/', 1)[1][:-5]}"
        outputs[out_rel] = re.sub(r"\{\{([\w.]+)\}\}", lambda m: look(m.group(1)), files[tmpl_rel])
        text = (f"`/home/user/{tmpl_rel}` has placeholders `{{{{a.b}}}}` naming a value in the nested JSON object "
                f"`/home/user/{vars_rel}` by its dotted path (`{{{{db.host}}}}` is the `host` key of the `db` object).\n\n"
                f"Write `/home/user/{out_rel}` (create the directory if needed): the template with each placeholder replaced "
                "by the value: strings as they are (no quotes), numbers in decimal, booleans as `true`/`false`. Everything "
                "else is copied unchanged.\n\nDo not modify the template or the JSON file.")
        py = ["import json, re", f"data = json.load(open('/home/user/{vars_rel}'))", "def look(p):", "    v = data",
              "    for part in p.split('.'):", "        v = v[part]", "    return json.dumps(v) if isinstance(v, bool) else str(v)",
              f"t = open('/home/user/{tmpl_rel}').read()",
              f"open('/home/user/{out_rel}', 'w').write(re.sub(r'\\{{\\{{([\\w.]+)\\}}\\}}', lambda m: look(m.group(1)), t))"]
        inputs = [tmpl_rel, vars_rel]
        title = "Render a template from dotted JSON paths"
    dirs = sorted({o.rsplit("/", 1)[0] for o in outputs})
    solution = "".join(f"mkdir -p /home/user/{d}\n" for d in dirs) + "python3 - <<'PY'\n" + "\n".join(py) + "\nPY\n"
    constants = [("OUTPUTS", {f"/home/user/{k}": v.splitlines() for k, v in outputs.items()}),
                 ("INPUT_SHA256", input_hashes(files, inputs))]
    body = '''
    def _lines(path):
        p = Path(path)
        assert p.is_file(), f"{path} does not exist"
        return p.read_text().splitlines()


    def test_no_placeholders_left():
        for path in OUTPUTS:
            text = "\\n".join(_lines(path))
            assert text, f"{path} is empty"
            assert not re.search(r"\\{\\{|\\$\\{|@[A-Z_]+@", text), f"{path} still has placeholders"


    def test_same_line_count():
        for path, lines in OUTPUTS.items():
            assert len(_lines(path)) == len(lines), f"{path} has {len(_lines(path))} lines, expected {len(lines)}"


    def test_rendered_lines():
        for path, lines in OUTPUTS.items():
            wrong = [(want, got) for want, got in zip(lines, _lines(path)) if want != got]
            assert not wrong, f"{path}: first difference {wrong[0]}"


    def test_exact_outputs():
        for path, lines in OUTPUTS.items():
            assert Path(path).read_text() == "".join(line + "\\n" for line in lines), f"{path} differs"
    '''
    tests = test_module(task_id, ["import hashlib", "import re", "from pathlib import Path"], constants, body,
                        INPUT_UNCHANGED_TEST)
    return TaskSpec(task_id=task_id, title=title, difficulty="medium", category=CATEGORY,
                    tags=["config", "template", variant.replace("_", "-"), "generated"], inputs=inputs,
                    requires=["bash", "python3"], instruction=text, solution=solution, tests=tests, files=files)
