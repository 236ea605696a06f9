python3 - <<'PY'
out = []
for src in ['/home/user/dns/ads.txt', '/home/user/dns/malware.txt']:
    for line in open(src):
        d = line.split('#', 1)[0].strip().lower().rstrip('.')
        if d and d not in out:
            out.append(d)
open('/home/user/dns/blocklist.combined', 'w').write(''.join(d + '\n' for d in out))
PY
