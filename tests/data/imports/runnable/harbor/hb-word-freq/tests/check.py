import collections
import re
import sys
from pathlib import Path

poem = Path("/app/poem.txt")
freq = Path("/app/freq.txt")
if not poem.is_file() or not freq.is_file():
    print("missing poem.txt or freq.txt")
    sys.exit(1)
words = re.findall(r"[A-Za-z]+", poem.read_text().lower())
expected = [f"{w} {c}" for w, c in sorted(collections.Counter(words).items(), key=lambda kv: (-kv[1], kv[0]))]
got = freq.read_text().splitlines()
print("expected", expected[:3], "got", got[:3])
sys.exit(0 if got == expected else 1)
