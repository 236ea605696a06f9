python3 - <<'PY'
import os, stat
want = {}
def mode_of(m):
    if m.isdigit():
        return int(m, 8)
    bits = 0
    for part in m.split(','):
        who, perm = part.split('=')
        val = sum({'r': 4, 'w': 2, 'x': 1}[c] for c in perm)
        for w in ('ugo' if who == 'a' else who):
            bits |= val << {'u': 6, 'g': 3, 'o': 0}[w]
    return bits
for line in open('/home/user/ops/perms.list'):
    line = line.strip()
    if not line or line.startswith('#'):
        continue
    p, m = line.split()
    want[p] = mode_of(m)
log = []
for p in sorted(want):
    full = '/home/user/srv/webapp/' + p
    old = stat.S_IMODE(os.lstat(full).st_mode)
    if old != want[p]:
        os.chmod(full, want[p])
        log.append(f'{p} {old:04o} -> {want[p]:04o}\n')
open('/home/user/ops/changes.log', 'w').write(''.join(log))
PY
