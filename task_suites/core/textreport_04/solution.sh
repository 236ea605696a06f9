mkdir -p /home/user/summaries
python3 - <<'PY'
import csv
from collections import defaultdict
from decimal import Decimal
acc = defaultdict(list)
for r in csv.DictReader(open('/home/user/finance/expenses_2024-12.csv')):
    acc[r['category']].append(Decimal(r['amount']))
t = 'EXPENSES 2024-12'
out = [t, '=' * len(t), '%-12s%11s%6s' % ('category', 'total', 'count')]
for c in sorted(acc, key=lambda c: (-sum(acc[c]), c)):
    out.append('%-12s%11.2f%6d' % (c, sum(acc[c]), len(acc[c])))
out.append('-' * 29)
out.append('%-12s%11.2f%6d' % ('TOTAL', sum(sum(v) for v in acc.values()), sum(len(v) for v in acc.values())))
open('/home/user/summaries/expenses_2024-12.txt', 'w').write('\n'.join(out) + '\n')
PY
