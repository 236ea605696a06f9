mkdir -p /home/user/reports
python3 - <<'PY'
import sqlite3
con = sqlite3.connect('file:/home/user/data/app.db?mode=ro', uri=True)
rows = con.execute("SELECT id, name, country FROM customers WHERE id NOT IN (SELECT customer_id FROM orders WHERE status = 'paid') ORDER BY id").fetchall()
con.close()
lines = ['id\tname\tcountry'] + ['\t'.join(str(x) for x in r) for r in rows]
open('/home/user/reports/no_paid_orders.tsv', 'w').write('\n'.join(lines) + '\n')
PY
