mkdir -p /home/user/summary
python3 - <<'PY'
from collections import Counter
c = Counter()
for line in open('/home/user/ops/logs/access.log'):
    f = line.split()
    if f[8].startswith('5'):
        c[f[6].split('?')[0]] += 1
rows = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))
text = 'path,count' + '\n' + ''.join(f'{p},{n}\n' for p, n in rows)
with open('/home/user/summary/server_errors_by_path.csv', 'w') as fh:
    fh.write(text)
PY
