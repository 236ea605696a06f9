python3 - <<'PY'
import re
path = '/home/user/app/config.ini'
lines = open(path).read().split('\n')[:-1]
for req in open('/home/user/app/change-request.txt'):
    req = req.strip()
    if not req or req.startswith('#'):
        continue
    op, ref, *val = req.split(' ', 2)
    sec, key = ref.split('.', 1)
    cur, last_kv, hits = None, None, []
    for i, line in enumerate(lines):
        m = re.fullmatch(r'\[(.+)\]', line)
        if m:
            cur = m.group(1)
            continue
        if cur == sec and ' = ' in line and not line.startswith(';'):
            last_kv = i
            if line.split(' = ', 1)[0] == key:
                hits.append(i)
    if op == 'set':
        for i in hits:
            lines[i] = f'{key} = {val[0]}'
    elif op == 'delete':
        for i in reversed(hits):
            del lines[i]
    else:
        lines.insert(last_kv + 1, f'{key} = {val[0]}')
open(path, 'w').write('\n'.join(lines) + '\n')
PY
