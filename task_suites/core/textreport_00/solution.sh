mkdir -p /home/user/reports
python3 - <<'PY'
import csv
from collections import defaultdict
from decimal import Decimal
acc = defaultdict(list)
for r in csv.DictReader(open('/home/user/finance/expenses_2024-10.csv')):
    acc[r['category']].append(Decimal(r['amount']))
t = 'EXPENSES 2024-10'
out = [t, '=' * len(t), '%-16s%12s%7s' % ('category', 'total', 'count')]
for c in sorted(acc, key=lambda c: (-sum(acc[c]), c)):
    out.append('%-16s%12.2f%7d' % (c, sum(acc[c]), len(acc[c])))
out.append('-' * 35)
out.append('%-16s%12.2f%7d' % ('TOTAL', sum(sum(v) for v in acc.values()), sum(len(v) for v in acc.values())))
open('/home/user/reports/expenses_2024-10.txt', 'w').write('\n'.join(out) + '\n')
PY
