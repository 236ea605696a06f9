mkdir -p /home/user/out
python3 - <<'PY'
import re
vals = {}
for line in open('/home/user/vertex/conf/vars.env'):
    if line.strip() and not line.startswith('#'):
        k, v = line.rstrip('\n').split('=', 1)
        vals[k] = v
t = open('/home/user/vertex/conf/nginx.conf.tpl').read()
out = re.sub(r'\{\{\s*(\w+)\s*\}\}', lambda m: vals[m.group(1)], t)
open('/home/user/out/nginx.conf', 'w').write(out)
PY
