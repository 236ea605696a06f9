#!/bin/bash
mkdir -p /logs/verifier
if [ "$(pwd)" = /workspace/project ] && [ "$(cat /workspace/project/total.txt 2>/dev/null)" = "$EXPECTED_TOTAL" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
