mkdir -p /home/user/summary
python3 - <<'PY'
import json
from decimal import Decimal, ROUND_HALF_UP
agg = {}
for line in open('/home/user/var/log/requests.jsonl'):
    r = json.loads(line)
    agg.setdefault(r['user'], []).append(r['duration_ms'])
rows = sorted(agg.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
avg = lambda v: (Decimal(sum(v)) / len(v)).quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)
text = 'user,requests,total_ms,avg_ms\n' + ''.join(f'{u},{len(v)},{sum(v)},{avg(v)}\n' for u, v in rows)
with open('/home/user/summary/durations_by_user.csv', 'w') as fh:
    fh.write(text)
PY
