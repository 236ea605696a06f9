mkdir -p /home/user/summaries
python3 - <<'PY'
rows = [l.split() for l in open('/home/user/ops/df.txt').read().splitlines()[1:]]
hot = sorted([r for r in rows if int(r[4][:-1]) >= 80], key=lambda r: (-int(r[4][:-1]), r[5]))
out = ['host: db-main', 'threshold: 80%', f'filesystems: {len(rows)}', f'at or above threshold: {len(hot)}']
out += [f'  {r[5]} {r[4]}' for r in hot]
open('/home/user/summaries/disk_alert_db-main.txt', 'w').write('\n'.join(out) + '\n')
PY
