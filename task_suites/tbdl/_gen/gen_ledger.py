"""Write environment/data/ledger.csv for tbdl/csv_tsv_canon (exact bytes: BOM, CRLF, quoting)."""

from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "csv_tsv_canon" / "environment" / "data" / "ledger.csv"
rows = [
    'category,payee,date,amount,memo',
    'travel,"Rail, Nord",2024-03-02,+007.50,seat reservation',
    'Travel,Ærø Café,2024-03-02,2.675,"lunch with ""Oak"" team"',
    'office,Paper & Co,2024-03-04,-0.004,rounding fix',
    'office,"Smith, J.",2024-03-04,.5,"two-line memo:\r\nfirst line\r\nsecond line"',
    '_misc,Zoë\'s Bakery,2024-03-05,10.,"tab\there"',
    '10-bank,Bank fee,2024-03-06,-12.345,C:\\temp\\fees.txt',
    '9-cash,Kiosk,2024-03-06,0,',
    'équipement,Outil Pro,2024-03-07,1234567890123456789.125,"said ""ok"", left"',
    'Équipement,Outil Pro,2024-03-07,-1234567890123456789.125,refund',
    'office,Paper & Co,2024-03-08,1.005,"lf only\nmemo"',
    '"a\tb",Tabbed Ltd,2024-03-09,3.14159,tab inside category',
    'a!,Bang Inc,2024-03-09,-2.5,exclamation',
    'travel,"Rail, Nord",2024-03-02,+007.50,seat reservation',
    'office,"Quote ""Co""",2024-03-10,-00.015,',
    'travel,Taxi,2024-03-11,99.995,"night, late"',
    'office,Paper & Co,2024-03-12,+0.00,zero',
    'café,Bean,2024-03-12,4.4449,espresso',
    'cafe,Bean,2024-03-12,4.445,espresso',
]
data = "\ufeff" + "\r\n".join(rows)  # no line break after the last record
OUT.parent.mkdir(parents=True, exist_ok=True)
OUT.write_bytes(data.encode("utf-8"))
