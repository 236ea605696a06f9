python3 - <<'PY'
out = []
for src in ['/home/user/security/ads.txt', '/home/user/security/trackers.txt']:
    for line in open(src):
        d = line.split('#', 1)[0].strip().lower().rstrip('.')
        if d and d not in out:
            out.append(d)
open('/home/user/security/merged.txt', 'w').write(''.join(d + '\n' for d in out))
PY
