python3 - <<'PY'
import hashlib, os
root = '/home/user/media'
paths = sorted(l.strip() for l in open('/home/user/media/inventory.txt') if l.strip())
first, out = {}, []
for p in paths:
    h = hashlib.sha256(open(os.path.join(root, p), 'rb').read()).hexdigest()
    if h not in first:
        first[h] = p
        continue
    keep = first[h]
    full = os.path.join(root, p)
    os.remove(full)
    os.symlink(os.path.relpath(os.path.join(root, keep), os.path.dirname(full)), full)
    out.append(f'{p} {keep}\n')
os.makedirs('/home/user/cleanup', exist_ok=True)
open('/home/user/cleanup/duplicates.txt', 'w').write(''.join(sorted(out)))
PY
