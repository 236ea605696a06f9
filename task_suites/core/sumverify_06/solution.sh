python3 - <<'PY'
import hashlib, os
base, q = '/home/user/releases', '/home/user/rejected'
os.makedirs(q, exist_ok=True)
bad, missing = [], []
for line in open('/home/user/releases/sha256sums.txt'):
    h, name = line.rstrip('\n').split('  ', 1)
    p = os.path.join(base, name)
    if not os.path.exists(p):
        missing.append(name)
    elif hashlib.sha256(open(p, 'rb').read()).hexdigest() != h:
        os.rename(p, os.path.join(q, os.path.basename(name)))
        bad.append(name)
open('/home/user/rejected/REPORT', 'w').write(''.join(f'corrupt {n}\n' for n in sorted(bad)) + ''.join(f'missing {n}\n' for n in sorted(missing)))
PY
