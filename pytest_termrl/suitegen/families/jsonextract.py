"""JSON extraction: filter, flatten and aggregate nested JSON into text, CSV or JSON."""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from decimal import Decimal
from typing import NotRequired, TypedDict

from ..common import CITIES, FIRST_NAMES, INPUT_UNCHANGED_TEST, LAST_NAMES, PROJECT_WORDS, TaskSpec, input_hashes, pick, test_module

FAMILY = "jsonextract"
CATEGORY = "json"
VARIANTS = ("servers", "orders", "licenses", "events")
LICENSES = ["MIT", "Apache-2.0", "BSD-3-Clause", "GPL-3.0-only", "MPL-2.0", "ISC"]
COUNTRIES = ["PT", "NO", "KE", "PE", "JP", "EE", "GH", "VN"]


# The records written to the input files, in JSON order.

class _Disk(TypedDict):
    mount: str
    size_gb: int


class _Server(TypedDict):
    name: str
    env: str
    cpu: int
    tags: list[str]
    disks: list[_Disk]
    retired: NotRequired[bool]


class _Customer(TypedDict):
    name: str
    city: str


class _Item(TypedDict):
    sku: str
    qty: int
    unit_price: str


class _Order(TypedDict):
    id: str
    status: str
    customer: _Customer
    items: list[_Item]


class _Package(TypedDict):
    version: str
    license: str | None
    dev: bool


class _Geo(TypedDict, total=False):
    country: str | None


class _User(TypedDict):
    id: int
    geo: NotRequired[_Geo]


