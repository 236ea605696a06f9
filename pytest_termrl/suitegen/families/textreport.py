"""Text report generation: fixed-width tables, Markdown tables, shares, threshold reports."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from typing import TypedDict

from ..common import FIRST_NAMES, HOSTS, INPUT_UNCHANGED_TEST, TaskSpec, input_hashes, pick, test_module

FAMILY = "textreport"
CATEGORY = "text"
VARIANTS = ("expenses", "inventory", "sales_share", "disk_usage")
Q = Decimal("0.01")


class _StockItem(TypedDict):
    """One entry of the inventory's `items` array, in JSON order."""

    sku: str
    name: str
    qty: int
    unit_price: str


def _r(x: Decimal, q=Q) -> Decimal:
    return x.quantize(q, rounding=ROUND_HALF_UP)


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    variant = VARIANTS[index % len(VARIANTS)]
    out_dir = pick(rng, ["reports", "out", "summaries"])
    files: dict[str, str] = {}
    if variant == "expenses":
        month = f"2024-{rng.randint(1, 12):02d}"
        src = f"{pick(rng, ['finance', 'data', 'household'])}/expenses_{month}.csv"
        cats = rng.sample(["groceries", "rent", "transport", "utilities", "dining", "health", "books", "travel"], rng.randint(4, 6))
        rows = ["date,category,amount"]
        acc: defaultdict[str, list[Decimal]] = defaultdict(list)
        for _ in range(rng.randint(15, 25)):
            c = rng.choice(cats)
            a = Decimal(rng.randint(150, 25000)) / 100
            rows.append(f"{month}-{rng.randint(1, 28):02d},{c},{a}")
            acc[c].append(a)
        files[src] = "\n".join(rows) + "\n"
        w1, w2, w3 = pick(rng, [(14, 10, 6), (16, 12, 7), (12, 11, 6)])
        order = sorted(acc, key=lambda c: (-sum(acc[c], Decimal(0)), c))
        title_line = f"EXPENSES {month}"
        lines = [title_line, "=" * len(title_line), f"{'category':<{w1}}{'total':>{w2}}{'count':>{w3}}"]
        for c in order:
            lines.append(f"{c:<{w1}}{_r(sum(acc[c], Decimal(0))):>{w2}}{len(acc[c]):>{w3}}")
        lines.append("-" * (w1 + w2 + w3))
        grand = sum((sum(v, Decimal(0)) for v in acc.values()), Decimal(0))
        lines.append(f"{'TOTAL':<{w1}}{_r(grand):>{w2}}{sum(len(v) for v in acc.values()):>{w3}}")
        out_rel = f"{out_dir}/expenses_{month}.txt"
        text = (f"`/home/user/{src}` lists one expense per row (header `date,category,amount`, amounts with two decimals).\n\n"
                f"Write the report `/home/user/{out_rel}` (create the directory if needed) with exactly this layout:\n\n"
                f"```\n{lines[0]}\n{lines[1]}\n{lines[2]}\n<one line per category>\n{lines[-2]}\n<TOTAL line>\n```\n\n"
                f"- Line 2 is `=` repeated to the length of line 1. Line 3 is the column header shown.\n"
                f"- Each category line is the category name left-aligned in a field of {w1} characters, its total amount "
                f"(two decimals) right-aligned in {w2} characters, and its number of expenses right-aligned in {w3} "
                "characters (like printf's `%-" + f"{w1}s%{w2}.2f%{w3}d`" + "). Categories sorted by total, highest first, "
                "ties by name.\n"
                f"- Then a line of {w1 + w2 + w3} `-` characters, and the `TOTAL` line in the same format with the sum of "
                "all amounts and the number of all expenses.\n"
                "- No trailing spaces beyond the field widths; every line ends with a newline.\n\nDo not modify the input file.")
        py = ["import csv", "from collections import defaultdict", "from decimal import Decimal", "acc = defaultdict(list)",
              f"for r in csv.DictReader(open('/home/user/{src}')):", "    acc[r['category']].append(Decimal(r['amount']))",
              f"t = {title_line!r}", f"out = [t, '=' * len(t), '%-{w1}s%{w2}s%{w3}s' % ('category', 'total', 'count')]",
              "for c in sorted(acc, key=lambda c: (-sum(acc[c]), c)):",
              f"    out.append('%-{w1}s%{w2}.2f%{w3}d' % (c, sum(acc[c]), len(acc[c])))",
              f"out.append('-' * {w1 + w2 + w3})",
              f"out.append('%-{w1}s%{w2}.2f%{w3}d' % ('TOTAL', sum(sum(v) for v in acc.values()), sum(len(v) for v in acc.values())))"]
        inputs = [src]
        title = "Monthly expense report with fixed-width columns"
    elif variant == "inventory":
        src = f"{pick(rng, ['stock', 'warehouse', 'shop'])}/{pick(rng, ['inventory.json', 'items.json'])}"
        items: list[_StockItem] = []
        for name in rng.sample(["bolt", "nut", "washer", "hinge", "bracket", "spring", "gasket", "rivet", "clamp", "pulley"], rng.randint(6, 8)):
            items.append({"sku": f"{name[:3].upper()}-{rng.randint(100, 999)}", "name": name, "qty": rng.randint(0, 60),
                          "unit_price": str(Decimal(rng.randint(5, 5000)) / 100)})
        threshold = rng.choice([5, 10, 15])
        rng.choice(items)["qty"] = rng.randint(0, threshold - 1)
        files[src] = json.dumps({"warehouse": pick(rng, ["north", "east", "main"]), "items": items}, indent=2) + "\n"
        by_sku = sorted(items, key=lambda i: i["sku"])
        lines = ["| sku | name | qty | value |", "|---|---|---:|---:|"]
        for it in by_sku:
            lines.append(f"| {it['sku']} | {it['name']} | {it['qty']} | {_r(Decimal(it['unit_price']) * it['qty'])} |")
        total = sum((Decimal(i["unit_price"]) * i["qty"] for i in items), Decimal(0))
        low = sorted(i["name"] for i in items if i["qty"] < threshold)
        lines += ["", f"Total value: {_r(total)}", f"Low stock (< {threshold}): {', '.join(low) if low else 'none'}"]
        out_rel = f"{out_dir}/inventory.md"
        text = (f"`/home/user/{src}` is a JSON object whose `items` array holds objects with `sku`, `name`, `qty` (integer) and "
                "`unit_price` (a decimal number written as a string).\n\n"
                f"Write the Markdown report `/home/user/{out_rel}` (create the directory if needed):\n\n"
                "1. A table with the header line `| sku | name | qty | value |` and the alignment line `|---|---|---:|---:|`, "
                "then one row per item sorted by `sku`, written `| <sku> | <name> | <qty> | <value> |` where value is "
                "`qty * unit_price` with exactly two decimals.\n"
                "2. A blank line.\n"
                "3. `Total value: <sum of all values, two decimals>`.\n"
                f"4. `Low stock (< {threshold}): <names>` listing the names of the items whose `qty` is below {threshold}, "
                "alphabetically, separated by `, `, or `none`.\n\n"
                "Every line ends with a newline.\n\nDo not modify the input file.")
        py = ["import json", "from decimal import Decimal", f"items = json.load(open('/home/user/{src}'))['items']",
              "out = ['| sku | name | qty | value |', '|---|---|---:|---:|']", "total = Decimal(0)",
              "for i in sorted(items, key=lambda i: i['sku']):", "    v = Decimal(i['unit_price']) * i['qty']", "    total += v",
              "    out.append(f\"| {i['sku']} | {i['name']} | {i['qty']} | {v:.2f} |\")",
              f"low = sorted(i['name'] for i in items if i['qty'] < {threshold})",
              f"out += ['', f'Total value: {{total:.2f}}', 'Low stock (< {threshold}): ' + (', '.join(low) if low else 'none')]"]
        inputs = [src]
        title = "Markdown inventory report"
    elif variant == "sales_share":
        src = f"{pick(rng, ['sales', 'crm', 'data'])}/{pick(rng, ['q3.tsv', 'deals.tsv', 'bookings.tsv'])}"
        reps = rng.sample([n.title() for n in FIRST_NAMES], rng.randint(4, 6))
        rows = ["rep\tregion\tamount"]
        by_rep: defaultdict[str, Decimal] = defaultdict(Decimal)
        for _ in range(rng.randint(14, 22)):
            r, a = rng.choice(reps), Decimal(rng.randint(1000, 500000)) / 100
            rows.append(f"{r}\t{pick(rng, ['north', 'south', 'west'])}\t{a}")
            by_rep[r] += a
        files[src] = "\n".join(rows) + "\n"
        total = sum(by_rep.values(), Decimal(0))
        order = sorted(by_rep, key=lambda r: (-by_rep[r], r))
        lines = [f"Sales by rep ({len(order)} reps, total {_r(total)})", ""]
        for i, r in enumerate(order, 1):
            share = _r(by_rep[r] * 100 / total, Decimal("0.1"))
            lines.append(f"{i}. {r}: {_r(by_rep[r])} ({share}%)")
        out_rel = f"{out_dir}/sales_by_rep.txt"
        text = (f"`/home/user/{src}` is tab-separated with the header `rep<TAB>region<TAB>amount`, one deal per line.\n\n"
                f"Write `/home/user/{out_rel}` (create the directory if needed):\n\n"
                "```\nSales by rep (<number of reps> reps, total <sum of all amounts>)\n\n1. <rep>: <rep total> (<share>%)\n"
                "2. ...\n```\n\n"
                "Reps are ranked by their total, highest first (ties by name). Amounts are written with two decimals; the "
                "share is the rep's total as a percentage of the grand total, rounded to one decimal (halves up), written "
                "with one decimal. The second line is empty. Every line ends with a newline.\n\nDo not modify the input file.")
        py = ["from collections import defaultdict", "from decimal import Decimal, ROUND_HALF_UP", "acc = defaultdict(Decimal)",
              f"lines = open('/home/user/{src}').read().splitlines()[1:]", "for l in lines:", "    rep, _region, amt = l.split('\\t')",
              "    acc[rep] += Decimal(amt)", "total = sum(acc.values())",
              "out = [f'Sales by rep ({len(acc)} reps, total {total:.2f})', '']",
              "for i, r in enumerate(sorted(acc, key=lambda r: (-acc[r], r)), 1):",
              "    share = (acc[r] * 100 / total).quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)",
              "    out.append(f'{i}. {r}: {acc[r]:.2f} ({share}%)')"]
        inputs = [src]
        title = "Rank sales reps with their share"
    else:
        src = f"{pick(rng, ['monitoring', 'ops', 'status'])}/{pick(rng, ['df.txt', 'disk-usage.txt'])}"
        host = pick(rng, HOSTS)
        threshold = rng.choice([70, 80, 85, 90])
        fs = []
        mounts = rng.sample(["/", "/home", "/var", "/var/lib/docker", "/srv", "/boot", "/data", "/tmp", "/opt"], rng.randint(6, 8))
        for i, m in enumerate(mounts):
            size = rng.choice([10, 20, 50, 100, 200, 500, 1000])
            use = rng.randint(5, 99)
            if i == 0:
                use = threshold  # exactly at the threshold: counts
            used = round(size * use / 100)
            fs.append((f"/dev/sd{chr(97 + i)}1", f"{size}G", f"{used}G", f"{size - used}G", f"{use}%", m))
        hdr = "Filesystem      Size  Used Avail Use% Mounted on"
        files[src] = hdr + "\n" + "".join(f"{a:<15} {b:>4} {c:>5} {d:>5} {e:>4} {f}\n" for a, b, c, d, e, f in fs)
        hot = sorted([x for x in fs if int(x[4][:-1]) >= threshold], key=lambda x: (-int(x[4][:-1]), x[5]))
        lines = [f"host: {host}", f"threshold: {threshold}%", f"filesystems: {len(fs)}", f"at or above threshold: {len(hot)}"]
        lines += [f"  {x[5]} {x[4]}" for x in hot]
        out_rel = f"{out_dir}/disk_alert_{host}.txt"
        text = (f"`/home/user/{src}` is the output of `df -h` on host `{host}`: a header line, then one line per filesystem "
                "with the columns Filesystem, Size, Used, Avail, Use% and Mounted on.\n\n"
                f"Write `/home/user/{out_rel}` (create the directory if needed) with these lines:\n\n"
                f"```\nhost: {host}\nthreshold: {threshold}%\nfilesystems: <number of filesystems>\n"
                "at or above threshold: <N>\n  <mount point> <Use%>\n  ...\n```\n\n"
                f"where the indented lines (two spaces, the mount point, one space, the `Use%` value as written, e.g. "
                f"`87%`) list the N filesystems whose use is at least {threshold}%, highest use first, ties by mount point "
                "ascending. Every line ends with a newline.\n\nDo not modify the input file.")
        py = [f"rows = [l.split() for l in open('/home/user/{src}').read().splitlines()[1:]]",
              f"hot = sorted([r for r in rows if int(r[4][:-1]) >= {threshold}], key=lambda r: (-int(r[4][:-1]), r[5]))",
              f"out = ['host: {host}', 'threshold: {threshold}%', f'filesystems: {{len(rows)}}', f'at or above threshold: {{len(hot)}}']",
              "out += [f'  {r[5]} {r[4]}' for r in hot]"]
        inputs = [src]
        title = "Disk usage alert report"
    solution = (f"mkdir -p /home/user/{out_dir}\npython3 - <<'PY'\n" + "\n".join(py)
                + f"\nopen('/home/user/{out_rel}', 'w').write('\\n'.join(out) + '\\n')\nPY\n")
    constants = [("OUT", f"/home/user/{out_rel}"), ("EXPECTED", lines), ("INPUT_SHA256", input_hashes(files, inputs))]
    body = '''
    def _lines():
        path = Path(OUT)
        assert path.is_file(), f"{OUT} does not exist"
        return path.read_text().splitlines()


    def test_first_lines():
        got = _lines()
        assert got[:2] == EXPECTED[:2], f"the report starts with {got[:2]!r}"


    def test_line_count():
        assert len(_lines()) == len(EXPECTED)


    def test_every_expected_line_present():
        got = _lines()
        missing = [line for line in EXPECTED if line not in got]
        assert not missing, f"missing or misformatted lines: {missing[:3]}"


    def test_exact_report():
        assert Path(OUT).read_text() == "".join(line + "\\n" for line in EXPECTED)
    '''
    tests = test_module(task_id, ["import hashlib", "from pathlib import Path"], constants, body, INPUT_UNCHANGED_TEST)
    return TaskSpec(task_id=task_id, title=title, difficulty="medium", category=CATEGORY,
                    tags=["text", "report", variant.replace("_", "-"), "generated"], inputs=inputs, requires=["bash", "python3"],
                    instruction=text, solution=solution, tests=tests, files=files)
