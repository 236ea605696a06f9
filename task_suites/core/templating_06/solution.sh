mkdir -p /home/user/build/prod
mkdir -p /home/user/build/staging
python3 - <<'PY'
import os, re
t = open('/home/user/ops/render/service.ini.in').read()
for env in ['staging', 'prod']:
    vals = {}
    for line in open('/home/user/ops/render/' + env + '.vars'):
        if '=' in line:
            k, v = line.split('=', 1)
            vals[k.strip()] = v.strip()
    out = '/home/user/build/' + env + '/service.ini'
    os.makedirs(os.path.dirname(out), exist_ok=True)
    open(out, 'w').write(re.sub(r'@([A-Z_]+)@', lambda m: vals.get(m.group(1), m.group(0)), t))
PY
