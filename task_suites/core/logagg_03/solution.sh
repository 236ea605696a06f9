mkdir -p /home/user/stats
python3 - <<'PY'
from collections import Counter
tot = Counter()
for line in open('/home/user/var/log/web-access.log'):
    f = line.split()
    if 200 <= int(f[-2]) <= 299:
        tot[f[0]] += 0 if f[-1] == '-' else int(f[-1])
text = ''.join(f'{b} {ip}\n' for ip, b in sorted(tot.items(), key=lambda kv: (-kv[1], kv[0])))
with open('/home/user/stats/bytes_by_client.txt', 'w') as fh:
    fh.write(text)
PY
