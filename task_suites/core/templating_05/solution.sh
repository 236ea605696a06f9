mkdir -p /home/user/etc
python3 - <<'PY'
import re
vals = {}
for line in open('/home/user/deploy/.env'):
    if '=' in line:
        k, v = line.rstrip('\n').split('=', 1)
        vals[k] = v
def sub(m):
    v = vals.get(m.group(1), '')
    return v if v else (m.group(3) if m.group(3) is not None else '')
t = open('/home/user/deploy/app.conf.template').read()
open('/home/user/etc/app.conf.conf', 'w').write(re.sub(r'\$\{(\w+)(:-([^}]*))?\}', sub, t))
PY
