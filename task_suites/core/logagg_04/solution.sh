mkdir -p /home/user/summary
python3 - <<'PY'
from collections import Counter
c = Counter()
for line in open('/home/user/srv/logs/worker.log'):
    stamp, rest = line[1:20], line[22:]
    if rest.startswith('ERROR:'):
        c[stamp[:13] + ':00'] += 1
text = ''.join(f'{h} {n}\n' for h, n in sorted(c.items()))
with open('/home/user/summary/errors_per_hour.txt', 'w') as fh:
    fh.write(text)
PY
