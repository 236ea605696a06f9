mkdir -p /home/user/reports
python3 - <<'PY'
import sqlite3
con = sqlite3.connect('file:/home/user/data/store.sqlite?mode=ro', uri=True)
rows = con.execute("SELECT p.name, SUM(oi.quantity) AS u FROM order_items oi JOIN orders o ON o.id = oi.order_id JOIN products p ON p.id = oi.product_id WHERE o.status != 'refunded' GROUP BY p.id ORDER BY u DESC, p.name LIMIT 4").fetchall()
con.close()
lines = [f'{i}. {name} ({u} units)' for i, (name, u) in enumerate(rows, 1)]
open('/home/user/reports/top_products.txt', 'w').write('\n'.join(lines) + '\n')
PY
