mkdir -p /home/user/dist/config/prod
mkdir -p /home/user/dist/config/staging
python3 - <<'PY'
import os, re
t = open('/home/user/templates/app.ini.in').read()
for env in ['prod', 'staging']:
    vals = {}
    for line in open('/home/user/templates/' + env + '.vars'):
        if '=' in line:
            k, v = line.split('=', 1)
            vals[k.strip()] = v.strip()
    out = '/home/user/dist/config/' + env + '/app.ini'
    os.makedirs(os.path.dirname(out), exist_ok=True)
    open(out, 'w').write(re.sub(r'@([A-Z_]+)@', lambda m: vals.get(m.group(1), m.group(0)), t))
PY
