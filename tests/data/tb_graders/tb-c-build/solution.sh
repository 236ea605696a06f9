cd /app
python3 - <<'PY'
from pathlib import Path
path = Path("/app/wc.c")
text = path.read_text()
text = text.replace("            in_word = 1;\n            words++;", "            if (!in_word)\n                words++;\n            in_word = 1;")
path.write_text(text)
PY
