python3 - <<'PY'
wanted = [('MaxAuthTries', '3'), ('PermitRootLogin', 'no'), ('PasswordAuthentication', 'no'), ('ClientAliveInterval', '300')]
lines = open('/home/user/etc/ssh/sshd_config').read().split('\n')[:-1]
cut = lines.index('Match User backup') - 1
g, rest = lines[:cut], lines[cut:]
for d, v in wanted:
    active = [i for i, l in enumerate(g) if l.split(' ', 1)[0] == d]
    commented = [i for i, l in enumerate(g) if l.startswith('#' + d + ' ')]
    if active:
        g[active[0]] = f'{d} {v}'
        for i in reversed(active[1:]):
            del g[i]
    elif commented:
        g[commented[0]] = f'{d} {v}'
    else:
        g.append(f'{d} {v}')
open('/home/user/etc/ssh/sshd_config.hardened', 'w').write('\n'.join(g + rest) + '\n')
PY
