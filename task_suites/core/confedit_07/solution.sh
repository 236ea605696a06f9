python3 - <<'PY'
changes = {(s, k): v for s, k, v in [('server', 'workers', '8'), ('server', 'port', '443'), ('features', 'beta_ui', 'false')]}
out, sec = [], None
for line in open('/home/user/srv/app/config/app.yaml').read().splitlines():
    if line and not line.startswith((' ', '#')):
        sec = line[:-1]
    elif line.startswith('  '):
        k = line.strip().split(':', 1)[0]
        if (sec, k) in changes:
            line = f'  {k}: {changes[(sec, k)]}'
    out.append(line)
out.append('tls:')
out.append('  cert: /etc/ssl/app.pem')
out.append('  min_version: 1.2')
open('/home/user/srv/app/config/app.production.yaml', 'w').write('\n'.join(out) + '\n')
PY
