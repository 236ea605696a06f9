mkdir -p /home/user/extracted
python3 - <<'PY'
import json
d = json.load(open('/home/user/exports/packages.json'))
by = {}
for name, e in d['packages'].items():
    by.setdefault(e['license'] or 'UNKNOWN', []).append(name)
text = json.dumps({k: sorted(v) for k, v in sorted(by.items())}, indent=2) + '\n'
with open('/home/user/extracted/licenses.json', 'w') as fh:
    fh.write(text)
PY
