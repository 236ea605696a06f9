mkdir -p /home/user/reports
python3 - <<'PY'
import json, sys
src = '/home/user/logs/access.log'
keep = []
with open(src) as fh:
    for line in fh:
        line = line.rstrip('\n')
        f = line.split()
        status, path = int(f[8]), f[6]
        if 400 <= status <= 499 and path.startswith('/api/'):
            keep.append(line)
with open('/home/user/reports/api_client_errors.log', 'w') as out:
    out.write(''.join(l + '\n' for l in keep))
PY
