mkdir -p /home/user/reports
python3 - <<'PY'
from collections import defaultdict
from decimal import Decimal, ROUND_HALF_UP
acc = defaultdict(Decimal)
lines = open('/home/user/sales/q3.tsv').read().splitlines()[1:]
for l in lines:
    rep, _region, amt = l.split('\t')
    acc[rep] += Decimal(amt)
total = sum(acc.values())
out = [f'Sales by rep ({len(acc)} reps, total {total:.2f})', '']
for i, r in enumerate(sorted(acc, key=lambda r: (-acc[r], r)), 1):
    share = (acc[r] * 100 / total).quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)
    out.append(f'{i}. {r}: {acc[r]:.2f} ({share}%)')
open('/home/user/reports/sales_by_rep.txt', 'w').write('\n'.join(out) + '\n')
PY
