mkdir -p /home/user/out
python3 - <<'PY'
import json
from decimal import Decimal
items = json.load(open('/home/user/shop/items.json'))['items']
out = ['| sku | name | qty | value |', '|---|---|---:|---:|']
total = Decimal(0)
for i in sorted(items, key=lambda i: i['sku']):
    v = Decimal(i['unit_price']) * i['qty']
    total += v
    out.append(f"| {i['sku']} | {i['name']} | {i['qty']} | {v:.2f} |")
low = sorted(i['name'] for i in items if i['qty'] < 5)
out += ['', f'Total value: {total:.2f}', 'Low stock (< 5): ' + (', '.join(low) if low else 'none')]
open('/home/user/out/inventory.md', 'w').write('\n'.join(out) + '\n')
PY
