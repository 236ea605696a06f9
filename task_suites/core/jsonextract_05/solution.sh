mkdir -p /home/user/results
python3 - <<'PY'
import json
from decimal import Decimal
orders = json.load(open('/home/user/api_dump/orders.json'))
out = ['order\tcity\tsku\tqty\ttotal']
for o in orders:
    if o['status'] in ['paid']:
        for it in o['items']:
            t = Decimal(it['unit_price']) * it['qty']
            out.append(f"{o['id']}\t{o['customer']['city']}\t{it['sku']}\t{it['qty']}\t{t:.2f}")
text = '\n'.join(out) + '\n'
with open('/home/user/results/order_lines.tsv', 'w') as fh:
    fh.write(text)
PY
