cd /app
python3 - <<'PY'
from pathlib import Path
lib = Path("src/lib.rs")
text = lib.read_text()
text = text.replace("    }\n    out\n}", "    }\n    if let Some((last, n)) = run {\n        out.push_str(&format!(\"{}{}\", last, n));\n    }\n    out\n}")
lib.write_text(text)
PY
