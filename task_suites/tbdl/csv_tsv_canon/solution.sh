mkdir -p /home/user/bin /home/user/out
cat > /home/user/bin/csv2tsv <<'PY'
#!/usr/bin/env python3
"""csv2tsv INPUT OUTPUT: canonicalise an RFC 4180 CSV file into TSV, byte for byte."""
import decimal
import os
import re
import sys

AMOUNT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")
ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def fail(status, message):
    sys.stderr.write(message + "\n")
    sys.exit(status)


def records(text):
    """Yield (start offset, fields) per record; raise ValueError((offset, reason)) on bad syntax."""
    i, n = 0, len(text)
    while i < n:
        start, fields = i, []
        while True:
            if i < n and text[i] == '"':
                i += 1
                buf = []
                while True:
                    if i >= n:
                        raise ValueError(start, "unterminated quoted field")
                    if text[i] == '"':
                        if text.startswith('""', i):
                            buf.append('"')
                            i += 2
                            continue
                        i += 1
                        break
                    buf.append(text[i])
                    i += 1
                fields.append("".join(buf))
                if i < n and text[i] != "," and text[i] != "\n" and not text.startswith("\r\n", i):
                    raise ValueError(start, "unexpected quote")
            else:
                j = i
                while j < n and text[j] not in ',"\n' and not text.startswith("\r\n", j):
                    j += 1
                if j < n and text[j] == '"':
                    raise ValueError(start, "unexpected quote")
                fields.append(text[i:j])
                i = j
            if i < n and text[i] == ",":
                i += 1
                continue
            i += 2 if text.startswith("\r\n", i) else 1
            break
        yield start, fields


def amount(value):
    if not AMOUNT.fullmatch(value):
        return None
    with decimal.localcontext() as ctx:
        ctx.prec = len(value) + 10
        q = decimal.Decimal(value).quantize(decimal.Decimal("0.01"), rounding=decimal.ROUND_HALF_UP)
        if q == 0:
            q = abs(q)
        return format(q, "f")


def escape(field):
    return "".join(ESCAPES.get(c, c) for c in field)


def main():
    if len(sys.argv) != 3:
        fail(2, "usage: csv2tsv INPUT OUTPUT")
    source, target = sys.argv[1], sys.argv[2]
    try:
        with open(source, "rb") as fh:
            raw = fh.read()
    except OSError:
        fail(3, f"csv2tsv: cannot read {source}")
    text = raw.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    header, lines = None, []
    try:
        for start, fields in records(text):
            line = text.count("\n", 0, start) + 1
            if header is None:
                header = fields
                if "amount" not in header:
                    fail(4, "csv2tsv: line 1: no amount column")
                column = header.index("amount")
                continue
            if len(fields) != len(header):
                fail(4, f"csv2tsv: line {line}: expected {len(header)} fields, got {len(fields)}")
            fixed = amount(fields[column])
            if fixed is None:
                fail(5, f"csv2tsv: line {line}: invalid amount '{fields[column]}'")
            fields[column] = fixed
            lines.append("\t".join(map(escape, fields)).encode("utf-8") + b"\n")
    except ValueError as exc:
        start, reason = exc.args
        fail(4, f"csv2tsv: line {text.count(chr(10), 0, start) + 1}: {reason}")
    if header is None:
        fail(4, "csv2tsv: line 1: missing header")
    data = "\t".join(map(escape, header)).encode("utf-8") + b"\n" + b"".join(sorted(lines))
    tmp = f"{target}.csv2tsv-{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        fail(3, f"csv2tsv: cannot write {target}")


main()
PY
chmod 755 /home/user/bin/csv2tsv
/home/user/bin/csv2tsv /home/user/data/ledger.csv /home/user/out/ledger.tsv
