mkdir -p /home/user/rendered
python3 - <<'PY'
import re
vals = {}
for line in open('/home/user/umbra/conf/.env'):
    if '=' in line:
        k, v = line.rstrip('\n').split('=', 1)
        vals[k] = v
def sub(m):
    v = vals.get(m.group(1), '')
    return v if v else (m.group(3) if m.group(3) is not None else '')
t = open('/home/user/umbra/conf/settings.tmpl').read()
open('/home/user/rendered/settings.conf', 'w').write(re.sub(r'\$\{(\w+)(:-([^}]*))?\}', sub, t))
PY
