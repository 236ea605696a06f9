mkdir -p /home/user/exports
python3 - <<'PY'
import sqlite3
con = sqlite3.connect('file:/home/user/var/lib/shop/crm.sqlite3?mode=ro', uri=True)
rows = con.execute("SELECT c.country, SUM(oi.quantity * p.price_cents) FROM orders o JOIN customers c ON c.id = o.customer_id JOIN order_items oi ON oi.order_id = o.id JOIN products p ON p.id = oi.product_id WHERE o.status = 'paid' GROUP BY c.country ORDER BY 2 DESC, 1").fetchall()
con.close()
lines = ['country,revenue'] + [f'{k},{v // 100}.{v % 100:02d}' for k, v in rows]
open('/home/user/exports/revenue_by_country.csv', 'w').write('\n'.join(lines) + '\n')
PY
