mkdir -p /home/user/triage
python3 - <<'PY'
import json, sys
src = '/home/user/app/logs/worker.jsonl'
keep = []
with open(src) as fh:
    for line in fh:
        line = line.rstrip('\n')
        r = json.loads(line)
        if '2024-12-22T17:25:48' <= r['ts'] < '2024-12-22T17:36:00' and r['level'] in ['warn', 'error', 'fatal']:
            keep.append(line)
with open('/home/user/triage/incident_window.log', 'w') as out:
    out.write(''.join(l + '\n' for l in keep))
PY
