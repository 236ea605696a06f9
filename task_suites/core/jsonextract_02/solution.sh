mkdir -p /home/user/results
python3 - <<'PY'
import json
d = json.load(open('/home/user/data/sbom.json'))
by = {}
for name, e in d['packages'].items():
    if e['dev']:
        continue
    by.setdefault(e['license'] or 'UNKNOWN', []).append(name)
text = json.dumps({k: sorted(v) for k, v in sorted(by.items())}, indent=2) + '\n'
with open('/home/user/results/licenses.json', 'w') as fh:
    fh.write(text)
PY
