#!/bin/bash
# Offline grader: pytest from the image, a JSON reward with the pass fraction.
mkdir -p /logs/verifier
cd /app
pytest -q -p no:cacheprovider /tests/test_outputs.py > /logs/verifier/pytest.txt 2>&1
status=$?
python3 - "$status" <<'PY'
import json, re, sys
status = int(sys.argv[1])
text = open("/logs/verifier/pytest.txt").read()
passed = int((re.search(r"(\d+) passed", text) or [0, 0])[1])
failed = int((re.search(r"(\d+) failed", text) or [0, 0])[1])
total = passed + failed or 1
json.dump({"reward": 1.0 if status == 0 else round(passed / total, 3), "passed": passed, "failed": failed},
          open("/logs/verifier/reward.json", "w"))
PY
cat /logs/verifier/pytest.txt
