mkdir -p /home/user/reports
python3 - <<'PY'
import csv
with open('/home/user/work/tables/visits_wide.csv', newline='') as fh:
    rows = list(csv.reader(fh, delimiter='|'))
out = ['store,period,value']
for row in rows[1:]:
    for col, val in zip(rows[0][1:], row[1:]):
        if val != '':
            out.append(f'{row[0]},{col},{val}')
text = '\n'.join(out) + '\n'
with open('/home/user/reports/visits_long.csv', 'w') as fh:
    fh.write(text)
PY
