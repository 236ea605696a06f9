mkdir -p /home/user/bin
cat > /home/user/bin/rollup.sh <<'SCRIPT'
#!/usr/bin/env bash
# Roll up /home/user/logs/access.log into a summary, a malformed-line index and a gzip copy.
set -euo pipefail
LOG=/home/user/logs/access.log
mkdir -p /home/user/reports /home/user/archive
python3 - "$LOG" <<'PY'
import gzip, json, os, re, sys

log = sys.argv[1]
Q = r'"((?:[^"\\]|\\.)*)"'
LINE = re.compile(r'(\S+) (\S+) (\S+) \[([^\]]*)\] ' + Q + r' (\d{3}) (\d+|-) ' + Q + ' ' + Q + r' (\d+)\.(\d{3})')
REQ = re.compile(r'([A-Z]+) (/.*) (HTTP/\d\.\d)', re.S)

def unescape(s):
    return re.sub(r'\\(["\\])', r'\1', s)

def write(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)

raw = open(log, "rb").read()
summary = {"requests": 0, "malformed": 0, "bytes": 0, "status": {}, "endpoints": {}, "user_agents": {}}
times = {}
bad = []
for number, line in enumerate(raw.decode("utf-8").split("\n")[:-1], 1):
    m = LINE.fullmatch(line)
    req = REQ.fullmatch(unescape(m.group(5))) if m else None
    if not m or not req or not 100 <= int(m.group(6)) <= 599:
        bad.append(number)
        continue
    summary["requests"] += 1
    summary["bytes"] += 0 if m.group(7) == "-" else int(m.group(7))
    summary["status"][m.group(6)] = summary["status"].get(m.group(6), 0) + 1
    ua = unescape(m.group(9))
    summary["user_agents"][ua] = summary["user_agents"].get(ua, 0) + 1
    endpoint = req.group(2).split("?", 1)[0]
    times.setdefault(endpoint, []).append(int(m.group(10)) * 1000 + int(m.group(11)))
summary["malformed"] = len(bad)
for endpoint, values in times.items():
    values.sort()
    n = len(values)
    summary["endpoints"][endpoint] = {"count": n, "p95_ms": values[(95 * n + 99) // 100 - 1], "max_ms": values[-1]}
write("/home/user/reports/summary.json", (json.dumps(summary, indent=2, sort_keys=True) + "\n").encode())
write("/home/user/reports/malformed.txt", "".join(f"{n}\n" for n in bad).encode())
write("/home/user/archive/access.log.gz", gzip.compress(raw, mtime=0))
PY
SCRIPT
chmod 755 /home/user/bin/rollup.sh
bash /home/user/bin/rollup.sh
