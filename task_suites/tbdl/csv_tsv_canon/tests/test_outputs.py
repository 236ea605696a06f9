"""Hidden tests for csv_tsv_canon: the converted ledger, then the tool on inputs it has not seen."""

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

TOOL = "/home/user/bin/csv2tsv"
LEDGER = Path("/home/user/data/ledger.csv")
LEDGER_SHA256 = "a511f4c1b2f0c64178a0db0a564d1ce1647e921138487454c86c78da46699d0b"
LEDGER_TSV = Path("/home/user/out/ledger.tsv")
EXPECTED_LEDGER = "".join(line + "\n" for line in [
    "category\tpayee\tdate\tamount\tmemo",
    "10-bank\tBank fee\t2024-03-06\t-12.35\tC:\\\\temp\\\\fees.txt",
    "9-cash\tKiosk\t2024-03-06\t0.00\t",
    "Travel\tÆrø Café\t2024-03-02\t2.68\tlunch with \"Oak\" team",
    "_misc\tZoë's Bakery\t2024-03-05\t10.00\ttab\\there",
    "a!\tBang Inc\t2024-03-09\t-2.50\texclamation",
    "a\\tb\tTabbed Ltd\t2024-03-09\t3.14\ttab inside category",
    "cafe\tBean\t2024-03-12\t4.45\tespresso",
    "café\tBean\t2024-03-12\t4.44\tespresso",
    "office\tPaper & Co\t2024-03-04\t0.00\trounding fix",
    "office\tPaper & Co\t2024-03-08\t1.01\tlf only\\nmemo",
    "office\tPaper & Co\t2024-03-12\t0.00\tzero",
    "office\tQuote \"Co\"\t2024-03-10\t-0.02\t",
    "office\tSmith, J.\t2024-03-04\t0.50\ttwo-line memo:\\r\\nfirst line\\r\\nsecond line",
    "travel\tRail, Nord\t2024-03-02\t7.50\tseat reservation",
    "travel\tRail, Nord\t2024-03-02\t7.50\tseat reservation",
    "travel\tTaxi\t2024-03-11\t100.00\tnight, late",
    "Équipement\tOutil Pro\t2024-03-07\t-1234567890123456789.13\trefund",
    "équipement\tOutil Pro\t2024-03-07\t1234567890123456789.13\tsaid \"ok\", left",
]).encode()


def run(*args, cwd=None):
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/home/user", "LC_ALL": "C.UTF-8"}
    return subprocess.run([TOOL, *args], capture_output=True, timeout=10, env=env, cwd=cwd or "/tmp")


def convert(data: bytes) -> bytes:
    """Run the tool on DATA; it must succeed silently; return the TSV bytes."""
    assert os.access(TOOL, os.X_OK), f"{TOOL} must exist and be executable"
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp, "in.csv"), Path(tmp, "out.tsv")
        src.write_bytes(data)
        done = run(str(src), str(dst))
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b""), \
            f"expected exit 0 and no output, got {done.returncode}, {done.stdout[:200]!r}, {done.stderr[:300]!r}"
        return dst.read_bytes()


def test_ledger_converted_exactly():
    assert hashlib.sha256(LEDGER.read_bytes()).hexdigest() == LEDGER_SHA256, "the ledger must not be modified"
    assert LEDGER_TSV.is_file(), f"{LEDGER_TSV} does not exist"
    assert LEDGER_TSV.read_bytes() == EXPECTED_LEDGER
    assert convert(LEDGER.read_bytes()) == EXPECTED_LEDGER, "the tool itself must produce the ledger's TSV"


def test_bom_crlf_and_rfc4180_quoting():
    data = b'\xef\xbb\xbfname,amount,note\r\n"Smith, J.",1.00,"said ""hi"", left"\r\nplain,2,x\r\n"",3,""'
    assert convert(data) == b'name\tamount\tnote\n\t3.00\t\nSmith, J.\t1.00\tsaid "hi", left\nplain\t2.00\tx\n'
    # a BOM only counts at the very start; a last line break does not add a record; a lone CR is data
    data = b'k,amount\nx\xef\xbb\xbfy,1\nlone\rcr,2\n'
    assert convert(data) == b'k\tamount\nlone\\rcr\t2.00\nx\xef\xbb\xbfy\t1.00\n'


def test_embedded_newlines_and_escapes():
    data = (b'key,amount\n"line1\r\nline2",1\n"tab\there",2\n"back\\slash\\",3\n"lf\nonly\n",4\n'
            b'"two\n\nblank",5\nC:\\dir\\file,6')
    assert convert(data) == (b'key\tamount\n'
                             b'C:\\\\dir\\\\file\t6.00\n'
                             b'back\\\\slash\\\\\t3.00\n'
                             b'lf\\nonly\\n\t4.00\n'
                             b'line1\\r\\nline2\t1.00\n'
                             b'tab\\there\t2.00\n'
                             b'two\\n\\nblank\t5.00\n')


