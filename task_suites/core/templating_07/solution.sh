mkdir -p /home/user/rendered
python3 - <<'PY'
import json, re
data = json.load(open('/home/user/ops/render/context.json'))
def look(p):
    v = data
    for part in p.split('.'):
        v = v[part]
    return json.dumps(v) if isinstance(v, bool) else str(v)
t = open('/home/user/ops/render/docker-compose.yml.tmpl').read()
open('/home/user/rendered/docker-compose.yml', 'w').write(re.sub(r'\{\{([\w.]+)\}\}', lambda m: look(m.group(1)), t))
PY
