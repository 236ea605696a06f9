mkdir -p /home/user/tables
python3 - <<'PY'
import csv
cols = ['name', 'id', 'city']
names = ['customer', 'customer_id', 'location']
out = ['\t'.join(names)]
with open('/home/user/incoming/members.csv', newline='') as fh:
    for row in csv.DictReader(fh):
        if row['status'] == 'active':
            out.append('\t'.join(row[c] for c in cols))
text = '\n'.join(out) + '\n'
with open('/home/user/tables/active_members.tsv', 'w') as fh:
    fh.write(text)
PY
