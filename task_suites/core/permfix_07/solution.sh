python3 - <<'PY'
import os, stat
want = {}
for line in open('/home/user/deploy/policy/perms.list'):
    if not line.strip() or line.startswith('#'):
        continue
    p, m = line.split(': ')
    want[p] = int(m, 8)
log = []
for p in sorted(want):
    full = '/home/user/www/webapp/' + p
    old = stat.S_IMODE(os.lstat(full).st_mode)
    if old != want[p]:
        os.chmod(full, want[p])
        log.append(f'{p} {old:04o} -> {want[p]:04o}\n')
open('/home/user/deploy/policy/perm-report.txt', 'w').write(''.join(log))
PY
