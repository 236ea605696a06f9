mkdir -p /home/user/reports
python3 - <<'PY'
import csv
clients = {r['client_id']: r for r in csv.DictReader(open('/home/user/shared/csv/customers_ref.csv', newline=''))}
out = ['order_id,name,country,amount']
for o in csv.DictReader(open('/home/user/shared/csv/orders.csv', newline='')):
    c = clients.get(o['client_id'])
    if c:
        out.append(','.join([o['order_id'], c['name'], c['country'], o['amount']]))
text = '\n'.join(out) + '\n'
with open('/home/user/reports/orders_with_clients.csv', 'w') as fh:
    fh.write(text)
PY
