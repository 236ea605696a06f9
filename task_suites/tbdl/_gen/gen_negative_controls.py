"""Write task_suites/tbdl/negative_controls.jsonl: one plausible half-fix per task.

Each script is what a careful-looking agent might run in one go; each gets some parts right
(per-test counts show progress) and misses at least one, so no episode is a success.
"""

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "negative_controls.jsonl"

# Right except that quoted fields are matched as "[^"]*": escaped quotes break lines apart and
# escapes are never undone. The gzip copy and the rerunnable script are right.
WEBLOG = r'''mkdir -p /home/user/bin && cat > /home/user/bin/rollup.sh <<'EOF'
#!/usr/bin/env bash
set -euo pipefail
mkdir -p /home/user/reports /home/user/archive
python3 - <<'PY'
import json, math, re
LINE = re.compile(r'(\S+) (\S+) (\S+) \[([^\]]*)\] "([^"]*)" (\d{3}) (\d+|-) "([^"]*)" "([^"]*)" (\d+)\.(\d{3})')
out = {"requests": 0, "malformed": 0, "bytes": 0, "status": {}, "endpoints": {}, "user_agents": {}}
times, bad = {}, []
for n, line in enumerate(open("/home/user/logs/access.log", encoding="utf-8").read().split("\n")[:-1], 1):
    m = LINE.fullmatch(line)
    req = re.fullmatch(r"([A-Z]+) (/.*) (HTTP/\d\.\d)", m.group(5)) if m else None
    if not m or not req or not 100 <= int(m.group(6)) <= 599:
        bad.append(n)
        continue
    out["requests"] += 1
    out["bytes"] += 0 if m.group(7) == "-" else int(m.group(7))
    out["status"][m.group(6)] = out["status"].get(m.group(6), 0) + 1
    out["user_agents"][m.group(9)] = out["user_agents"].get(m.group(9), 0) + 1
    times.setdefault(req.group(2).split("?")[0], []).append(int(m.group(10)) * 1000 + int(m.group(11)))
out["malformed"] = len(bad)
for ep, v in times.items():
    v.sort()
    out["endpoints"][ep] = {"count": len(v), "p95_ms": v[math.ceil(0.95 * len(v)) - 1], "max_ms": v[-1]}
open("/home/user/reports/summary.json", "w").write(json.dumps(out, indent=2, sort_keys=True) + "\n")
open("/home/user/reports/malformed.txt", "w").write("".join(f"{n}\n" for n in bad))
PY
gzip -n -c /home/user/logs/access.log > /home/user/archive/access.log.gz
EOF
bash /home/user/bin/rollup.sh && cat /home/user/reports/malformed.txt | head'''

# Restores the right revision, commits it and the .gitignore, but tags with a lightweight tag
# and gives up on the lost hotfix after looking only at the reflog.
GIT = r'''cd /home/user/project && export GIT_AUTHOR_NAME="Release Bot" GIT_AUTHOR_EMAIL=release-bot@example.com GIT_COMMITTER_NAME="Release Bot" GIT_COMMITTER_EMAIL=release-bot@example.com
gone=$(git rev-list -n 1 HEAD -- src/ratelim/bucket.py)
git checkout "$gone^" -- src/ratelim/bucket.py && git commit -q -m "Restore bucket module" -- src/ratelim/bucket.py
printf 'build/\ndist/\n__pycache__/\n*.pyc\n.coverage\n' > .gitignore && git add .gitignore && git commit -q -m "Ignore build artefacts"
git tag v2.0.0
git reflog | grep -i clamp || echo "hotfix not in the reflog; nothing to rescue"
git log --oneline -4; cd /home/user'''

# csv module + float formatting: quoting, embedded newlines, escapes and sorting are right;
# decimals go through binary floating point, a lone CR splits a record, errors are generic.
CSV = r'''mkdir -p /home/user/bin /home/user/out && cat > /home/user/bin/csv2tsv <<'EOF'
#!/usr/bin/env python3
import csv, sys

def esc(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")

def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: csv2tsv INPUT OUTPUT\n")
        sys.exit(2)
    src, dst = sys.argv[1], sys.argv[2]
    try:
        with open(src, encoding="utf-8-sig", newline="") as fh:
            rows = list(csv.reader(fh, strict=True))
    except OSError:
        sys.stderr.write(f"csv2tsv: cannot read {src}\n")
        sys.exit(3)
    except csv.Error as exc:
        sys.stderr.write(f"csv2tsv: {exc}\n")
        sys.exit(4)
    header, body = rows[0], rows[1:]
    col = header.index("amount")
    lines = []
    for row in body:
        row[col] = "%.2f" % float(row[col])
        lines.append("\t".join(map(esc, row)))
    lines.sort(key=lambda s: s.encode("utf-8"))
    with open(dst, "w", encoding="utf-8", newline="") as fh:
        fh.write("\t".join(map(esc, header)) + "\n" + "".join(line + "\n" for line in lines))

main()
EOF
chmod +x /home/user/bin/csv2tsv && /home/user/bin/csv2tsv /home/user/data/ledger.csv /home/user/out/ledger.tsv && head -3 /home/user/out/ledger.tsv'''

# Fixes the first two layers (unbound OUT_DIR, missing directory) and stops once the build
# succeeds: the last record is still dropped and the mean still truncated.
BUILD = r'''cd /home/user/metrics && sed -i 's|^report="\$OUT_DIR/report.txt"$|OUT_DIR="${OUT_DIR:-out}"\nmkdir -p "$OUT_DIR"\nreport="$OUT_DIR/report.txt"|' build.sh && bash build.sh && cat out/report.txt; cd /home/user'''

rows = {"weblog_rollup": WEBLOG, "git_release_rescue": GIT, "csv_tsv_canon": CSV, "build_report_repair": BUILD}
OUT.write_text("".join(json.dumps({"task_id": k, "agent_script": v}) + "\n" for k, v in sorted(rows.items())))
print(f"wrote {OUT}")
