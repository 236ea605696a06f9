"""Generate environment/logs/access.log for tbdl/weblog_rollup (deterministic)."""

import random
import sys
from pathlib import Path

rng = random.Random(20240312)
OUT = Path(__file__).resolve().parents[1] / "weblog_rollup" / "environment" / "logs" / "access.log"

CLIENTS = ["203.0.113.7", "198.51.100.23", "192.0.2.44", "203.0.113.91", "198.51.100.5", "2001:db8::17"]
USERS = ["-", "-", "-", "alice", "bob"]
ENDPOINTS = [
    ("GET", "/", ["", ""]),
    ("GET", "/api/items", ["", "?page=2", "?page=3&sort=price", "?q=lamp"]),
    ("POST", "/api/cart", ["", "?session=abc"]),
    ("GET", "/static/app.js", ["", "?v=1.4.2"]),
    ("GET", "/search", ["?q=lamp", "?q=desk+lamp", "?q=%22oak%22"]),
    ("POST", "/login", [""]),
]
UAS = [
    "Mozilla/5.0 (X11; Linux x86_64) Firefox/124.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_3) Safari/605.1.15",
    "curl/8.6.0",
    'Mozilla/5.0 (compatible; "SiteAudit" 2.1; +https://audit.example/bot)',
    'PartnerSync/3.2 (build \\"nightly\\")',
    "Tool\\Win32 v1.0\\",
]
REFS = ["-", "https://shop.example/", "https://shop.example/search?q=lamp", 'https://ref.example/?tag="spring"']


def esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def line(i: int) -> str:
    method, path, queries = rng.choice(ENDPOINTS)
    target = path + rng.choice(queries)
    minute, second = divmod(i * 13, 60)
    hour, minute = divmod(minute, 60)
    time = f"12/Mar/2024:{10 + hour:02d}:{minute:02d}:{second:02d} +0000"
    status = rng.choices([200, 200, 200, 304, 404, 500, 201, 302], k=1)[0]
    if method == "POST" and status == 304:
        status = 201
    size = "-" if status == 304 or rng.random() < 0.04 else str(rng.randint(0, 48000))
    base = {"/": 40, "/api/items": 120, "/api/cart": 210, "/static/app.js": 8, "/search": 300, "/login": 95}[path]
    ms = max(1, int(rng.gauss(base, base / 3)))
    if rng.random() < 0.08:
        # slow outliers; float(rt) * 1000 truncates each of these one millisecond low
        ms = rng.choice([1001, 1003, 1009, 1017, 1023, 2006, 2014, 2030])
    rt = f"{ms // 1000}.{ms % 1000:03d}"
    ua = rng.choices(UAS, weights=[30, 20, 12, 10, 8, 5], k=1)[0]
    ref = rng.choice(REFS)
    return (f'{rng.choice(CLIENTS)} - {rng.choice(USERS)} [{time}] "{esc(method + " " + target + " HTTP/1.1")}" '
            f'{status} {size} "{esc(ref)}" "{esc(ua)}" {rt}')


lines = [line(i) for i in range(236)]
# A request whose target holds an escaped quote.
lines[17] = ('198.51.100.23 - - [12/Mar/2024:10:03:41 +0000] "GET /search?q=\\"oak desk\\" HTTP/1.1" 200 1822 '
             '"-" "Mozilla/5.0 (X11; Linux x86_64) Firefox/124.0" 0.310')
damaged = {
    # truncated mid user-agent (the writer died)
    41: lines[41][: lines[41].index('" "') + 14],
    # bad status
    63: '192.0.2.44 - - [12/Mar/2024:10:13:39 +0000] "GET /api/items HTTP/1.1" 2OO 512 "-" "curl/8.6.0" 0.101',
    # TLS handshake against the HTTP port
    88: '203.0.113.91 - - [12/Mar/2024:10:19:04 +0000] "\\x16\\x03\\x01\\x00\\xc8\\x01" 400 157 "-" "-" 0.001',
    # blank line
    104: "",
    # old format without the request time
    131: '198.51.100.5 - - [12/Mar/2024:10:28:23 +0000] "GET / HTTP/1.1" 200 3120 "-" "curl/8.6.0"',
    # an unescaped quote inside the user agent
    152: '203.0.113.7 - - [12/Mar/2024:10:32:56 +0000] "GET /api/items HTTP/1.1" 200 812 "-" "Mozilla/5.0 "broken" UA" 0.132',
    # request without a protocol
    177: '192.0.2.44 - - [12/Mar/2024:10:38:21 +0000] "GET /api/items" 200 812 "-" "curl/8.6.0" 0.118',
    # request time with two decimals
    203: '198.51.100.23 - bob [12/Mar/2024:10:43:59 +0000] "POST /login HTTP/1.1" 302 0 "-" "curl/8.6.0" 0.09',
    # two log lines glued together
    219: lines[219] + lines[220],
}
for index, text in damaged.items():
    lines[index] = text
OUT.parent.mkdir(parents=True, exist_ok=True)
OUT.write_text("".join(l + "\n" for l in lines))
print(f"wrote {OUT} ({len(lines)} lines)", file=sys.stderr)
