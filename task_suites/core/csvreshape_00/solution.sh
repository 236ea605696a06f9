mkdir -p /home/user/tables
python3 - <<'PY'
import csv
from collections import defaultdict
acc = defaultdict(int)
with open('/home/user/data/shipments.tsv', newline='') as fh:
    for row in csv.DictReader(fh, delimiter='\t'):
        acc[(row['region'], row['product'])] += int(row['units'])
regs = sorted({r for r, _ in acc}); prods = sorted({p for _, p in acc})
lines = [','.join(['region'] + prods)] + [','.join([r] + [str(acc.get((r, p), 0)) for p in prods]) for r in regs]
text = '\n'.join(lines) + '\n'
with open('/home/user/tables/units_by_region.csv', 'w') as fh:
    fh.write(text)
PY