def test_exact_decimal_rewriting():
    cases = [
        ("+007.5", "7.50"), ("2.675", "2.68"), ("-0.004", "0.00"), (".5", "0.50"), ("10.", "10.00"),
        ("1.005", "1.01"), ("-1.005", "-1.01"), ("0.125", "0.13"), ("-0.125", "-0.13"), ("99.995", "100.00"),
        ("-0.005", "-0.01"), ("+0", "0.00"), ("-0", "0.00"), ("000", "0.00"), ("1.0049999", "1.00"),
        ("98765432109876543210.015", "98765432109876543210.02"), ("0.1", "0.10"), ("-.994", "-0.99"),
    ]
    data = "id,amount\n" + "".join(f"r{i:02d},{value}\n" for i, (value, _) in enumerate(cases))
    want = "id\tamount\n" + "".join(f"r{i:02d}\t{fixed}\n" for i, (_, fixed) in enumerate(cases))
    assert convert(data.encode()).decode() == want


def test_byte_order_sorting():
    names = ["zeta", "Zeta", "_under", "éclair", "Éclair", "eclair", "10", "9", "a\tb", "a!", "a b", "a", "ab",
             "~tilde", "Ωmega", "zeta"]
    data = "name,amount\n" + "".join(f'"{n}",1\n' for n in names)
    body = ["10", "9", "Zeta", "_under", "a", "a b", "a!", "a\\tb", "ab", "eclair", "zeta", "zeta", "~tilde",
            "Éclair", "éclair", "Ωmega"]
    assert convert(data.encode()).decode() == "name\tamount\n" + "".join(f"{n}\t1.00\n" for n in body)
    # the header stays first even when it would sort later
    assert convert(b"zz,amount\nb,1\na,2\n") == b"zz\tamount\na\t2.00\nb\t1.00\n"


def _error_case(tmp: Path, args, status: int, line: str, output: Path | None = None):
    done = run(*args)
    assert done.returncode == status, f"{args}: exit {done.returncode}, expected {status}"
    assert done.stdout == b"", f"{args}: nothing may go to stdout"
    assert done.stderr.decode(errors="replace") == line + "\n", f"{args}: stderr {done.stderr!r}, expected {line!r}"
    if output is not None:
        assert not output.exists(), f"{args}: OUTPUT must not be created on an error"


def test_usage_and_unreadable_input():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out = tmp / "out.tsv"
        _error_case(tmp, [], 2, "usage: csv2tsv INPUT OUTPUT")
        _error_case(tmp, [str(tmp / "a.csv")], 2, "usage: csv2tsv INPUT OUTPUT")
        _error_case(tmp, ["a", "b", "c"], 2, "usage: csv2tsv INPUT OUTPUT")
        _error_case(tmp, [str(tmp / "missing.csv"), str(out)], 3, f"csv2tsv: cannot read {tmp}/missing.csv", out)
        _error_case(tmp, [str(tmp), str(out)], 3, f"csv2tsv: cannot read {tmp}", out)
        (tmp / "in.csv").write_bytes(b"a,amount\nx,1\n")
        done = run("in.csv", "out.tsv", cwd=tmp)
        assert (done.returncode, done.stderr) == (0, b""), "relative paths must work"
        assert out.read_bytes() == b"a\tamount\nx\t1.00\n"


def test_malformed_input_errors():
    cases = [
        (b"", 4, "line 1: missing header"),
        (b"\xef\xbb\xbf", 4, "line 1: missing header"),
        (b"a,b\r\nx,1\r\n", 4, "line 1: no amount column"),
        (b'a,amount\nx,1\n"y,2\nz,3\n', 4, "line 3: unterminated quoted field"),
        (b'a,amount\nab"c,1\n', 4, "line 2: unexpected quote"),
        (b'a,amount\n"ab"c,1\n', 4, "line 2: unexpected quote"),
        (b'a,amount\n"ab"\rc,1\n', 4, "line 2: unexpected quote"),
        (b'a,amount,n\n"two\nlines",1,x\nshort,2\n', 4, "line 4: expected 3 fields, got 2"),
        (b'a,amount\nx,1\n\ny,2\n', 4, "line 3: expected 2 fields, got 1"),
        (b'a,amount\nx,1,extra\n', 4, "line 2: expected 2 fields, got 3"),
        (b'a,amount\n"multi\r\nline",1\nx,"1,5"\n', 5, "line 4: invalid amount '1,5'"),
        (b"a,amount\nx,1\ny,12e3\n", 5, "line 3: invalid amount '12e3'"),
        (b"a,amount\nx,\n", 5, "line 2: invalid amount ''"),
        (b"a,amount\nx,--1\n", 5, "line 2: invalid amount '--1'"),
        (b"a,amount\nx, 1\n", 5, "line 2: invalid amount ' 1'"),
        (b'a,amount\nx,1\ny,bad\nz,"3\n', 5, "line 3: invalid amount 'bad'"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for index, (data, status, message) in enumerate(cases):
            src, out = tmp / f"case{index}.csv", tmp / f"case{index}.tsv"
            src.write_bytes(data)
            _error_case(tmp, [str(src), str(out)], status, f"csv2tsv: {message}", out)
        # an existing OUTPUT is left as it was
        out = tmp / "kept.tsv"
        out.write_bytes(b"old\n")
        _error_case(tmp, [str(tmp / "case4.csv"), str(out)], 4, "csv2tsv: line 2: unexpected quote")
        assert out.read_bytes() == b"old\n", "an existing OUTPUT must not change on an error"
