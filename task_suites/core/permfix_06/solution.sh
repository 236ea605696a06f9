python3 - <<'PY'
import os, stat
want = {}
import csv
for r in csv.DictReader(open('/home/user/deploy/policy/permissions.csv')):
    want[r['path']] = int(r['mode'], 8)
log = []
for p in sorted(want):
    full = '/home/user/portal/' + p
    old = stat.S_IMODE(os.lstat(full).st_mode)
    if old != want[p]:
        os.chmod(full, want[p])
        log.append(f'{p} {old:04o} -> {want[p]:04o}\n')
PY
