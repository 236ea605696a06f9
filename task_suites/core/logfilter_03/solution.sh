mkdir -p /home/user/triage
python3 - <<'PY'
import json, sys
src = '/home/user/app/logs/access.log'
keep = []
with open(src) as fh:
    for line in fh:
        line = line.rstrip('\n')
        f = line.split()
        status, path = int(f[8]), f[6]
        if status >= 500:
            keep.append(line)
with open('/home/user/triage/server_errors.log', 'w') as out:
    out.write(''.join(l + '\n' for l in keep))
PY
