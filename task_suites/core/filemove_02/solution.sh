python3 - <<'PY'
import csv, os
months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
log = []
for r in csv.DictReader(open('/home/user/statements/index.csv', newline='')):
    d = r['date']
    y, m = d[6:10], d[3:5]
    new = 'filed/' + y + '/' + m + '/' + r['file']
    os.makedirs(os.path.dirname('/home/user/' + new), exist_ok=True)
    os.rename('/home/user/statements/' + r['file'], '/home/user/' + new)
    log.append(r['file'] + ' ' + new + '\n')
open('/home/user/filed/filed.log', 'w').write(''.join(log))
PY
