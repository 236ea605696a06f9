python3 - <<'PY'
import hashlib, os, re
base = '/home/user/releases'
rows = []
for line in open('/home/user/releases/CHECKSUMS'):
    algo, name, h = re.fullmatch(r'(\w+) \((.*)\) = ([0-9a-f]+)', line.strip()).groups()
    algo = algo.lower()
    p = os.path.join(base, name)
    if not os.path.exists(p):
        s = 'missing'
    else:
        s = 'ok' if hashlib.new(algo, open(p, 'rb').read()).hexdigest() == h else 'failed'
    rows.append(f'{name}\t{algo}\t{s}\n')
os.makedirs(os.path.dirname('/home/user/out/checksums.tsv'), exist_ok=True)
open('/home/user/out/checksums.tsv', 'w').write(''.join(sorted(rows)))
PY
