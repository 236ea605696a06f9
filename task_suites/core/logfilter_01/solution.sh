mkdir -p /home/user/out
python3 - <<'PY'
import json, sys
src = '/home/user/var/log/backend.log'
keep = []
with open(src) as fh:
    for line in fh:
        line = line.rstrip('\n')
        d, tm, level, comp = line.split(' ', 4)[:4]
        ts = d + ' ' + tm.split(',')[0]
        if '2024-03-28 15:35:22' <= ts < '2024-03-28 15:51:23' and level in ['WARN', 'ERROR', 'FATAL']:
            keep.append(line)
with open('/home/user/out/incident_window.log', 'w') as out:
    out.write(''.join(l + '\n' for l in keep))
with open('/home/user/out/matches.txt', 'w') as out:
    out.write(f'{len(keep)}\n')
PY
