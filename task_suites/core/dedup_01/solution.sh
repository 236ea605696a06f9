mkdir -p /home/user/reports
python3 - <<'PY'
import csv
rows = list(csv.DictReader(open('/home/user/data/contacts.csv', newline='')))
pick = {}
for i, r in enumerate(rows):
    k = ''.join(c for c in r['phone'] if c.isdigit())
    pick[k] = i
out = ['name,email,phone,city'] + [','.join(rows[i][c] for c in ('name', 'email', 'phone', 'city')) for i in sorted(pick.values())]
open('/home/user/reports/contacts_unique.csv', 'w').write('\n'.join(out) + '\n')
PY
