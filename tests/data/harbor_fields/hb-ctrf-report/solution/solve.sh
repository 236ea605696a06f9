#!/bin/bash
cat > /app/total.py <<'PY'
from pathlib import Path

lines = Path("/app/numbers.txt").read_text().split()
print(sum(int(word) for word in lines))
PY
