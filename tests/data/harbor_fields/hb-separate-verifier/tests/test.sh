#!/bin/bash
# What the verifier's environment holds of the agent's: the artifacts alone.
echo "in /app: $(ls -A /app | tr '\n' ' ')"
if [ "$(tr -d ' \n' < /app/report.txt 2>/dev/null)" = "3" ]; then
    echo 1 > /logs/verifier/reward.txt
else
    echo 0 > /logs/verifier/reward.txt
fi
