"""SQLite reports: query a database file (built by the setup) and write the result as text."""

from __future__ import annotations

import random
from collections import defaultdict
from decimal import Decimal

from ..common import FIRST_NAMES, LAST_NAMES, PROJECT_WORDS, TaskSpec, pick, test_module

FAMILY = "sqlreport"
CATEGORY = "sql"
VARIANTS = ("revenue_by_country", "top_products", "inactive_customers", "monthly_signups")
COUNTRIES = ["PT", "NO", "KE", "PE", "JP", "EE", "GH", "VN"]


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    variant = VARIANTS[index % len(VARIANTS)]
    folder = pick(rng, ["db", "data", "var/lib/shop", "srv/app/data"])
    db_rel = f"{folder}/{pick(rng, ['shop.db', 'store.sqlite', 'crm.sqlite3', 'app.db'])}"
    customers = []
    for cid in range(1, rng.randint(10, 15)):
        f, l = rng.choice(FIRST_NAMES).title(), rng.choice(LAST_NAMES).title()
        signup = f"2024-{rng.randint(1, 5):02d}-{rng.randint(1, 28):02d}"
        customers.append((cid, f"{f} {l}", rng.choice(COUNTRIES[:5]), signup))
    products = [(pid, w, Decimal(rng.randint(199, 9999)) / 100) for pid, w in enumerate(rng.sample(PROJECT_WORDS, 6), 1)]
    orders, items = [], []
    oid = 100
    for _ in range(rng.randint(18, 26)):
        oid += rng.randint(1, 3)
        c = rng.choice(customers[:-2])  # the last two customers never order
        status = rng.choice(["paid", "paid", "paid", "refunded", "pending"])
        day = f"2024-{rng.randint(1, 9):02d}-{rng.randint(1, 28):02d}"
        orders.append((oid, c[0], day, status))
        for p in rng.sample(products, rng.randint(1, 3)):
            items.append((oid, p[0], rng.randint(1, 5)))
    sql = ["CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL, signup_date TEXT NOT NULL);",
           "CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price_cents INTEGER NOT NULL);",
           "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), "
           "order_date TEXT NOT NULL, status TEXT NOT NULL);",
           "CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), product_id INTEGER NOT NULL "
           "REFERENCES products(id), quantity INTEGER NOT NULL);"]
    sql += [f"INSERT INTO customers VALUES ({c[0]}, {_sql_str(c[1])}, '{c[2]}', '{c[3]}');" for c in customers]
    sql += [f"INSERT INTO products VALUES ({p[0]}, {_sql_str(p[1])}, {int(p[2] * 100)});" for p in products]
    sql += [f"INSERT INTO orders VALUES ({o[0]}, {o[1]}, '{o[2]}', '{o[3]}');" for o in orders]
    sql += [f"INSERT INTO order_items VALUES ({i[0]}, {i[1]}, {i[2]});" for i in items]
    script = "\n".join(sql)
    setup = ("# Build the SQLite database from a fixed script (the script itself is not left behind).\n"
             f"mkdir -p /home/user/{folder}\n"
             f"python3 - <<'PY'\nimport sqlite3\ncon = sqlite3.connect('/home/user/{db_rel}')\ncon.executescript('''\n"
             + script + "\n''')\ncon.commit()\ncon.close()\nPY\n")
    price = {p[0]: p[2] for p in products}
    cust = {c[0]: c for c in customers}
    out_dir = pick(rng, ["reports", "out", "exports"])
    schema = ("The database has the tables `customers(id, name, country, signup_date)`, `products(id, name, price_cents)`, "
              "`orders(id, customer_id, order_date, status)` and `order_items(order_id, product_id, quantity)`; dates are "
              "`YYYY-MM-DD` text and prices are integer cents.")
    if variant == "revenue_by_country":
        revenue: defaultdict[str, int] = defaultdict(int)
        for o in orders:
            if o[3] == "paid":
                for i in items:
                    if i[0] == o[0]:
                        revenue[cust[o[1]][2]] += int(price[i[1]] * 100) * i[2]
        by_country = sorted(revenue.items(), key=lambda kv: (-kv[1], kv[0]))
        lines = ["country,revenue"] + [f"{k},{v // 100}.{v % 100:02d}" for k, v in by_country]
        out_rel = f"{out_dir}/revenue_by_country.csv"
        ask = ("the revenue per customer country from orders whose status is `paid` (revenue = sum of quantity times "
               "price over their items), as CSV with the header `country,revenue`, the revenue in currency units with two "
               "decimals (e.g. `1234.50`), sorted by revenue descending, ties by country")
        query = ("SELECT c.country, SUM(oi.quantity * p.price_cents) FROM orders o JOIN customers c ON c.id = o.customer_id "
                 "JOIN order_items oi ON oi.order_id = o.id JOIN products p ON p.id = oi.product_id WHERE o.status = 'paid' "
                 "GROUP BY c.country ORDER BY 2 DESC, 1")
        fmt = "lines = ['country,revenue'] + [f'{k},{v // 100}.{v % 100:02d}' for k, v in rows]"
    elif variant == "top_products":
        n = rng.choice([3, 4])
        units: defaultdict[int, int] = defaultdict(int)
        for o in orders:
            if o[3] != "refunded":
                for i in items:
                    if i[0] == o[0]:
                        units[i[1]] += i[2]
        names = {p[0]: p[1] for p in products}
        top = sorted(units.items(), key=lambda kv: (-kv[1], names[kv[0]]))[:n]
        lines = [f"{r}. {names[pid]} ({q} units)" for r, (pid, q) in enumerate(top, 1)]
        out_rel = f"{out_dir}/top_products.txt"
        ask = (f"the {n} products with the most units ordered, counting every order except those whose status is "
               f"`refunded`: lines `<rank>. <product name> (<units> units)`, rank starting at 1, most units first, ties "
               "by product name ascending")
        query = ("SELECT p.name, SUM(oi.quantity) AS u FROM order_items oi JOIN orders o ON o.id = oi.order_id "
                 f"JOIN products p ON p.id = oi.product_id WHERE o.status != 'refunded' GROUP BY p.id ORDER BY u DESC, p.name LIMIT {n}")
        fmt = "lines = [f'{i}. {name} ({u} units)' for i, (name, u) in enumerate(rows, 1)]"
    elif variant == "inactive_customers":
        with_paid = {o[1] for o in orders if o[3] == "paid"}
        inactive = sorted((c for c in customers if c[0] not in with_paid), key=lambda c: c[0])
        lines = ["id\tname\tcountry"] + [f"{c[0]}\t{c[1]}\t{c[2]}" for c in inactive]
        out_rel = f"{out_dir}/no_paid_orders.tsv"
        ask = ("the customers that have no order with status `paid` (including those with no orders at all), "
               "tab-separated with the header `id<TAB>name<TAB>country`, sorted by id")
        query = ("SELECT id, name, country FROM customers WHERE id NOT IN (SELECT customer_id FROM orders WHERE status = 'paid') "
                 "ORDER BY id")
        fmt = "lines = ['id\\tname\\tcountry'] + ['\\t'.join(str(x) for x in r) for r in rows]"
    else:
        signups: defaultdict[str, int] = defaultdict(int)
        for c in customers:
            signups[c[3][:7]] += 1
        lines = [f"{m} {'#' * k} {k}" for m, k in sorted(signups.items())]
        out_rel = f"{out_dir}/signups_per_month.txt"
        ask = ("the number of customers per signup month: one line per month that has signups, in ascending order, "
               "`YYYY-MM <bar> <count>` where the bar is `#` repeated count times (e.g. `2024-03 ### 3`)")
        query = "SELECT substr(signup_date, 1, 7) AS m, COUNT(*) FROM customers GROUP BY m ORDER BY m"
        fmt = "lines = [f\"{m} {'#' * k} {k}\" for m, k in rows]"
    text = (f"`/home/user/{db_rel}` is a SQLite database. {schema}\n\n"
            f"Write to `/home/user/{out_rel}` (create the directory if needed) {ask}. Every line ends with a newline.\n\n"
            "Open the database read-only or at least do not change it.")
    py = ["import sqlite3", f"con = sqlite3.connect('file:/home/user/{db_rel}?mode=ro', uri=True)",
          f"rows = con.execute({query!r}).fetchall()", "con.close()", fmt,
          f"open('/home/user/{out_rel}', 'w').write('\\n'.join(lines) + '\\n')"]
    solution = f"mkdir -p /home/user/{out_dir}\npython3 - <<'PY'\n" + "\n".join(py) + "\nPY\n"
    counts = {"customers": len(customers), "products": len(products), "orders": len(orders), "order_items": len(items)}
    constants = [("OUT", f"/home/user/{out_rel}"), ("EXPECTED", lines), ("DB", f"/home/user/{db_rel}"), ("COUNTS", counts)]
    body = '''
    def _lines():
        path = Path(OUT)
        assert path.is_file(), f"{OUT} does not exist"
        return path.read_text().splitlines()


    def test_not_empty():
        assert _lines(), "the output is empty"


    def test_same_rows():
        assert sorted(_lines()) == sorted(EXPECTED)


    def test_exact_output():
        assert Path(OUT).read_text() == "".join(line + "\\n" for line in EXPECTED)


    def test_database_unchanged():
        assert Path(DB).is_file(), f"{DB} is missing"
        con = sqlite3.connect(f"file:{DB}?mode=ro", uri=True)
        try:
            for table, n in COUNTS.items():
                assert con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == n, f"{table} was changed"
        finally:
            con.close()
    '''
    tests = test_module(task_id, ["import sqlite3", "from pathlib import Path"], constants, body)
    return TaskSpec(task_id=task_id, title=f"SQLite report: {variant.replace('_', ' ')}", difficulty="medium",
                    category=CATEGORY, tags=["sql", "sqlite", variant.replace("_", "-"), "generated"], inputs=[db_rel],
                    requires=["bash", "python3"], instruction=text, solution=solution, tests=tests, files={}, setup=setup)
