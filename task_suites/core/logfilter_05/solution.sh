mkdir -p /home/user/triage
python3 - <<'PY'
import json, sys
src = '/home/user/incoming/logs/service.log'
keep = []
with open(src) as fh:
    for line in fh:
        line = line.rstrip('\n')
        d, tm, level, comp = line.split(' ', 4)[:4]
        ts = d + ' ' + tm.split(',')[0]
        if comp == 'notifier' and level in ['WARN', 'ERROR']:
            keep.append(line)
with open('/home/user/triage/notifier_warn_error.log', 'w') as out:
    out.write(''.join(l + '\n' for l in keep))
PY
