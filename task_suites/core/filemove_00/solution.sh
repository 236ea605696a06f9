python3 - <<'PY'
import os
skipped = []
for line in open('/home/user/ops/moves.tsv'):
    if line.startswith('#') or not line.strip():
        continue
    old, new = line.rstrip('\n').split('\t')
    old, new = '/home/user/' + old, '/home/user/' + new
    if not os.path.exists(old):
        skipped.append(line.split('\t')[0] + '\n')
        continue
    os.makedirs(os.path.dirname(new), exist_ok=True)
    os.rename(old, new)
open('/home/user/ops/skipped.txt', 'w').write(''.join(skipped))
PY
