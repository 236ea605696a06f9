mkdir -p /home/user/out
python3 - <<'PY'
import re
vals = {}
for line in open('/home/user/deploy/prod.vars'):
    if line.strip() and not line.startswith('#'):
        k, v = line.rstrip('\n').split('=', 1)
        vals[k] = v
t = open('/home/user/deploy/app.conf.tmpl').read()
out = re.sub(r'\{\{\s*(\w+)\s*\}\}', lambda m: vals[m.group(1)], t)
open('/home/user/out/app.conf', 'w').write(out)
PY
