python3 - <<'PY'
import re

RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]
ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def item_ok(item, lo, hi):
    m = re.fullmatch(r"\*(?:/(\d+))?", item)
    if m:
        return m.group(1) is None or int(m.group(1)) >= 1
    m = re.fullmatch(r"(\d+)", item)
    if m:
        return lo <= int(m.group(1)) <= hi
    m = re.fullmatch(r"(\d+)-(\d+)(?:/(\d+))?", item)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        step_ok = m.group(3) is None or int(m.group(3)) >= 1
        return lo <= a <= b <= hi and step_ok
    return False


def entry_ok(line):
    fields = line.split()
    if len(fields) < 6:
        return False
    return all(
        all(item_ok(item, lo, hi) for item in field.split(","))
        for field, (lo, hi) in zip(fields[:5], RANGES)
    )


with open("/home/user/cron/jobs.crontab", newline="") as fh:
    lines = fh.read().split("\n")
trailing = lines[-1] == ""
if trailing:
    lines.pop()

report, clean, valid, invalid = [], [], 0, 0
for number, line in enumerate(lines, 1):
    stripped = line.strip()
    if not stripped or stripped.startswith("#") or ASSIGN.match(line):
        clean.append(line)
        continue
    if entry_ok(line):
        valid += 1
        report.append(f"{number} OK")
        clean.append(line)
    else:
        invalid += 1
        report.append(f"{number} INVALID")
report.append(f"valid: {valid}, invalid: {invalid}")

with open("/home/user/cron/report.txt", "w") as fh:
    fh.write("\n".join(report) + "\n")
with open("/home/user/cron/jobs.clean.crontab", "w", newline="") as fh:
    fh.write("\n".join(clean) + ("\n" if trailing else ""))
PY
