python3 - <<'PY'
import os, re
d = '/home/user/media/raw'
log = []
for n in open('/home/user/media/raw/rename-these.txt', encoding='utf-8').read().splitlines():
    if not n:
        continue
    stem, ext = n.rsplit('.', 1)
    new = re.sub(r'[^a-z0-9]+', '_', stem.lower()).strip('_') + '.' + ext.lower()
    os.rename(os.path.join(d, n), os.path.join(d, new))
    log.append(f'{n}\t{new}\n')
open('/home/user/media/raw/renamed.tsv', 'w', encoding='utf-8').write(''.join(log))
PY
