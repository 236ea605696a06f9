mkdir -p /home/user/incident
python3 - <<'PY'
import json, sys
src = '/home/user/app/logs/platform.jsonl'
keep = []
with open(src) as fh:
    for line in fh:
        line = line.rstrip('\n')
        r = json.loads(line)
        if r['component'] == 'scheduler' and r['level'] in ['warn', 'error', 'fatal']:
            keep.append(line)
with open('/home/user/incident/scheduler_warn_error_fatal.log', 'w') as out:
    out.write(''.join(l + '\n' for l in keep))
PY
