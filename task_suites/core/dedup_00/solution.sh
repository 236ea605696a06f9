python3 - <<'PY'
import hashlib, os
root = '/home/user/archive/photos'
paths = sorted(l.strip() for l in open('/home/user/archive/photos/files.lst') if l.strip())
first, out = {}, []
for p in paths:
    h = hashlib.sha256(open(os.path.join(root, p), 'rb').read()).hexdigest()
    if h not in first:
        first[h] = p
        continue
    keep = first[h]
    full = os.path.join(root, p)
    os.remove(full)
    out.append(f'{p} {keep}\n')
os.makedirs('/home/user/out', exist_ok=True)
open('/home/user/out/duplicates.txt', 'w').write(''.join(sorted(out)))
PY
