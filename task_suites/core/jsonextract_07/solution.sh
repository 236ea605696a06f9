mkdir -p /home/user/reports
python3 - <<'PY'
import json
from collections import Counter
c = Counter()
for line in open('/home/user/inventory/events.jsonl'):
    r = json.loads(line)
    if r['event'] == 'view':
        c[(r['user'].get('geo') or {}).get('country') or 'unknown'] += 1
text = ''.join(f'{k} {n}\n' for k, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))
with open('/home/user/reports/view_by_country.txt', 'w') as fh:
    fh.write(text)
PY