class _Event(TypedDict):
    event: str
    user: _User


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    variant = VARIANTS[index % len(VARIANTS)]
    folder = pick(rng, ["data", "exports", "inventory", "api_dump", "incoming/json"])
    out_dir = pick(rng, ["out", "reports", "extracted", "results"])
    indent = pick(rng, [None, 2, 4])
    json_out = False
    if variant == "servers":
        src = f"{folder}/{pick(rng, ['servers', 'hosts', 'fleet'])}.json"
        env = pick(rng, ["prod", "staging"])
        tag = pick(rng, ["web", "db", "batch", "edge"])
        servers: list[_Server] = []
        for name in rng.sample(PROJECT_WORDS, rng.randint(10, 14)):
            s: _Server = {"name": f"{name}-{rng.randint(1, 9)}", "env": rng.choice(["prod", "prod", "staging", "dev"]),
                 "cpu": rng.choice([2, 4, 8, 16, 32]), "tags": rng.sample(["web", "db", "batch", "edge", "gpu"], rng.randint(0, 3)),
                 "disks": [{"mount": m, "size_gb": rng.choice([20, 50, 100, 250, 500])} for m in rng.sample(["/", "/data", "/var", "/srv"], rng.randint(1, 3))]}
            if rng.random() < 0.15:
                s["retired"] = True
            servers.append(s)
        # Make sure the filter selects a few and a near miss exists.
        for s in servers[:3]:
            s["env"], s["tags"] = env, sorted(set(s["tags"]) | {tag})
            s.pop("retired", None)
        servers[3]["env"], servers[3]["tags"] = env.upper(), [tag]
        rng.shuffle(servers)
        data: object = {"generated": "2024-05-01", "servers": servers}
        sel = [s for s in servers if s["env"] == env and tag in s["tags"] and not s.get("retired", False)]
        rows = sorted((s["name"], s["cpu"], sum(d["size_gb"] for d in s["disks"])) for s in sel)
        expected = "name,cpu,disk_gb\n" + "".join(f"{n},{c},{d}\n" for n, c, d in rows)
        out_rel = f"{out_dir}/{env}_{tag}_servers.csv"
        text = (f"`/home/user/{src}` is an inventory export: a JSON object whose `servers` array holds objects with `name`, "
                "`env`, `cpu` (an integer), `tags` (an array of strings), `disks` (an array of objects with `mount` and "
                "`size_gb`) and, for some, `retired` (a boolean).\n\n"
                f"Write `/home/user/{out_rel}` (create the directory if needed): a CSV file with the header `name,cpu,disk_gb` and "
                f"one row per server whose `env` is exactly `{env}` (case-sensitive), whose `tags` contain `{tag}`, and which is "
                "not retired (a missing `retired` means not retired). `disk_gb` is the sum of the `size_gb` of all its disks. "
                "Rows sorted by `name` ascending; every line ends with a newline.")
        py = ["import json", f"d = json.load(open('/home/user/{src}'))",
              f"sel = [s for s in d['servers'] if s['env'] == {env!r} and {tag!r} in s['tags'] and not s.get('retired', False)]",
              "rows = sorted((s['name'], s['cpu'], sum(x['size_gb'] for x in s['disks'])) for s in sel)",
              "text = 'name,cpu,disk_gb\\n' + ''.join(f'{n},{c},{g}\\n' for n, c, g in rows)"]
        title = f"Extract {env} {tag} servers from an inventory"
    elif variant == "orders":
        src = f"{folder}/{pick(rng, ['orders', 'checkout', 'webshop_orders'])}.json"
        orders: list[_Order] = []
        for i in range(rng.randint(6, 9)):
            items: list[_Item] = [{"sku": f"{pick(rng, ['TS', 'MG', 'BK', 'CP'])}-{rng.randint(100, 999)}", "qty": rng.randint(1, 5),
                      "unit_price": f"{rng.randint(199, 9999) / 100:.2f}"} for _ in range(rng.randint(0, 4))]
            orders.append({"id": f"ORD-{rng.randint(10000, 99999)}", "status": rng.choice(["paid", "paid", "cancelled", "pending"]),
                           "customer": {"name": f"{rng.choice(FIRST_NAMES).title()} {rng.choice(LAST_NAMES).title()}",
                                        "city": rng.choice(CITIES)},
                           "items": items})
        orders[0]["status"] = "paid"
        orders[0]["items"] = orders[0]["items"] or [{"sku": "TS-101", "qty": 2, "unit_price": "9.99"}]
        statuses = pick(rng, [("paid",), ("paid", "pending")])
        data = orders
        lines = []
        for o in orders:
            if o["status"] in statuses:
                for it in o["items"]:
                    total = Decimal(it["unit_price"]) * it["qty"]
                    lines.append(f"{o['id']}\t{o['customer']['city']}\t{it['sku']}\t{it['qty']}\t{total:.2f}")
        expected = "order\tcity\tsku\tqty\ttotal\n" + "".join(line + "\n" for line in lines)
        out_rel = f"{out_dir}/order_lines.tsv"
        stext = " or ".join(f"`{s}`" for s in statuses)
        text = (f"`/home/user/{src}` is a JSON array of orders. Each order has `id`, `status`, `customer` (an object with "
                "`name` and `city`) and `items` (an array, possibly empty, of objects with `sku`, `qty` (an integer) and "
                "`unit_price` (a string such as `\"12.50\"`)).\n\n"
                f"Flatten the orders whose `status` is {stext} into `/home/user/{out_rel}` (create the directory if needed): "
                "a tab-separated file with the header `order\tcity\tsku\tqty\ttotal` (tabs between the names) and one line per "
                "item, orders in file order and items in array order, where `order` is the order's `id`, `city` the "
                "customer's city, and `total` is `qty` times `unit_price` written with exactly two decimals. Every line ends "
                "with a newline.")
        py = ["import json", "from decimal import Decimal", f"orders = json.load(open('/home/user/{src}'))",
              "out = ['order\\tcity\\tsku\\tqty\\ttotal']", "for o in orders:", f"    if o['status'] in {list(statuses)!r}:",
              "        for it in o['items']:", "            t = Decimal(it['unit_price']) * it['qty']",
              "            out.append(f\"{o['id']}\\t{o['customer']['city']}\\t{it['sku']}\\t{it['qty']}\\t{t:.2f}\")",
              "text = '\\n'.join(out) + '\\n'"]
        title = "Flatten order items to TSV"
    elif variant == "licenses":
        src = f"{folder}/{pick(rng, ['packages', 'sbom', 'dependencies'])}.json"
        pkgs: dict[str, _Package] = {}
        for name in rng.sample(PROJECT_WORDS + ["left-pad", "chalk", "lodash", "requests", "numpy", "serde", "tokio"], rng.randint(10, 15)):
            entry: _Package = {"version": f"{rng.randint(0, 5)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}", "license": rng.choice(LICENSES),
                     "dev": rng.random() < 0.3}
            if rng.random() < 0.12:
                entry["license"] = None
            pkgs[name] = entry
        data = {"name": "app", "packages": pkgs}
        include_dev = rng.random() < 0.5
        by: defaultdict[str, list[str]] = defaultdict(list)
        for name, e in pkgs.items():
            if e["dev"] and not include_dev:
                continue
            by[e["license"] or "UNKNOWN"].append(name)
        result = {k: sorted(v) for k, v in sorted(by.items())}
        expected_obj = result
        json_out = True
        out_rel = f"{out_dir}/licenses.json"
        devtext = ("including development dependencies (`\"dev\": true`)" if include_dev
                   else "leaving out development dependencies (those with `\"dev\": true`)")
        text = (f"`/home/user/{src}` describes a project's dependencies: its `packages` object maps each package name to an "
                "object with `version`, `license` (a string, or `null` when unknown) and `dev` (a boolean).\n\n"
                f"Write `/home/user/{out_rel}` (create the directory if needed): a single JSON object that maps each license "
                f"to the alphabetically sorted array of the names of the packages under it, {devtext}. Packages whose "
                "license is `null` go under the key `UNKNOWN`. Only licenses with at least one package appear.")
        py = ["import json", f"d = json.load(open('/home/user/{src}'))", "by = {}", "for name, e in d['packages'].items():",
              *([] if include_dev else ["    if e['dev']:", "        continue"]),
              "    by.setdefault(e['license'] or 'UNKNOWN', []).append(name)",
              "text = json.dumps({k: sorted(v) for k, v in sorted(by.items())}, indent=2) + '\\n'"]
        title = "Group dependencies by license"
    else:
        src = f"{folder}/{pick(rng, ['events', 'clicks', 'signups'])}.jsonl"
        recs: list[_Event] = []
        for _ in range(rng.randint(30, 45)):
            r: _Event = {"event": rng.choice(["view", "click", "signup", "purchase"]), "user": {"id": rng.randint(1, 400)}}
            roll = rng.random()
            if roll < 0.7:
                r["user"]["geo"] = {"country": rng.choice(COUNTRIES[:5])}
            elif roll < 0.8:
                r["user"]["geo"] = {"country": None}
            elif roll < 0.9:
                r["user"]["geo"] = {}
            recs.append(r)
        event = pick(rng, ["click", "view", "purchase"])
        for r in recs[:2]:
            r["event"] = event
        data = None
        c: Counter[str] = Counter()
        for r in recs:
            if r["event"] == event:
                c[(r["user"].get("geo") or {}).get("country") or "unknown"] += 1
        by_country = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))
        expected = "".join(f"{k} {n}\n" for k, n in by_country)
        out_rel = f"{out_dir}/{event}_by_country.txt"
        text = (f"`/home/user/{src}` holds one JSON object per line, e.g. "
                '`{"event": "click", "user": {"id": 7, "geo": {"country": "PT"}}}`. The `geo` object may be missing, '
                "empty, or have a `null` country.\n\n"
                f"Count the `{event}` events per country and write `/home/user/{out_rel}` (create the directory if needed): one "
                "line `<country> <count>` per country, where events without a usable country (missing `geo`, missing or "
                "`null` `country`) count under `unknown`; sorted by count from highest to lowest, ties by country ascending. "
                "Every line ends with a newline.")
        py = ["import json", "from collections import Counter", "c = Counter()", f"for line in open('/home/user/{src}'):",
              "    r = json.loads(line)", f"    if r['event'] == {event!r}:",
              "        c[(r['user'].get('geo') or {}).get('country') or 'unknown'] += 1",
              "text = ''.join(f'{k} {n}\\n' for k, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))"]
        title = f"Count {event} events per country"
        content = "".join(json.dumps(r) + "\n" for r in recs)
    if variant != "events":
        content = json.dumps(data, indent=indent) + "\n"
    files = {src: content}
    text += "\n\nDo not modify the input file.\n"
    solution = (f"mkdir -p /home/user/{out_dir}\npython3 - <<'PY'\n" + "\n".join(py)
                + f"\nwith open('/home/user/{out_rel}', 'w') as fh:\n    fh.write(text)\nPY\n")
    if variant == "servers" and rng.random() < 0.5:
        solution = (f"mkdir -p /home/user/{out_dir}\n{{ echo name,cpu,disk_gb; jq -r --arg env {env} --arg tag {tag} "
                    "'.servers[] | select(.env == $env and (.tags | index($tag)) and (.retired != true)) "
                    "| [.name, .cpu, ([.disks[].size_gb] | add)] | @csv' "
                    f"/home/user/{src} | tr -d '\"' | LC_ALL=C sort; }} > /home/user/{out_rel}\n")
    imports = ["import hashlib", "from pathlib import Path"]
    if json_out:
        imports.append("import json")
        constants = [("OUT", f"/home/user/{out_rel}"), ("EXPECTED", expected_obj), ("INPUT_SHA256", input_hashes(files, [src]))]
        body = '''
        def _data():
            path = Path(OUT)
            assert path.is_file(), f"{OUT} does not exist"
            return json.loads(path.read_text())


        def test_is_object_with_right_keys():
            data = _data()
            assert isinstance(data, dict), "expected a JSON object"
            assert sorted(data) == sorted(EXPECTED)


        def test_unknown_licenses_grouped():
            data = _data()
            assert data.get("UNKNOWN") == EXPECTED.get("UNKNOWN")


        def test_package_lists_sorted_and_exact():
            assert _data() == EXPECTED
        '''
    else:
        constants = [("OUT", f"/home/user/{out_rel}"), ("EXPECTED", expected.splitlines()),
                     ("INPUT_SHA256", input_hashes(files, [src]))]
        body = '''
        def _lines():
            path = Path(OUT)
            assert path.is_file(), f"{OUT} does not exist"
            return path.read_text().splitlines()


        def test_not_empty():
            assert _lines(), "the output is empty"


        def test_same_records():
            assert sorted(_lines()) == sorted(EXPECTED)


        def test_order():
            assert _lines() == EXPECTED


        def test_exact_file():
            assert Path(OUT).read_text() == "".join(line + "\\n" for line in EXPECTED)
        '''
    tests = test_module(task_id, imports, constants, body, INPUT_UNCHANGED_TEST)
    uses_jq = "jq " in solution
    return TaskSpec(task_id=task_id, title=title, difficulty="medium", category=CATEGORY,
                    tags=["json", variant, "extraction", "generated"] + (["jq"] if uses_jq else []), inputs=[src],
                    requires=["bash", "jq"] if uses_jq else ["bash", "python3"], instruction=text, solution=solution,
                    tests=tests, files=files)
