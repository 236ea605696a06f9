"""CSV/TSV reshaping: pivot, melt, select-and-convert, join."""

from __future__ import annotations

import csv
import io
import random
from collections import defaultdict

from ..common import CITIES, FIRST_NAMES, INPUT_UNCHANGED_TEST, LAST_NAMES, TaskSpec, input_hashes, pick, test_module

FAMILY = "csvreshape"
CATEGORY = "csv"
VARIANTS = ("pivot", "melt", "select", "join")
DELIMS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}


def _write(rows, delim=",", quoting=csv.QUOTE_MINIMAL) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delim, lineterminator="\n", quoting=quoting)
    w.writerows(rows)
    return buf.getvalue()


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    variant = VARIANTS[index % len(VARIANTS)]
    folder = pick(rng, ["data", "exports", "incoming", "work/tables", "shared/csv"])
    out_dir = pick(rng, ["out", "reports", "tables", "processed"])
    inputs: list[str]
    files: dict[str, str] = {}
    if variant == "pivot":
        delim = pick(rng, [",", ";", "\t"])
        ext = "tsv" if delim == "\t" else "csv"
        src = f"{folder}/{pick(rng, ['sales', 'shipments', 'orders'])}.{ext}"
        regions = rng.sample(CITIES, rng.randint(3, 5))
        products = rng.sample(["widget", "gadget", "sprocket", "gizmo", "doohickey", "flange", "bolt"], rng.randint(3, 5))
        rows = [["date", "region", "product", "units"]]
        acc: defaultdict[tuple[str, str], int] = defaultdict(int)
        for _ in range(rng.randint(30, 50)):
            r, p, u = rng.choice(regions), rng.choice(products), rng.randint(1, 40)
            rows.append([f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", r, p, str(u)])
            acc[(r, p)] += u
        files[src] = _write(rows, delim)
        regs, prods = sorted({r for r, _ in acc}), sorted({p for _, p in acc})
        out_rows = [["region"] + prods] + [[r] + [str(acc.get((r, p), 0)) for p in prods] for r in regs]
        out_rel = f"{out_dir}/units_by_region.csv"
        expected = _write(out_rows)
        text = (f"`/home/user/{src}` lists sales in long format, one row per sale, with fields separated by a "
                f"{DELIMS[delim]} and the header `{delim.join(rows[0])}`.\n\n"
                f"Pivot it into `/home/user/{out_rel}` (comma-separated, create the directory if needed): the header is "
                "`region` followed by every product name in ascending alphabetical order; then one row per region, regions in "
                "ascending alphabetical order; each cell is the total of `units` for that region and product, or `0` if "
                "there is none. No quoting, no spaces; every line ends with a newline.")
        py = ["import csv", "from collections import defaultdict", "acc = defaultdict(int)",
              f"with open('/home/user/{src}', newline='') as fh:",
              f"    for row in csv.DictReader(fh, delimiter={delim!r}):",
              "        acc[(row['region'], row['product'])] += int(row['units'])",
              "regs = sorted({r for r, _ in acc}); prods = sorted({p for _, p in acc})",
              "lines = [','.join(['region'] + prods)] + [','.join([r] + [str(acc.get((r, p), 0)) for p in prods]) for r in regs]",
              "text = '\\n'.join(lines) + '\\n'"]
        inputs = [src]
        title = "Pivot sales into a region by product table"
    elif variant == "melt":
        delim = pick(rng, [",", ";", "|"])
        src = f"{folder}/{pick(rng, ['rainfall', 'visits', 'readings'])}_wide.csv"
        cols = pick(rng, [["jan", "feb", "mar", "apr"], ["q1", "q2", "q3", "q4"], ["mon", "tue", "wed", "thu", "fri"]])
        keyname = pick(rng, ["station", "site", "store"])
        keys = rng.sample(CITIES, rng.randint(4, 6))
        rows = [[keyname] + cols]
        out_rows = [[keyname, "period", "value"]]
        for k in keys:
            vals = [("" if rng.random() < 0.2 else str(round(rng.uniform(0, 99), 1))) for _ in cols]
            rows.append([k] + vals)
            out_rows += [[k, c, v] for c, v in zip(cols, vals) if v != ""]
        files[src] = _write(rows, delim)
        out_rel = f"{out_dir}/{src.rsplit('/', 1)[1].replace('_wide', '_long')}"
        expected = _write(out_rows)
        text = (f"`/home/user/{src}` is a wide table: fields are separated by a {DELIMS[delim]} ({delim!r}), the first column "
                f"is `{keyname}` and every other column is a period (`{'`, `'.join(cols)}`). Some cells are empty.\n\n"
                f"Convert it to long format in `/home/user/{out_rel}` (create the directory if needed): a comma-separated file "
                f"with the header `{keyname},period,value` and one row per non-empty cell, ordered by the input's row order "
                "and, within a row, by the input's column order. Values are copied exactly as written (no reformatting); "
                "empty cells produce no row. No quoting; every line ends with a newline.")
        py = ["import csv", f"with open('/home/user/{src}', newline='') as fh:",
              f"    rows = list(csv.reader(fh, delimiter={delim!r}))",
              f"out = [{keyname + ',period,value'!r}]", "for row in rows[1:]:",
              "    for col, val in zip(rows[0][1:], row[1:]):", "        if val != '':",
              "            out.append(f'{row[0]},{col},{val}')", "text = '\\n'.join(out) + '\\n'"]
        inputs = [src]
        title = "Melt a wide table into long format"
    elif variant == "select":
        src = f"{folder}/{pick(rng, ['customers', 'members', 'accounts'])}.csv"
        header = ["id", "name", "city", "status", "signup", "notes"]
        rows = [header]
        people = []
        for i in range(rng.randint(14, 22)):
            first, last = rng.choice(FIRST_NAMES).title(), rng.choice(LAST_NAMES).title()
            name = f"{last}, {first}" if rng.random() < 0.4 else f"{first} {last}"
            note = pick(rng, ["", "prefers email", 'said "call later"', "VIP, renewal due", "n/a"])
            status = rng.choice(["active", "active", "inactive", "Active", "pending"])
            row = [str(100 + i * rng.randint(1, 3) + i), name, rng.choice(CITIES), status,
                   f"2023-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", note]
            rows.append(row)
            people.append(row)
        files[src] = _write(rows)
        newcols = pick(rng, [["name", "id", "city"], ["id", "city", "name"], ["city", "name", "signup"]])
        rename = {"name": pick(rng, ["full_name", "customer"]), "id": "customer_id", "city": "location", "signup": "joined"}
        keep = [r for r in people if r[3] == "active"]
        out_rel = f"{out_dir}/active_{src.rsplit('/', 1)[1].replace('.csv', '.tsv')}"
        idx = [header.index(c) for c in newcols]
        expected = "\t".join(rename[c] for c in newcols) + "\n" + "".join("\t".join(r[i] for i in idx) + "\n" for r in keep)
        spec = ", ".join(f"`{c}` (renamed `{rename[c]}`)" for c in newcols)
        text = (f"`/home/user/{src}` is a standard CSV file (RFC 4180: fields containing commas or quotes are enclosed in "
                f"double quotes, and a quote inside such a field is doubled) with the header `{','.join(header)}`.\n\n"
                f"Write `/home/user/{out_rel}` (create the directory if needed), a tab-separated file holding only the rows "
                "whose `status` is exactly `active` (lower case), in input order, and only these columns, in this order: "
                f"{spec}. The first line is the header with the new names. Write field values unquoted, exactly as they "
                "read after CSV decoding (so `\"Novak, Ada\"` becomes `Novak, Ada`). Every line ends with a newline.")
        py = ["import csv", f"cols = {newcols!r}", f"names = {[rename[c] for c in newcols]!r}",
              "out = ['\\t'.join(names)]", f"with open('/home/user/{src}', newline='') as fh:",
              "    for row in csv.DictReader(fh):", "        if row['status'] == 'active':",
              "            out.append('\\t'.join(row[c] for c in cols))", "text = '\\n'.join(out) + '\\n'"]
        inputs = [src]
        title = "Select, rename and convert active rows to TSV"
    else:
        left = f"{folder}/{pick(rng, ['orders', 'invoices'])}.csv"
        right = f"{folder}/{pick(rng, ['clients', 'customers_ref'])}.csv"
        cust = {}
        rrows = [["client_id", "name", "country"]]
        for i in rng.sample(range(10, 60), rng.randint(6, 9)):
            cust[str(i)] = (f"{rng.choice(FIRST_NAMES).title()} {rng.choice(LAST_NAMES).title()}", rng.choice(["PT", "NO", "KE", "PE", "JP", "EE"]))
            rrows.append([str(i), *cust[str(i)]])
        ids = list(cust)
        lrows = [["order_id", "client_id", "amount"]]
        for j in range(rng.randint(14, 22)):
            cid = rng.choice(ids) if rng.random() > 0.15 else str(rng.randint(70, 99))
            lrows.append([f"A{rng.randint(1000, 9999)}{j}", cid, f"{rng.randint(100, 99999) / 100:.2f}"])
        files[left] = _write(lrows)
        files[right] = _write(rrows)
        out_rel = f"{out_dir}/orders_with_clients.csv"
        out_rows = [["order_id", "name", "country", "amount"]]
        unmatched = []
        for o in lrows[1:]:
            if o[1] in cust:
                out_rows.append([o[0], cust[o[1]][0], cust[o[1]][1], o[2]])
            else:
                unmatched.append(o[0])
        expected = _write(out_rows)
        text = (f"Two comma-separated files describe orders: `/home/user/{left}` (header `order_id,client_id,amount`) and "
                f"`/home/user/{right}` (header `client_id,name,country`). No field contains a comma or a quote.\n\n"
                f"Join them on `client_id` and write `/home/user/{out_rel}` (create the directory if needed) with the header "
                "`order_id,name,country,amount` and one row per order whose `client_id` appears in the clients file, in the "
                "order of the orders file. Orders whose client is unknown are left out. Values are copied exactly as "
                "written. Every line ends with a newline.")
        py = ["import csv", f"clients = {{r['client_id']: r for r in csv.DictReader(open('/home/user/{right}', newline=''))}}",
              "out = ['order_id,name,country,amount']", f"for o in csv.DictReader(open('/home/user/{left}', newline='')):",
              "    c = clients.get(o['client_id'])", "    if c:",
              "        out.append(','.join([o['order_id'], c['name'], c['country'], o['amount']]))",
              "text = '\\n'.join(out) + '\\n'"]
        inputs = [left, right]
        title = "Join orders with their clients"
    text += "\n\nDo not modify the input file" + ("s" if len(inputs) > 1 else "") + ".\n"
    solution = (f"mkdir -p /home/user/{out_dir}\npython3 - <<'PY'\n" + "\n".join(py)
                + f"\nwith open('/home/user/{out_rel}', 'w') as fh:\n    fh.write(text)\nPY\n")
    lines = expected.splitlines()
    constants = [("OUT", f"/home/user/{out_rel}"), ("EXPECTED", lines), ("DELIM", "\t" if out_rel.endswith(".tsv") else ","),
                 ("INPUT_SHA256", input_hashes(files, inputs))]
    body = '''
    def _lines():
        path = Path(OUT)
        assert path.is_file(), f"{OUT} does not exist"
        return path.read_text().splitlines()


    def test_header():
        lines = _lines()
        assert lines, "the output is empty"
        assert lines[0] == EXPECTED[0]


    def test_cells():
        got = [line.split(DELIM) for line in _lines()[1:]]
        want = [line.split(DELIM) for line in EXPECTED[1:]]
        assert sorted(got) == sorted(want), "the rows differ (ignoring their order)"


    def test_row_order():
        assert _lines()[1:] == EXPECTED[1:]


    def test_exact_file():
        assert Path(OUT).read_text() == "".join(line + "\\n" for line in EXPECTED)
    '''
    tests = test_module(task_id, ["import hashlib", "from pathlib import Path"], constants, body, INPUT_UNCHANGED_TEST)
    return TaskSpec(task_id=task_id, title=title, difficulty="medium", category=CATEGORY,
                    tags=["csv", variant, "reshape", "generated"], inputs=inputs, requires=["bash", "python3"],
                    instruction=text, solution=solution, tests=tests, files=files)
