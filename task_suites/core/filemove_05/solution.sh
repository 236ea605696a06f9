python3 - <<'PY'
import os
emap = {}
for line in open('/home/user/.config/sorter/sort-rules.txt'):
    if line.strip() and not line.startswith('#'):
        e, f = line.split()
        emap[e] = f
log = []
for n in sorted(os.listdir('/home/user/dropbox')):
    old = 'dropbox/' + n
    if not os.path.isfile('/home/user/' + old) or '.' not in n:
        continue
    f = emap.get(n.rsplit('.', 1)[1].lower())
    if f is None:
        continue
    new = 'organized/' + f + '/' + n
    os.makedirs(os.path.dirname('/home/user/' + new), exist_ok=True)
    os.rename('/home/user/' + old, '/home/user/' + new)
    log.append(f'{old} -> {new}\n')
open('/home/user/organized/moved.txt', 'w').write(''.join(sorted(log)))
PY
