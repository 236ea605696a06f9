mkdir -p /home/user/reports
python3 - <<'PY'
import json, math
from decimal import Decimal, ROUND_HALF_UP

stats = {}
with open("/home/user/logs/requests.log") as fh:
    for line in fh:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        _date, _time, _method, path, status, latency = line.split()
        if int(status) >= 500:
            continue
        stats.setdefault(path.split("?", 1)[0], []).append(int(latency[:-2]))

out = {}
for endpoint in sorted(stats):
    values = sorted(stats[endpoint])
    n = len(values)
    avg = (Decimal(sum(values)) / n).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    out[endpoint] = {
        "count": n,
        "avg_ms": float(avg),
        "p95_ms": values[math.ceil(0.95 * n) - 1],
        "max_ms": values[-1],
    }
with open("/home/user/reports/latency.json", "w") as fh:
    json.dump(out, fh, indent=2)
    fh.write("\n")
PY
