mkdir -p /home/user/reports
python3 - <<'PY'
import csv
from decimal import Decimal, ROUND_HALF_UP

def fmt(total, n):
    return str((Decimal(total) / n).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))

scores = {}
with open("/home/user/data/grades.csv", newline="") as fh:
    for row in csv.DictReader(fh):
        if row["score"].strip() == "ABS":
            continue
        scores.setdefault(row["student"], []).append(int(row["score"]))

students = sorted(scores)
every = [s for v in scores.values() for s in v]
best = min(students, key=lambda s: (-Decimal(sum(scores[s])) / len(scores[s]), s))
below = [s for s in students if Decimal(sum(scores[s])) / len(scores[s]) < 60]
lines = ["GRADE REPORT", "============"]
lines += [f"{s}: {fmt(sum(scores[s]), len(scores[s]))} ({len(scores[s])} scores)" for s in students]
lines += [
    "============",
    f"students: {len(students)}",
    f"scores: {len(every)}",
    f"class average: {fmt(sum(every), len(every))}",
    f"best student: {best}",
    "below 60: " + (", ".join(below) if below else "none"),
]
with open("/home/user/reports/grades.txt", "w") as fh:
    fh.write("\n".join(lines) + "\n")
PY
