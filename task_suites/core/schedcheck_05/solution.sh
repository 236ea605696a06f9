python3 - <<'PY'
import os
TYPES = ['simple', 'exec', 'forking', 'oneshot', 'notify', 'dbus', 'idle']
RESTARTS = ['no', 'on-success', 'on-failure', 'on-abnormal', 'on-watchdog', 'on-abort', 'always']
def parse(path):
    sec, cur = {}, None
    for line in open(path):
        s = line.strip()
        if not s or s[0] in '#;':
            continue
        if s[0] == '[' and s[-1] == ']':
            cur = s[1:-1]
            sec.setdefault(cur, [])
        elif '=' in s and cur:
            k, v = s.split('=', 1)
            sec[cur].append((k.strip(), v.strip()))
    return sec
def check(path):
    sec = parse(path)
    get = lambda s, k: [v for kk, v in sec.get(s, []) if kk == k]
    if not any(get('Unit', 'Description')):
        return 'NO_DESCRIPTION'
    ex = get('Service', 'ExecStart')
    if not ex:
        return 'NO_EXECSTART'
    if not ex[0].split() or not ex[0].split()[0].lstrip('-@+!').startswith('/'):
        return 'RELATIVE_EXECSTART'
    if any(v not in TYPES for v in get('Service', 'Type')):
        return 'BAD_TYPE'
    if any(v not in RESTARTS for v in get('Service', 'Restart')):
        return 'BAD_RESTART'
    wb = get('Install', 'WantedBy')
    if not wb:
        return 'NO_WANTEDBY'
    if any(not v.endswith('.target') for v in wb):
        return 'BAD_WANTEDBY'
    return 'OK'
units = [l.strip() for l in open('/home/user/systemd/INDEX') if l.strip()]
res = [(u, check('/home/user/systemd/' + u)) for u in units]
out = [f'{u}: {s}' for u, s in res] + [f"checked: {len(res)}, ok: {sum(s == 'OK' for _, s in res)}"]
os.makedirs('/home/user/lint', exist_ok=True)
open('/home/user/lint/units.txt', 'w').write('\n'.join(out) + '\n')
PY
