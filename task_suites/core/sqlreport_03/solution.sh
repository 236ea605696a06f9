mkdir -p /home/user/out
python3 - <<'PY'
import sqlite3
con = sqlite3.connect('file:/home/user/srv/app/data/shop.db?mode=ro', uri=True)
rows = con.execute('SELECT substr(signup_date, 1, 7) AS m, COUNT(*) FROM customers GROUP BY m ORDER BY m').fetchall()
con.close()
lines = [f"{m} {'#' * k} {k}" for m, k in rows]
open('/home/user/out/signups_per_month.txt', 'w').write('\n'.join(lines) + '\n')
PY
