mkdir -p /home/user/out
python3 - <<'PY'
import csv
from decimal import Decimal, ROUND_HALF_UP

sensors, months, acc = set(), set(), {}
with open("/home/user/data/readings.csv", newline="") as fh:
    for row in csv.DictReader(fh):
        month, sensor, value = row["timestamp"][:7], row["sensor"], row["value"]
        sensors.add(sensor)
        months.add(month)
        if value != "":
            acc.setdefault((month, sensor), []).append(Decimal(value))

header = ["month"] + sorted(sensors)
lines = [",".join(header)]
for month in sorted(months):
    cells = [month]
    for sensor in sorted(sensors):
        values = acc.get((month, sensor))
        if values:
            mean = sum(values) / len(values)
            cells.append(str(mean.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)))
        else:
            cells.append("")
    lines.append(",".join(cells))
with open("/home/user/out/monthly.csv", "w") as fh:
    fh.write("\n".join(lines) + "\n")
PY
