python3 - <<'PY'
import re
MACROS = ['@reboot', '@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']
MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC']
DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT']
RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]
def val(t, f):
    if t.isdigit():
        return int(t)
    names = MONTHS if f == 3 else DAYS if f == 4 else []
    if t.upper() in names:
        return names.index(t.upper()) + (1 if f == 3 else 0)
    return None
def ok(line):
    fs = line.split()
    if fs[0].startswith('@'):
        return fs[0] in MACROS and len(fs) > 1
    if len(fs) < 6:
        return False
    for i, field in enumerate(fs[:5]):
        lo, hi = RANGES[i]
        for item in field.split(','):
            m = re.fullmatch(r'([^/]+)(?:/(\d+))?', item)
            if not m or (m.group(2) is not None and int(m.group(2)) < 1):
                return False
            base = m.group(1)
            if base == '*':
                continue
            if m.group(2) is not None and '-' not in base:
                return False
            a, _, b = base.partition('-')
            va, vb = val(a, i), (val(b, i) if b else val(a, i))
            if va is None or vb is None or not lo <= va <= vb <= hi:
                return False
            if '-' in base and not b:
                return False
    return True
lines = open('/home/user/ops/cron/app.cron').read().split('\n')[:-1]
rep, out, nv, ni = [], [], 0, 0
for n, line in enumerate(lines, 1):
    s = line.strip()
    if not s or s.startswith('#') or re.match(r'[A-Za-z_][A-Za-z0-9_]*=', line):
        out.append(line)
        continue
    good = ok(line)
    nv, ni = nv + good, ni + (not good)
    rep.append('{n}\t{s}'.format(n=n, s='ok' if good else 'bad'))
    out.append(line if good else '#BAD ' + line)
rep.append(f'ok: {nv}, bad: {ni}')
open('/home/user/ops/cron/validation.txt', 'w').write('\n'.join(rep) + '\n')
open('/home/user/ops/cron/app.cron.checked', 'w').write('\n'.join(out) + '\n')
PY
