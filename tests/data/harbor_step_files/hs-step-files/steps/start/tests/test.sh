#!/bin/bash
# Step start's checks: the report folder and its status.
if [ "$(cat /app/report/status.txt 2>/dev/null)" = "ready" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
