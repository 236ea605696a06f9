mkdir -p /home/user/reports
python3 - <<'PY'
from collections import Counter, defaultdict
m = defaultdict(Counter)
for line in open('/home/user/logs/platform.log'):
    if not line.strip() or line.startswith('#'):
        continue
    f = line.split()
    m[f[2].strip('[]')][f[1]] += 1
lv = ['DEBUG', 'INFO', 'WARN', 'ERROR']
text = 'component,' + ','.join(lv) + '\n' + ''.join(c + ',' + ','.join(str(m[c][l]) for l in lv) + '\n' for c in sorted(m))
with open('/home/user/reports/levels_by_component.csv', 'w') as fh:
    fh.write(text)
PY
