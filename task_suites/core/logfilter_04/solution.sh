mkdir -p /home/user/incident
python3 - <<'PY'
import json, sys
src = '/home/user/incoming/logs/platform.log'
keep = []
with open(src) as fh:
    for line in fh:
        line = line.rstrip('\n')
        ts, level, comp = line.split(' ', 3)[:3]
        comp = comp.strip('[]')
        if '2024-03-11T06:11:30Z' <= ts < '2024-03-11T06:29:07Z' and level in ['WARN', 'ERROR', 'FATAL']:
            keep.append(line)
with open('/home/user/incident/incident_window.log', 'w') as out:
    out.write(''.join(l + '\n' for l in keep))
with open('/home/user/incident/count.txt', 'w') as out:
    out.write(f'{len(keep)}\n')
PY
