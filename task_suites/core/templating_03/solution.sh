mkdir -p /home/user/deploy
python3 - <<'PY'
import json, re
data = json.load(open('/home/user/deploy/context.json'))
def look(p):
    v = data
    for part in p.split('.'):
        v = v[part]
    return json.dumps(v) if isinstance(v, bool) else str(v)
t = open('/home/user/deploy/app.yaml.tmpl').read()
open('/home/user/deploy/app.yaml', 'w').write(re.sub(r'\{\{([\w.]+)\}\}', lambda m: look(m.group(1)), t))
PY
