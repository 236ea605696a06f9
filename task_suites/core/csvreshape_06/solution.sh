mkdir -p /home/user/processed
python3 - <<'PY'
import csv
cols = ['id', 'city', 'name']
names = ['customer_id', 'location', 'full_name']
out = ['\t'.join(names)]
with open('/home/user/data/members.csv', newline='') as fh:
    for row in csv.DictReader(fh):
        if row['status'] == 'active':
            out.append('\t'.join(row[c] for c in cols))
text = '\n'.join(out) + '\n'
with open('/home/user/processed/active_members.tsv', 'w') as fh:
    fh.write(text)
PY
