mkdir -p /home/user/summary
python3 - <<'PY'
import re
from collections import Counter
c = Counter()
for line in open('/home/user/ops/logs/syslog'):
    f = line.split()
    c[(f[3], re.sub(r'(\[\d+\])?:$', '', f[4]))] += 1
text = 'host,program,count\n' + ''.join(f'{h},{p},{k}\n' for (h, p), k in sorted(c.items()))
with open('/home/user/summary/messages_by_program.csv', 'w') as fh:
    fh.write(text)
PY
