mkdir -p /home/user/backups/2024-11-17
python3 - <<'PY'
import hashlib, os, shutil
sel = [l.strip() for l in open('/home/user/etc/backup.list') if l.strip() and not l.startswith('#')]
dest = '/home/user/backups/2024-11-17'
rows = []
for p in sorted(sel):
    src, dst = '/home/user/' + p, os.path.join(dest, p)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy2(src, dst)
    data = open(src, 'rb').read()
    rows.append((p, hashlib.md5(data).hexdigest(), len(data)))
text = 'path,bytes,md5\n' + ''.join(f'{p},{n},{h}\n' for p, h, n in rows)
open('/home/user/backups/2024-11-17/manifest.csv', 'w').write(text)
PY
