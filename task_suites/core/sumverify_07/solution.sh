python3 - <<'PY'
import csv, hashlib, json, os
base = '/home/user/mirror'
res = {}
for r in csv.DictReader(open('/home/user/mirror/manifest.csv')):
    p = os.path.join(base, r['path'])
    if not os.path.exists(p):
        res[r['path']] = 'missing'
        continue
    data = open(p, 'rb').read()
    if len(data) != int(r['bytes']):
        res[r['path']] = 'bad_size'
    elif hashlib.sha256(data).hexdigest() != r['sha256']:
        res[r['path']] = 'bad_hash'
    else:
        res[r['path']] = 'ok'
os.makedirs(os.path.dirname('/home/user/out/manifest_check.json'), exist_ok=True)
out = {'checked': len(res), 'ok': sum(v == 'ok' for v in res.values()), 'results': res}
open('/home/user/out/manifest_check.json', 'w').write(json.dumps(out, indent=2) + '\n')
PY
