mkdir -p /home/user/out
python3 - <<'PY'
rows = [l.split() for l in open('/home/user/status/df.txt').read().splitlines()[1:]]
hot = sorted([r for r in rows if int(r[4][:-1]) >= 85], key=lambda r: (-int(r[4][:-1]), r[5]))
out = ['host: app-us2', 'threshold: 85%', f'filesystems: {len(rows)}', f'at or above threshold: {len(hot)}']
out += [f'  {r[5]} {r[4]}' for r in hot]
open('/home/user/out/disk_alert_app-us2.txt', 'w').write('\n'.join(out) + '\n')
PY
