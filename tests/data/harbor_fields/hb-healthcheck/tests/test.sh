#!/bin/bash
# The input is the healthcheck's: 3 + 4 + 5.
if [ "$(cat /app/total.txt 2>/dev/null)" = "12" ]; then
    echo 1 > /logs/verifier/reward.txt
else
    echo 0 > /logs/verifier/reward.txt
fi
